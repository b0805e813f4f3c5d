"""A bootstrap that resamples a probe's real units, not its rows: metrics computed from weighted rows.

A probe's table has one row per item (a decision scenario, a question), but the unit that carries the
uncertainty can be coarser (the template an item was filled from) or there can be two of them crossed (the
occupation of a scenario and the names it was asked about). A resample draws every unit with replacement --
within its stratum, so the design stays fixed -- and gives each row the weight ``count of its unit`` (one
factor: the cluster bootstrap) or the product of the counts of its units (several crossed factors: Owen's
pigeonhole bootstrap, "The pigeonhole bootstrap", Ann. Appl. Stat. 2007, mildly conservative). The metric
function reads the table's ``weight`` column (1 for every row on the data itself) and returns ``{name: value}``
or ``{name: (value, units)}``; it must treat a row of weight ``k`` as ``k`` copies of it (weighted means,
weighted least squares). Intervals are 95% percentiles, made honest by :func:`.intervals.honest_interval`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping

import numpy as np

from biaslab.stats.intervals import honest_interval

Table = Mapping[str, np.ndarray]
MetricFn = Callable[[Table], Mapping[str, float | tuple[float, int]]]


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    _, inverse = np.unique(np.asarray(values).astype(str), return_inverse=True)
    return inverse.ravel(), int(inverse.max()) + 1 if inverse.size else 0


class UnitDraw:
    """Draws counts for the units of one factor, within strata: ``draw(rng)`` gives each row its unit's count."""

    def __init__(self, units: np.ndarray, strata: np.ndarray | None = None) -> None:
        self.row_unit, self.n_units = _codes(units)
        strata = np.zeros(len(self.row_unit), dtype=int) if strata is None else np.asarray(strata).astype(str)
        unit_stratum: dict[int, str] = {}
        for u, s in zip(self.row_unit.tolist(), np.asarray(strata).tolist(), strict=True):
            if unit_stratum.setdefault(u, s) != s:
                raise ValueError(f"a resampling unit lies in two strata ({unit_stratum[u]!r} and {s!r})")
        self.groups = [np.array([u for u, s in unit_stratum.items() if s == st], dtype=int)
                       for st in sorted(set(unit_stratum.values()), key=str)]

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        counts = np.zeros(self.n_units, dtype=float)
        for g in self.groups:
            counts[g] = rng.multinomial(g.size, np.full(g.size, 1.0 / g.size))
        return counts[self.row_unit]


