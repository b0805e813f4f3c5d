"""Pearson's correlation, the one implementation every metric uses.

:func:`pearson` is r itself, NaN where it is undefined (fewer than two pairs, or one side
constant); it imports nothing beyond numpy, so metrics that use it start fast.
:func:`pearson_inference` gives r with an interval and a p value from one procedure (Fisher's z),
so that "the interval excludes the null" and "p < 0.05" always agree, and ``None`` where r is
undefined (the JSON form of "n/a") with the reason.

:func:`overlapping_bound` and :func:`overlapping_p` compare two correlations that share a variable on the same
units, ``r_a = r(x, y_a)`` and ``r_b = r(x, y_b)`` (one judge's scores and another's against the same human
scores): Zou's (2007) interval for ``r_a - r_b``, built from each correlation's Fisher z bounds and the
correlation between the two estimates, with Student's t on ``n - 1`` degrees of freedom in place of the normal
quantile. A non-inferiority test at a margin built on the influence values of r (a t test of their paired
differences) or on the paired bootstrap passes a candidate worse by exactly the margin too often at small n (in
simulation, with r 0.8 against 0.7: 13% and 8% at n = 10 and 30 for the first, 7.7% at 30 for the second, at a
nominal 5%); this one stays at or below 5% at n = 10 and 30 (scripts/gate_correlation_type1.py). Its
correlation between the estimates is normal theory's: where a candidate differs from the baseline on a few units
only, by far (a tenth of the texts rescored with large noise), it passes up to 20% at n = 30 to 100 -- and the
paired bootstrap 34% and 19% there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["pearson", "pearson_inference", "overlapping_bound", "overlapping_p"]


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


def pearson_inference(x, y, *, null: float = 0.0, confidence: float = 0.95, label: str = "pairs") -> dict[str, Any]:
    """``{"value", "ci_low", "ci_high", "p", "null", "n", "method", "confidence"}`` for Pearson's r of
    independent pairs, interval and p from Fisher's z: ``z = atanh(r)`` is close to normal with
    standard error ``1 / sqrt(n - 3)``, so the interval is ``tanh(z -+ z_crit se)`` and
    ``p = 2 P(Z > |z - atanh(null)| / se)``; the interval excludes ``null`` exactly when
    ``p < 1 - confidence``. Fewer than 4 pairs: no interval (``too_small``); a constant side: no
    value; ``|r| = 1``: no interval (``degenerate``). Every case without an interval has a ``reason``.
    """
    from statistics import NormalDist

    from biaslab.stats.intervals import units_text

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    r = pearson(x, y)
    out: dict[str, Any] = {
        "value": None if math.isnan(r) else r,
        "ci_low": None,
        "ci_high": None,
        "p": None,
        "null": null,
        "n": n,
        "method": "Fisher z",
        "confidence": confidence,
    }
    if math.isnan(r):
        out["reason"] = f"undefined: {'a side is constant' if n >= 2 else units_text(n, label)}"
        return out
    if n < 4:
        out.update(too_small=True, reason=f"{units_text(n, label)}: too few for an interval (Fisher's z needs 4)")
        return out
    if abs(r) >= 1 - 1e-12:
        out.update(degenerate=True, reason=f"r = {r:.0f}: every pair lies on one line, no spread to estimate")
        return out
    se = 1 / math.sqrt(n - 3)
    z = math.atanh(r)
    crit = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    out.update(ci_low=math.tanh(z - crit * se), ci_high=math.tanh(z + crit * se))
    out["method"] = f"Fisher z ({units_text(n, label)})"
    out["p"] = float(min(1.0, 2 * NormalDist().cdf(-abs(z - math.atanh(null)) / se)))
    return out


def _estimates(x, y_a, y_b) -> tuple[float, float, float, int]:
    x, y_a, y_b = (np.asarray(v, dtype=float) for v in (x, y_a, y_b))
    if not x.shape == y_a.shape == y_b.shape:
        raise ValueError("overlapping correlations: x, y_a and y_b must be paired (one value each per unit)")
    r_a, r_b, r_ab = pearson(x, y_a), pearson(x, y_b), pearson(y_a, y_b)
    if x.size < 4 or not all(math.isfinite(v) and abs(v) < 1 for v in (r_a, r_b)):
        raise ValueError("overlapping correlations need 4 units and both correlations strictly inside (-1, 1)")
    return r_a, r_b, (r_ab if math.isfinite(r_ab) else 0.0), int(x.size)


def overlapping_bound(x, y_a, y_b, q: float) -> tuple[float, float]:
    """``(r_a - r_b, bound)``: Zou's bound of ``r_a - r_b`` (module docstring) with quantile ``q``: the upper bound
    for ``q >= 0``, the lower bound at ``-q`` for ``q < 0`` (increasing in ``q``; ``q = t_{n-1}(1 - alpha)`` gives
    the one-sided ``1 - alpha`` bounds). ValueError where a correlation is undefined or at +-1."""
    r_a, r_b, r_ab, n = _estimates(x, y_a, y_b)
    return r_a - r_b, _bound(r_a, r_b, r_ab, n, q)


def _bound(r_a: float, r_b: float, r_ab: float, n: int, q: float) -> float:
    se = 1 / math.sqrt(n - 3)
    c = ((r_ab - r_a * r_b / 2) * (1 - r_a**2 - r_b**2 - r_ab**2) + r_ab**3) / ((1 - r_a**2) * (1 - r_b**2))
    w = abs(q) * se
    if q >= 0:  # r_a's upper end and r_b's lower end
        d1, d2 = math.tanh(math.atanh(r_a) + w) - r_a, r_b - math.tanh(math.atanh(r_b) - w)
    else:
        d1, d2 = r_a - math.tanh(math.atanh(r_a) - w), math.tanh(math.atanh(r_b) + w) - r_b
    half = math.sqrt(max(0.0, d1 * d1 + d2 * d2 - 2 * c * d1 * d2))
    return r_a - r_b + (half if q >= 0 else -half)


def overlapping_p(x, y_a, y_b, threshold: float) -> float:
    """The one-sided p value of ``H0: r_a - r_b >= threshold`` against ``r_a - r_b < threshold``: the level at which
    Zou's upper bound (:func:`overlapping_bound`) reaches ``threshold``, ``1 - T_{n-1}(q*)`` for the quantile ``q*``
    with bound ``threshold`` (found by bisection; above 0.5 where the difference is at or beyond the threshold)."""
    from scipy.stats import t as student

    est = _estimates(x, y_a, y_b)
    lo, hi = -40.0, 40.0
    if _bound(*est, lo) >= threshold:
        return 1.0
    if _bound(*est, hi) < threshold:
        return float(student.sf(hi, est[3] - 1))
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _bound(*est, mid) < threshold else (lo, mid)
    return float(student.sf((lo + hi) / 2, est[3] - 1))
