"""A Rich progress bar for model calls: attempts done/total, cache hits, and tokens/s for
generations (requests/s for log-likelihood scoring, which generates no tokens).

Backends that work in the background of a run (the providers' batch APIs) report through
:func:`status` (a short line shown beside the open bar, e.g. the batches' states) and :func:`note`
(a message printed above it, or on stderr when no bar is open); neither needs to know the bar.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

_OPEN: list[AttemptProgress] = []  # the bars open now, innermost last
_LOCK = threading.Lock()


class AttemptProgress:
    def __init__(self, progress: Progress, task: Any, description: str = ""):
        self.progress, self.task = progress, task
        self.description = description
        self.hits = 0
        self.new_tokens = 0
        self.answered = 0
        self.started = time.monotonic()

    def __call__(self, index: int, result: Any, from_cache: bool) -> None:
        if from_cache:
            self.hits += 1
        else:
            self.answered += 1
            self.new_tokens += getattr(result, "n_new_tokens", None) or 0
        elapsed = max(time.monotonic() - self.started, 1e-6)
        self.progress.update(
            self.task, advance=1, hits=self.hits, tps=self.new_tokens / elapsed, rps=self.answered / elapsed
        )

    def set_status(self, text: str) -> None:
        self.progress.update(self.task, status=f" · {text}" if text else "")


def current_run() -> str | None:
    """The description of the innermost open bar (``"jobs-lum on openai/gpt-4o-mini"``), or None."""
    with _LOCK:
        return _OPEN[-1].description if _OPEN else None


def status(text: str) -> None:
    """Show ``text`` beside the innermost open bar (nothing when none is open)."""
    with _LOCK:
        bar = _OPEN[-1] if _OPEN else None
    if bar is not None:
        bar.set_status(text)


def note(text: str) -> None:
    """Print ``text`` above the open bar, or on stderr when there is none."""
    with _LOCK:
        bar = _OPEN[-1] if _OPEN else None
    if bar is not None and not bar.progress.disable:
        bar.progress.console.print(text, markup=False, highlight=False)
    else:
        print(text, file=sys.stderr, flush=True)


@contextmanager
def attempt_progress(
    total: int, description: str, console: Console | None = None, enabled: bool = True, generates: bool = True
) -> Iterator[AttemptProgress]:
    """The bar; ``generates=False`` (log-likelihood requests only) shows requests/s, not tokens/s."""
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("cache hits {task.fields[hits]}"),
        TextColumn("{task.fields[tps]:.0f} tok/s" if generates else "{task.fields[rps]:.1f} req/s"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[status]}", markup=False),
        console=console or Console(stderr=True),
        disable=not enabled,
        transient=False,
    )
    with progress:
        task = progress.add_task(description, total=total, hits=0, tps=0.0, rps=0.0, status="")
        bar = AttemptProgress(progress, task, description)
        with _LOCK:
            _OPEN.append(bar)
        try:
            yield bar
        finally:
            with _LOCK:
                _OPEN.remove(bar)
