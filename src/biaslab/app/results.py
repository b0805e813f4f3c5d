"""A run's files written together: ``attempts.jsonl``, the probe's further files, ``results.json`` and
``report.html`` (rendered from the results and the probe that made them); and a finished run's report rendered
again from its files (``biaslab report DIR``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from biaslab.app.resolve import resolve_probe
from biaslab.errors import DataError
from biaslab.io import all_or_nothing, json_safe
from biaslab.probing.results import read_attempts, read_results, write_lines, write_results
from biaslab.probing.schema import RunResults, validate_attempt
from biaslab.report.html import write_report

if TYPE_CHECKING:
    from biaslab.probing.core import Attempt, Probe


def write_run(out_dir: Path, probe: Probe, results: RunResults, attempts: list[Attempt]) -> list[Path]:
    """Write every output file of a run (only called once the run has fully succeeded): all of them, or, when one
    cannot be written, none (the files of an earlier run stay as they were)."""
    out_dir = Path(out_dir)
    rows = [json_safe(a.to_json()) for a in attempts]
    for n, row in enumerate(rows, start=1):
        validate_attempt(row, f"attempt {n} of the {probe.name} run")
    with all_or_nothing():
        paths = [write_lines(out_dir / "attempts.jsonl", rows)]
        paths += probe.write_extra(out_dir, attempts, results)
        paths.append(write_results(out_dir, results))
        paths.append(write_report(out_dir, results, rows, probe))
    return paths


def rebuild_report(run_dir: Path) -> Path:
    """Re-render report.html of a finished run from results.json + attempts.jsonl, with the probe its results name
    (looked up once)."""
    run_dir = Path(run_dir)
    results = read_results(run_dir)
    rows = read_attempts(run_dir, results.recorded_attempts)
    if rows is None:
        raise DataError(f"{run_dir / 'attempts.jsonl'} is missing; re-run the probe to write it")
    return write_report(run_dir, results, rows, resolve_probe(results.probe).build())
