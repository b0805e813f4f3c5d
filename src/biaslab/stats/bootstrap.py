"""Bootstrap confidence intervals over probe items.

Items are the resampling unit. A metric function receives a table (dict of equal-length
numpy arrays, one row per item) and returns ``{metric name: value}``; the bootstrap
resamples rows with replacement and takes percentile intervals. Local RNG only. Where the
percentile interval collapses (a rate of 0 or 1, a value resting on one item) it is replaced as
:func:`biaslab.stats.intervals.honest_interval` says, and every metric carries ``n``, the items.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from biaslab.stats.intervals import honest_interval

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
    proportions: Collection[str] = (),
) -> dict[str, dict[str, Any]]:
    """Point estimate and percentile CI of every metric ``fn`` returns.

    Returns ``{name: {"value": x, "ci_low": lo, "ci_high": hi, "n": items[, "too_small", "interval"]}}``.
    Undefined values are ``None`` (NaN in a resample is skipped; if most resamples are undefined
    the CI is None). ``fn`` may return ``{name: (value, n)}`` for a metric over fewer units than
    the table's rows (a bin, a group): its ``n`` is then that count. ``proportions`` names the
    metrics that are rates in [0, 1]: a collapsed interval at 0 or 1 becomes an exact one; any
    other collapsed interval is dropped (``degenerate``).
    """
    n = len(next(iter(table.values()))) if table else 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point, units = _split(fn(table), n)
        rng = np.random.default_rng(seed)
        samples: dict[str, list[float]] = {name: [] for name in point}
        if n > 0:
            for _ in range(n_resamples):
                idx = rng.integers(0, n, size=n)
                for name, value in _split(fn(_take(table, idx)), n)[0].items():
                    if name in samples:
                        samples[name].append(value)
    alpha = (1 - confidence) / 2
    out: dict[str, dict[str, Any]] = {}
    for name, value in point.items():
        arr = np.asarray(samples[name], dtype=float)
        arr = arr[np.isfinite(arr)]
        ok = value is not None and math.isfinite(value) and arr.size >= max(10, n_resamples // 2)
        out[name] = honest_interval(
            _clean(value),
            float(np.quantile(arr, alpha)) if ok else None,
            float(np.quantile(arr, 1 - alpha)) if ok else None,
            n=units[name],
            scale=1.0 if name in proportions else None,
            confidence=confidence,
        )
    return out


def _split(values: Mapping[str, float | tuple[float, int]], n: int) -> tuple[dict[str, float], dict[str, int]]:
    """``({name: value}, {name: units})`` from a metric function's output (values or (value, n) pairs)."""
    point, units = {}, {}
    for name, v in values.items():
        point[name], units[name] = (v[0], int(v[1])) if isinstance(v, tuple) else (v, n)
    return point, units


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
