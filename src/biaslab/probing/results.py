"""A run's files: ``results.json`` (:class:`~biaslab.probing.schema.RunResults`), ``attempts.jsonl`` (one
:class:`~biaslab.probing.schema.AttemptRecord` a line), the probe's further files and ``report.html``.

Every file is validated against its schema, written to a temporary name in the same directory and renamed
into place, so a crash never leaves a half-written file and a failed run never replaces earlier results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaslab import __version__
from biaslab.io import all_or_nothing, atomic_write_text, json_safe
from biaslab.probing.schema import (
    SCHEMA_VERSION,
    RunResults,
    read_attempts,
    read_results,
    validate_attempt,
    validate_results,
)

if TYPE_CHECKING:
    from biaslab.probing.core import Attempt, Probe

__all__ = ["build_results", "read_attempts", "read_results", "write_jsonl", "write_results", "write_run"]


def build_results(
    *,
    probe: str,
    probe_version: str,
    model: Mapping[str, Any],
    parameters: Mapping[str, Any],
    data: Mapping[str, str],
    metrics: Mapping[str, Mapping[str, Any]],
    n_items: int,
    n_attempts: int,
    run: Mapping[str, Any] | None = None,
    manifest: Mapping[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> RunResults:
    """A run's results, validated (NaN and numpy values made JSON-safe first)."""
    raw = json_safe(
        {
            "schema_version": SCHEMA_VERSION,
            "probe": probe,
            "probe_version": probe_version,
            "model": model,
            "parameters": parameters,
            "data": data,
            "biaslab_version": __version__,
            "metrics": metrics,
            "n_items": n_items,
            "n_attempts": n_attempts,
            "run": run or {},
            "manifest": manifest or {},
            "details": details or {},
        }
    )
    return validate_results(raw, f"the {probe} run's results")


def write_results(out_dir: Path, results: RunResults) -> Path:
    path = Path(out_dir) / "results.json"
    atomic_write_text(path, json.dumps(results.to_json(), indent=2, ensure_ascii=False) + "\n")
    return path


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    return _write_lines(path, (json_safe(r) for r in rows))


def _write_lines(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    atomic_write_text(Path(path), "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return Path(path)


def write_run(out_dir: Path, probe: Probe, results: RunResults, attempts: list[Attempt]) -> list[Path]:
    """Write every output file of a run (only called once the run has fully succeeded): all of them, or, when one
    cannot be written, none (the files of an earlier run stay as they were)."""
    from biaslab.report.html import write_report

    out_dir = Path(out_dir)
    rows = [json_safe(a.to_json()) for a in attempts]
    for n, row in enumerate(rows, start=1):
        validate_attempt(row, f"attempt {n} of the {probe.name} run")
    with all_or_nothing():
        paths = [_write_lines(out_dir / "attempts.jsonl", rows)]
        paths += probe.write_extra(out_dir, attempts, results)
        paths.append(write_results(out_dir, results))
        paths.append(write_report(out_dir, results, rows, probe))
    return paths
