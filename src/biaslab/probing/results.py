"""The versioned results schema and atomic writers.

``results.json`` (schema_version 1)::

    {"schema_version": 1, "probe": NAME, "probe_version": V, "model": {...},
     "parameters": {...}, "data": {file: sha256}, "biaslab_version": V,
     "metrics": {NAME: {"value": x, "ci_low": lo, "ci_high": hi, ["p": p, "q": q]}},
     "n_items": N, "n_attempts": N, "manifest": {command, created_at, versions, decoding}, ...extra}

(the manifest: :mod:`biaslab.probing.manifest`).

Every file is written to a temporary name in the same directory and renamed into place, so a
crash never leaves a half-written file and a failed run never replaces earlier results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from biaslab import __version__
from biaslab.io import atomic_write_text, json_safe

SCHEMA_VERSION = 1


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
    **extra: Any,
) -> dict[str, Any]:
    results = {
        "schema_version": SCHEMA_VERSION,
        "probe": probe,
        "probe_version": probe_version,
        "model": dict(model),
        "parameters": dict(parameters),
        "data": dict(data),
        "biaslab_version": __version__,
        "metrics": {k: dict(v) for k, v in metrics.items()},
        "n_items": n_items,
        "n_attempts": n_attempts,
    }
    results.update(extra)
    return json_safe(results)


def write_results(out_dir: Path, results: Mapping[str, Any]) -> Path:
    path = Path(out_dir) / "results.json"
    atomic_write_text(path, json.dumps(json_safe(results), indent=2, ensure_ascii=False) + "\n")
    return path


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    text = "".join(json.dumps(json_safe(r), ensure_ascii=False) + "\n" for r in rows)
    atomic_write_text(Path(path), text)
    return Path(path)


def read_results(path: Path) -> dict[str, Any]:
    from biaslab.errors import DataError

    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path} does not exist; pass a run directory written by `biaslab run`") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON (line {exc.lineno}); re-run the probe to rewrite it") from None
    if results.get("schema_version") != SCHEMA_VERSION:
        raise DataError(f"{path} has schema_version {results.get('schema_version')!r}; "
                        f"this biaslab reads {SCHEMA_VERSION}")
    return results
