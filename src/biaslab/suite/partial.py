"""A suite stopped part way, and the same command finishing it.

Ctrl-C (or SIGTERM, turned into the same path while the suite runs) stops the suite between two answers: every
probe run finished by then is already written to ``runs/<model>/<probe>/``, and the suite writes results.json
(``"partial": true`` and the ``missing`` runs) and a card saying it is partial, then exits 130 (143 for SIGTERM)
with one line. The run under way is not written; its answers are in the response cache. The same command again
finds the partial suite of the same settings in ``--out`` (one of other settings is refused as a finished one is),
reuses every finished run and runs the missing ones.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from biaslab.errors import ConfigError, Interrupted
from biaslab.probing.schema import RunResults

SIGTERM_EXIT = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM while a suite runs: raised where Ctrl-C raises KeyboardInterrupt, so that both stop it alike."""


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread; left alone where SIGTERM is
    handled already (an embedding program) or outside the main thread (where no handler can be set)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def finished_run(run_dir: Path) -> RunResults | None:
    """The run in ``run_dir`` when its folder reads cleanly (results.json, and attempts.jsonl with every attempt
    once), else None: a missing or damaged run is run again (from the cache) and rewritten, never reused."""
    from biaslab.errors import DataError
    from biaslab.probing.results import read_attempts, read_results

    if not (run_dir / "results.json").is_file():
        return None
    try:
        results = read_results(run_dir)
        if read_attempts(run_dir, results.recorded_attempts) is None:
            return None
    except DataError:
        return None
    return results


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def previous_runs(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The runs of the suite in ``out`` (finished or partial) by (model, probe): each with the key it was run with."""
    old = _read(out / "results.json")
    try:
        return {(r["model"], r["probe"]): r for r in old.get("runs", []) if r.get("key")}
    except (AttributeError, KeyError, TypeError):
        return {}


def refuse_other_suite(out: Path, settings: dict[str, Any]) -> None:
    """A ConfigError when ``out`` holds a finished run, or a finished or partial suite with other ``settings`` (its
    models, probes and limit), naming what differs: a suite replaces neither without ``--overwrite``. The same
    suite again reuses its runs (and finishes a partial one)."""
    from biaslab.app.execute import settings_differences

    path = out / "results.json"
    if not path.is_file():
        return
    earlier = _read(path)
    if not isinstance(earlier, dict) or not isinstance(earlier.get("runs"), list):
        probe = earlier.get("probe") if isinstance(earlier, dict) else None
        what = f"a finished run ({probe})" if probe else "a results.json that is not a suite's"
        raise ConfigError(f"--out {out} already holds {what}; give another --out, or add --overwrite to replace it")
    differ = settings_differences({k: earlier.get(k) for k in settings}, settings)
    if differ:
        what = "a partial suite (stopped before its end)" if earlier.get("partial") else "a finished suite"
        raise ConfigError(
            f"--out {out} already holds {what} with other settings ({'; '.join(differ)}); "
            "give another --out, or add --overwrite to replace it"
        )


def check_baseline(baseline: Path) -> None:
    """A one-line error, before any model runs, when ``baseline`` is not a readable suite folder (its runs'
    results and attempts read and checked as the gate will read them), or is a partial suite."""
    from biaslab.gate.sources import load_side

    side = load_side(baseline, role="baseline")
    if side.kind != "suite":
        raise ConfigError(f"--baseline {baseline} is a run folder; give a suite folder (`biaslab suite --out`)")
    earlier = _read(Path(baseline) / "results.json")
    if isinstance(earlier, dict) and earlier.get("partial"):
        raise ConfigError(
            f"--baseline {baseline} is a partial suite ({progress_text(earlier)}); finish it first by running "
            "its command again"
        )
    for run in side.runs.values():
        run.attempts()


def missing_runs(models: list[str], probes: list[str], runs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The (model, probe) runs of the suite not in ``runs``, in the suite's order."""
    done = {(r["model"], r["probe"]) for r in runs}
    return [{"model": m, "probe": p} for m in models for p in probes if (m, p) not in done]


def progress_text(suite: dict[str, Any]) -> str:
    """``"5 of 11 probe runs finished"``."""
    finished = len(suite.get("runs") or [])
    return f"{finished} of {finished + len(suite.get('missing') or [])} probe runs finished"


def mark_partial(suite: dict[str, Any], models: list[str], probes: list[str], gated: bool) -> None:
    """Mark ``suite`` partial: which runs are missing, and (``gated``: a ``--baseline`` given) why it is not gated."""
    suite["partial"] = True
    suite["missing"] = missing_runs(models, probes, suite["runs"])
    if gated:
        suite["gates_skipped"] = (
            f"Not gated against the baseline: the suite is partial ({progress_text(suite)}); run the same "
            "command again to finish it and gate it."
        )


def stopped(suite: dict[str, Any], out: Path, stop: KeyboardInterrupt) -> Interrupted:
    """The one-line error a stopped suite exits with, after its partial card is written."""
    how = "terminated (SIGTERM)" if isinstance(stop, Terminated) else "stopped"
    return Interrupted(
        f"suite {how} with {progress_text(suite)}; wrote a partial card to {out / 'report.html'}; "
        "run the same command again to finish it (finished runs are reused)",
        exit_code=SIGTERM_EXIT if isinstance(stop, Terminated) else 130,
    )
