"""A run's result files: ``results.json`` (:class:`~biaslab.probing.schema.RunResults`) and ``attempts.jsonl`` (one
:class:`~biaslab.probing.schema.AttemptRecord` a line): built, validated, written and read.

Every file is validated against its schema, written to a temporary name in the same directory and renamed
into place, so a crash never leaves a half-written file. A whole run's files (these, the probe's further files and
the report) are written together by :func:`biaslab.app.results.write_run`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from biaslab import __version__
from biaslab.io import atomic_write_text, json_safe
from biaslab.probing.file_probe.registry import register_results
from biaslab.probing.schema import SCHEMA_VERSION, RunResults, read_attempts, validate_results
from biaslab.probing.schema import read_results as read_results_file

__all__ = ["build_results", "read_attempts", "read_results", "write_jsonl", "write_lines", "write_results"]


def read_results(path: Path) -> RunResults:
    """results.json of a run directory (or the file itself), validated; a run of a probe from a YAML file makes
    that probe known by its recorded name, from the file's text the run keeps."""
    results = read_results_file(path)
    if results.probe.startswith("file:"):
        register_results(results)
    return results


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
    return write_lines(path, (json_safe(r) for r in rows))


def write_lines(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """``rows`` (JSON-safe already) one JSON object a line, written atomically."""
    atomic_write_text(Path(path), "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return Path(path)
