"""Pearson's correlation, the one implementation every metric uses.

:func:`pearson` is r itself, NaN where it is undefined (fewer than two pairs, or one side
constant); it imports nothing beyond numpy, so metrics that use it start fast.
:func:`pearson_with_ci` adds the t-test p-value (scipy's ``pearsonr``) and a percentile bootstrap
CI over the pairs, and reports ``None`` where r is undefined (the JSON form of "n/a").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["pearson", "pearson_with_ci", "N_RESAMPLES"]

N_RESAMPLES = 2000


def pearson(x, y) -> float:
    """Pearson's r of two equally long sequences; NaN for fewer than 2 pairs or a constant side.

    Values are ``numpy.corrcoef``'s to the last bit. Spearman's rho is this on ranks
    (``pearson(rankdata(x), rankdata(y))``, average ranks for ties).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"pearson: x has shape {x.shape} and y {y.shape}; they must be paired")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def pearson_with_ci(x, y, *, seed: int = 0, n_resamples: int = N_RESAMPLES, min_n: int = 3) -> dict[str, Any]:
    """``{"r", "ci_low", "ci_high", "p", "n"}``: r and its two-sided t-test p-value (scipy), and a
    95% percentile bootstrap CI resampling the pairs with replacement (seeded by ``seed``).

    r, p and the CI are None when there are fewer than ``min_n`` pairs or a side is constant.
    Resamples in which a side is constant are skipped; when more than half are, the CI is None
    (too few distinct pairs for a bootstrap). ``n_resamples=0`` gives r and p without a CI.
    """
    from scipy.stats import pearsonr

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    none = {"r": None, "ci_low": None, "ci_high": None, "p": None, "n": n}
    if n < max(min_n, 2) or np.ptp(x) == 0 or np.ptp(y) == 0:
        return none
    res = pearsonr(x, y)
    out = {**none, "r": float(res.statistic), "p": float(res.pvalue)}
    if n_resamples <= 0:
        return out
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    xs, ys = x[idx], y[idx]
    xc, yc = xs - xs.mean(axis=1, keepdims=True), ys - ys.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rs = (xc * yc).sum(axis=1) / np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
    rs = rs[np.isfinite(rs)]
    if rs.size >= n_resamples // 2:
        out["ci_low"], out["ci_high"] = float(np.quantile(rs, 0.025)), float(np.quantile(rs, 0.975))
    return out
