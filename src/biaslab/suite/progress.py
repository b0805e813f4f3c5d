"""A suite's progress: before it starts, one line with how many probe runs (probes x models) and requests it
holds; while it runs (not under ``--quiet``), which run is under way ("probe 3/11: jobs-lum on smollm2"), the
time elapsed and an ETA for the whole suite.

On a terminal that is one live line above each run's own bar (:func:`biaslab.progress.attempt_progress`); where
the output is not a terminal (or Rich cannot show a bar inside another), a plain line as each run starts.

The ETA: the requests left times the seconds a model call has taken so far in this suite, once it has made a few;
until then the calibration's ``estimates`` (seconds per probe run, by probe) where every run left has one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

MIN_CALLS = 5  # model calls before the rate observed replaces the estimates


@dataclass
class PlannedRun:
    model: str
    probe: str
    requests: int  # its planned requests (plan_run), answered from the cache or by the model
    done_before: bool = False  # a run of it is in --out already: most likely reused, no request to wait for


def count_requests(probe: Any, limit: int) -> int:
    """The requests of a run of ``probe`` at ``limit`` items (its items are loaded once and kept by the probe)."""
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import plan_run

    cfg = RunConfig(limit=limit)
    return len(plan_run(probe, probe.select_items(probe.load_items(), cfg), cfg))


def clock(seconds: float) -> str:
    s = max(0, int(round(seconds)))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


class SuiteProgress:
    """The suite's runs in order, the one under way and the answers so far; shown by :meth:`shown`."""

    def __init__(
        self,
        planned: list[PlannedRun],
        estimates: dict[str, float] | None = None,
        console: Console | None = None,
        enabled: bool = True,
    ):
        self.planned, self.estimates = planned, dict(estimates or {})
        self.console, self.enabled = console or Console(stderr=True), enabled
        self.started = time.monotonic()
        self.index = -1  # the run under way
        self.answered = 0  # its requests answered so far
        self.calls = 0  # model calls of the suite so far (cache hits not counted)
        self.busy = 0.0  # seconds spent in the runs before the current one that were run (not reused)
        self.run_started: float | None = None
        self.progress: Progress | None = None
        self.task: Any = None

    def summary(self) -> str:
        """The line before the suite starts: ``"suite: 22 probe runs (11 probes x 2 models), 4,400 requests"``."""
        models = len(dict.fromkeys(r.model for r in self.planned))
        probes = len(dict.fromkeys(r.probe for r in self.planned))
        line = (
            f"suite: {_count(len(self.planned), 'probe run')} ({_count(probes, 'probe')} x {_count(models, 'model')}), "
            f"{_count(sum(r.requests for r in self.planned), 'request')}"
        )
        earlier = sum(r.done_before for r in self.planned)
        return line + (f"; {earlier} finished in --out earlier, reused unless changed" if earlier else "")

    def seconds_per_call(self) -> float | None:
        """Seconds per model call so far: the time spent in the runs that were run, over their model calls.

        Only model calls are counted: an answer from the cache takes next to no time, so the time of a run
        answered from the cache falls on its few calls. The requests left are all counted as calls (whether
        the cache holds them is not known before they are asked), so the ETA errs long on a resumed suite."""
        if self.calls < MIN_CALLS:
            return None
        busy = self.busy + (time.monotonic() - self.run_started if self.run_started is not None else 0.0)
        return busy / self.calls

    def eta(self) -> tuple[float | None, bool]:
        """Seconds left for the whole suite, and whether they are the calibration's estimate (None: not known yet)."""
        current = self.planned[self.index] if 0 <= self.index < len(self.planned) else None
        left_now = max(current.requests - self.answered, 0) if current and self.run_started is not None else 0
        later = [r for r in self.planned[self.index + 1 :] if not r.done_before]
        rate = self.seconds_per_call()
        if rate is not None:
            return rate * (left_now + sum(r.requests for r in later)), False
        runs_left = ([current] if current and left_now else []) + later
        if not runs_left:
            return 0.0, False
        if all(r.probe in self.estimates for r in runs_left):  # until the first model calls: the calibration
            seconds = sum(self.estimates[r.probe] for r in later)
            if current and left_now:
                seconds += self.estimates[current.probe] * left_now / max(current.requests, 1)
            return seconds, True
        return None, False

    def eta_text(self) -> str:
        seconds, estimated = self.eta()
        if seconds is None:
            return "suite ETA: known after a few model calls"
        return f"suite ETA {clock(seconds)}" + (" (estimated)" if estimated else "")

    def describe(self) -> str:
        r = self.planned[self.index]
        return f"probe {self.index + 1}/{len(self.planned)}: {r.probe} on {r.model}"

    def start_run(self, index: int, reused: bool) -> None:
        """Run ``index`` of the plan starts (``reused``: an earlier suite's run, taken as it is)."""
        self.index, self.answered = index, 0
        self.run_started = None if reused else time.monotonic()
        if not self.enabled:
            return
        if self.progress is not None:
            self.progress.update(self.task, description=escape(self.describe()))
        elif reused:
            self.console.print(escape(f"{self.describe()}: finished earlier, reused"), highlight=False, soft_wrap=True)
        else:
            elapsed = clock(time.monotonic() - self.started)
            line = f"{self.describe()} · elapsed {elapsed} · {self.eta_text()}"
            self.console.print(escape(line), highlight=False, soft_wrap=True)

    def answer(self, index: int, result: Any, from_cache: bool) -> None:
        """A request of the current run answered (the runner's progress callback)."""
        self.answered += 1
        if not from_cache:
            self.calls += 1
        if self.progress is not None:
            self.progress.update(self.task, advance=1)

    def finish_run(self) -> None:
        if self.run_started is not None:
            self.busy += time.monotonic() - self.run_started
            self.run_started = None
        if self.progress is not None:
            done = sum(r.requests for r in self.planned[: self.index + 1])
            self.progress.update(self.task, completed=done)

    @contextmanager
    def shown(self) -> Iterator[SuiteProgress]:
        """The live line while the block runs (on a terminal, unless disabled); plain lines otherwise."""
        # a Live inside another (each run's bar below this line) needs Rich 14.1 or later, whose Console keeps
        # a stack of them; with an older Rich, or off a terminal, plain lines as each run starts
        live = self.enabled and self.console.is_terminal and hasattr(self.console, "_live_stack")
        if not live:
            yield self
            return
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("requests"),
            TimeElapsedColumn(),
            _Column(self.eta_text),
            console=self.console,
            transient=True,
        )
        with progress:
            self.progress = progress
            self.task = progress.add_task("starting", total=sum(r.requests for r in self.planned))
            try:
                yield self
            finally:
                self.progress = None


class _Column(ProgressColumn):
    """A column whose text is computed at each refresh (the ETA counts down between answers)."""

    def __init__(self, text: Callable[[], str]):
        super().__init__()
        self.text = text

    def render(self, task: Task) -> Text:
        return Text(self.text())
