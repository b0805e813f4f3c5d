"""Bootstrap confidence intervals over probe items.

Items are the resampling unit. A metric function receives a table (dict of equal-length
numpy arrays, one row per item) and returns ``{metric name: value}``; the bootstrap
resamples rows with replacement and takes percentile intervals. Local RNG only.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping

import numpy as np

Table = Mapping[str, np.ndarray]
MetricFn = Callable[[Table], Mapping[str, float]]


def _take(table: Table, idx: np.ndarray) -> dict[str, np.ndarray]:
    return {k: np.asarray(v)[idx] for k, v in table.items()}


def bootstrap_metrics(
    table: Table,
    fn: MetricFn,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, dict[str, float | None]]:
    """Point estimate and percentile CI of every metric ``fn`` returns.

    Returns ``{name: {"value": x, "ci_low": lo, "ci_high": hi}}``. Undefined values are
    ``None`` (NaN in a resample is skipped; if most resamples are undefined the CI is None).
    """
    n = len(next(iter(table.values()))) if table else 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = dict(fn(table))
        rng = np.random.default_rng(seed)
        samples: dict[str, list[float]] = {name: [] for name in point}
        if n > 0:
            for _ in range(n_resamples):
                idx = rng.integers(0, n, size=n)
                for name, value in fn(_take(table, idx)).items():
                    if name in samples:
                        samples[name].append(value)
    alpha = (1 - confidence) / 2
    out: dict[str, dict[str, float | None]] = {}
    for name, value in point.items():
        arr = np.asarray(samples[name], dtype=float)
        arr = arr[np.isfinite(arr)]
        ok = value is not None and math.isfinite(value) and arr.size >= max(10, n_resamples // 2)
        out[name] = {
            "value": _clean(value),
            "ci_low": float(np.quantile(arr, alpha)) if ok else None,
            "ci_high": float(np.quantile(arr, 1 - alpha)) if ok else None,
        }
    return out


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