def weighted_bootstrap(table: Table, fn: MetricFn, factors: Mapping[str, str | None], *, n_resamples: int = 1000,
                       seed: int = 0, confidence: float = 0.95, proportions: Collection[str] = ()
                       ) -> dict[str, dict[str, float | None]]:
    """``{metric: {"value", "ci_low", "ci_high", "n", ...}}`` with the units of ``factors`` resampled.

    ``factors`` maps a column naming each row's unit to the column naming the unit's stratum (or None). ``n`` is
    the number of units of the first factor unless ``fn`` gives ``(value, units)``. ``proportions`` as in
    :func:`biaslab.stats.bootstrap.bootstrap_metrics` (rates in [0, 1]: a collapsed interval at 0 or 1 becomes
    the exact one).
    """
    if not factors:
        raise ValueError("weighted_bootstrap needs at least one resampling factor")
    n_rows = len(next(iter(table.values()))) if table else 0
    base = dict(table)
    base_weight = np.asarray(base.get("weight", np.ones(n_rows)), dtype=float)
    base["weight"] = base_weight
    draws = [UnitDraw(np.asarray(table[f]), None if s is None else np.asarray(table[s])) for f, s in factors.items()]
    n_first = draws[0].n_units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point, units = _split(fn(base), n_first)
        samples: dict[str, list[float]] = {name: [] for name in point}
        rng = np.random.default_rng(seed)
        for _ in range(n_resamples if n_rows else 0):
            w = base_weight.copy()
            for d in draws:
                w = w * d.draw(rng)
            for name, value in _split(fn({**base, "weight": w}), n_first)[0].items():
                if name in samples:
                    samples[name].append(value)
    alpha = (1 - confidence) / 2
    out: dict[str, dict[str, float | None]] = {}
    for name, value in point.items():
        arr = np.asarray(samples[name], dtype=float)
        arr = arr[np.isfinite(arr)]
        ok = value is not None and math.isfinite(value) and arr.size >= max(10, n_resamples // 2)
        out[name] = honest_interval(_clean(value), float(np.quantile(arr, alpha)) if ok else None,
                                    float(np.quantile(arr, 1 - alpha)) if ok else None, n=units[name],
                                    scale=1.0 if name in proportions else None, confidence=confidence)
    return out


def _split(values: Mapping[str, float | tuple[float, int]], n: int) -> tuple[dict[str, float], dict[str, int]]:
    point, units = {}, {}
    for name, v in values.items():
        point[name], units[name] = (float(v[0]), int(v[1])) if isinstance(v, tuple) else (float(v), n)
    return point, units


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    return float(value) if math.isfinite(value) else None


# -- weighted estimators the metric functions share ---------------------------------------------------------

def weighted_nanmean(values: np.ndarray, weight: np.ndarray) -> float:
    """The mean of the defined (finite) values, each counted ``weight`` times; NaN when none has weight."""
    v = np.asarray(values, dtype=float)
    w = np.asarray(weight, dtype=float)
    ok = np.isfinite(v) & (w > 0)
    total = w[ok].sum()
    return float((w[ok] * v[ok]).sum() / total) if total > 0 else math.nan


def weighted_ratio(num: np.ndarray, den: np.ndarray, weight: np.ndarray) -> float:
    """``sum(w * num) / sum(w * den)``, NaN when the denominator is 0."""
    w = np.asarray(weight, dtype=float)
    d = float((w * np.asarray(den, dtype=float)).sum())
    return float((w * np.asarray(num, dtype=float)).sum() / d) if d > 0 else math.nan


_A_BOUNDS = (-1.0, 1.0)
_B_BOUNDS = (0.0, 1.0)


def weighted_bounded_slope(x: np.ndarray, y: np.ndarray, weight: np.ndarray, *, min_units: float = 3) -> float:
    """Slope ``a`` of the weighted least-squares fit ``y ~ a x + b`` with ``a`` in [-1, 1] and ``b`` in [0, 1]
    (GenderBench's bounded regression, ``scipy.optimize.lsq_linear`` with those bounds), over the rows where
    ``y`` is defined. NaN when the rows weigh less than ``min_units`` in all (GenderBench: fewer than 3 items)
    or ``x`` does not vary.

    The problem is convex in two unknowns: the minimum is the unconstrained fit when it lies inside the box,
    else the best point of the box's four edges (each a one-dimensional fit clipped to its interval).
    """
    x, y, w = (np.asarray(a, dtype=float) for a in (x, y, weight))
    ok = np.isfinite(y) & (w > 0)
    x, y, w = x[ok], y[ok], w[ok]
    n = w.sum()
    if n < min_units or x.size == 0 or np.ptp(x) == 0:
        return math.nan
    sx, sy, sxx, sxy, syy = (w @ x), (w @ y), (w @ (x * x)), (w @ (x * y)), (w @ (y * y))
    det = n * sxx - sx * sx
    a = (n * sxy - sx * sy) / det
    b = (sy - a * sx) / n
    if _A_BOUNDS[0] <= a <= _A_BOUNDS[1] and _B_BOUNDS[0] <= b <= _B_BOUNDS[1]:
        return float(a)
    candidates = [(a_, float(np.clip((sy - a_ * sx) / n, *_B_BOUNDS))) for a_ in _A_BOUNDS]
    candidates += [(float(np.clip((sxy - b_ * sx) / sxx, *_A_BOUNDS)), b_) for b_ in _B_BOUNDS]

    def sse(a_: float, b_: float) -> float:
        return a_ * a_ * sxx + 2 * a_ * b_ * sx + b_ * b_ * n - 2 * a_ * sxy - 2 * b_ * sy + syy

    return float(min(candidates, key=lambda c: sse(*c))[0])
