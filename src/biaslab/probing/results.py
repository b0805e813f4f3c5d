"""The versioned results schema and atomic writers.

``results.json`` (schema_version 1)::

    {"schema_version": 1, "probe": NAME, "probe_version": V, "model": {...},
     "parameters": {...}, "data": {file: sha256}, "biaslab_version": V,
     "metrics": {NAME: {"value": x, "ci_low": lo, "ci_high": hi, ["p": p, "q": q]}},
     "n_items": N, "n_attempts": N, ...extra}

Every file is written to a temporary name in the same directory and renamed into place, so a
crash never leaves a half-written file and a failed run never replaces earlier results.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

from biaslab import __version__

SCHEMA_VERSION = 1


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path``, fsync, then rename over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, _umask_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def json_safe(obj: Any) -> Any:
    """Replace NaN/inf by None, numpy scalars by Python ones, recursively."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


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
        raise DataError(f"{path} has schema_version {results.get('schema_version')!r}; this biaslab reads {SCHEMA_VERSION}")
    return results
