"""Intervals that do not look more certain than the data: score/exact intervals for proportions,
and no interval where a group is too small to interpret.

A percentile bootstrap collapses to zero width when every resample gives the same value: a rate
of 0 or 1 (every unit had the same outcome) or a value that rests on one unit. Then:

* a value at a bound of its scale (0 or 1; 0 or 100 for percentages) is a proportion with all
  units on one side: its interval is the Clopper-Pearson (exact) interval for 0 of ``n`` or ``n`` of
  ``n`` -- upper bound ``1 - (alpha/2)^(1/n)`` for 0 of n -- never of zero width;
* any other value gets no interval (``ci_low``/``ci_high`` None, ``degenerate: true``): the
  bootstrap cannot tell how uncertain it is.

Fewer than :data:`MIN_UNITS` units never get an interval: ``too_small: true``. Every metric left
without an interval carries a ``reason`` (one sentence, for the reader) saying why.

``n`` (the units the interval is over: items, predicates, pairs) goes beside every interval.
:func:`wilson` and :func:`clopper_pearson` are the general two-sided 95% intervals for ``k`` of ``n``;
:func:`binomial_central_p` is the two-sided exact binomial p value whose inversion is Clopper-Pearson.
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


def binomial_central_p(k: int, n: int, p0: float) -> float:
    """Two-sided exact binomial p value of ``k`` successes in ``n`` under success rate ``p0``:
    ``min(1, 2 * min(P(X <= k), P(X >= k)))`` (the "central" p value).

    The Clopper-Pearson interval is exactly the set of ``p0`` with this p at least ``alpha``, so
    "the interval excludes ``p0``" and "p < alpha" agree (unlike the minimum-likelihood p value of
    ``scipy.stats.binomtest``, which can differ from it in either direction).
    """
    if n <= 0:
        raise ValueError("n must be positive")
    if p0 <= 0.0:
        return 1.0 if k <= 0 else 0.0
    if p0 >= 1.0:
        return 1.0 if k >= n else 0.0
    if k <= 0:  # closed forms at the bounds, like clopper_pearson
        return min(1.0, 2 * (1 - p0) ** n)
    if k >= n:
        return min(1.0, 2 * p0**n)
    from scipy.stats import binom

    return float(min(1.0, 2 * min(binom.cdf(k, n, p0), binom.sf(k - 1, n, p0))))


def honest_interval(
    value: float | None,
    lo: float | None,
    hi: float | None,
    *,
    n: int,
    scale: float | None = 1.0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """``{"value", "ci_low", "ci_high", "n"[, "interval", "too_small", "degenerate", "reason"]}`` from a
    bootstrap interval.

    ``scale``: 1 for proportions, 100 for percentages, None for a value that is no proportion. A
    zero-width interval becomes an exact one
    for a value at 0 or ``scale``, and no interval (``degenerate``) otherwise; fewer than
    :data:`MIN_UNITS` units never get an interval (``too_small``). Whenever the result has no
    interval, ``reason`` says why.
    """
    out: dict[str, Any] = {"value": value, "ci_low": lo, "ci_high": hi, "n": int(n)}
    if value is None:
        out.update(ci_low=None, ci_high=None, reason="no value: the metric is undefined on these data")
        return out
    if n < MIN_UNITS:
        out.update(ci_low=None, ci_high=None, too_small=True, reason=f"{units_text(n)}: too few to estimate spread")
        return out
    if lo is None or hi is None:  # undefined in most resamples: no interval, nothing to replace
        out.update(ci_low=None, ci_high=None, reason="undefined in most bootstrap resamples")
        return out
    tol = 1e-12 * (scale or 1.0)
    if not math.isclose(lo, hi, rel_tol=0, abs_tol=tol):
        return out
    at_zero = scale is not None and math.isclose(value, 0.0, abs_tol=tol)
    if at_zero or (scale is not None and math.isclose(value, scale, rel_tol=1e-12)):
        assert scale is not None  # both tests above need a scale
        k = 0 if at_zero else n
        low, high = clopper_pearson(k, n, confidence)
        out.update(ci_low=low * scale, ci_high=high * scale, interval="clopper-pearson")
    else:  # every resample the same, not at a bound: no honest interval
        out.update(
            ci_low=None,
            ci_high=None,
            degenerate=True,
            reason=f"every bootstrap resample of the {units_text(n)} gave the same value: no spread to estimate",
        )
    return out


def units_text(n: int, label: str = "units") -> str:
    """``"1 unit"``, ``"5 units"``; ``label`` is the plural (a trailing s is dropped for one)."""
    singular = label[:-1] if label.endswith("s") else label
    return f"{int(n)} {singular if int(n) == 1 else label}"
