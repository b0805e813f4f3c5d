"""Intervals that do not look more certain than the data: score/exact intervals for proportions,
and no interval where a group is too small to interpret.

A percentile bootstrap collapses to zero width when every resample gives the same value: a rate
of 0 or 1 (every unit had the same outcome) or a value that rests on one unit. Then:

* a value at a bound of its scale (0 or 1; 0 or 100 for percentages) is a proportion with all
  units on one side: its interval is the Clopper-Pearson (exact) interval for 0 of ``n`` or ``n`` of
  ``n`` -- upper bound ``1 - (alpha/2)^(1/n)`` for 0 of n -- never of zero width;
* any other value gets no interval (``ci_low``/``ci_high`` None, ``degenerate: true``): the
  bootstrap cannot tell how uncertain it is.

Fewer than :data:`MIN_UNITS` units never get an interval: ``too_small: true``.

``n`` (the units the interval is over: items, predicates, pairs) goes beside every interval.
:func:`wilson` and :func:`clopper_pearson` are the general two-sided 95% intervals for ``k`` of ``n``.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

MIN_UNITS = 2  # fewer units than this: no interval


def wilson(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes of ``n``."""
    if n <= 0:
        raise ValueError("n must be positive")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k <= 0 else max(0.0, centre - half)  # exact bounds at 0 and n (no rounding residue)
    hi = 1.0 if k >= n else min(1.0, centre + half)
    return lo, hi


def clopper_pearson(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson (exact binomial) interval for ``k`` successes of ``n``."""
    if n <= 0:
        raise ValueError("n must be positive")
    alpha = 1 - confidence
    if k <= 0:  # closed forms at the bounds (no scipy import: this runs in every report)
        return 0.0, 1 - (alpha / 2) ** (1 / n)
    if k >= n:
        return (alpha / 2) ** (1 / n), 1.0
    from scipy.stats import beta

    return float(beta.ppf(alpha / 2, k, n - k + 1)), float(beta.ppf(1 - alpha / 2, k + 1, n - k))


def honest_interval(value: float | None, lo: float | None, hi: float | None, *, n: int, scale: float | None = 1.0,
                    confidence: float = 0.95) -> dict[str, Any]:
    """``{"value", "ci_low", "ci_high", "n"[, "interval", "too_small", "degenerate"]}`` from a bootstrap interval.

    ``scale``: 1 for proportions, 100 for percentages, None for a value that is no proportion. A
    zero-width interval becomes an exact one
    for a value at 0 or ``scale``, and no interval (``degenerate``) otherwise; fewer than
    :data:`MIN_UNITS` units never get an interval (``too_small``).
    """
    out: dict[str, Any] = {"value": value, "ci_low": lo, "ci_high": hi, "n": int(n)}
    if value is None:
        return out
    if n < MIN_UNITS:
        out.update(ci_low=None, ci_high=None, too_small=True)
        return out
    if lo is None or hi is None:
        return out  # undefined in most resamples: no interval, nothing to replace
    tol = 1e-12 * (scale or 1.0)
    if not math.isclose(lo, hi, rel_tol=0, abs_tol=tol):
        return out
    at_zero = scale is not None and math.isclose(value, 0.0, abs_tol=tol)
    if at_zero or (scale is not None and math.isclose(value, scale, rel_tol=1e-12)):
        k = 0 if at_zero else n
        low, high = clopper_pearson(k, n, confidence)
        out.update(ci_low=low * scale, ci_high=high * scale, interval="clopper-pearson")
    else:  # every resample the same, not at a bound: no honest interval
        out.update(ci_low=None, ci_high=None, degenerate=True)
    return out
