"""Tests on few units: a bootstrap p value recalibrated to the ``k`` independent units (or clusters) its
replicates resample (:mod:`biaslab.stats.noninferiority`, "Few units"): the p read as a normal statistic, the
variance's plug-in factor ``(k - 1) / k`` undone and the statistic referred to Student's t on ``k - 1`` degrees of
freedom; never below ``2^-k``, the smallest p of an exact test on ``k`` units."""

from __future__ import annotations

import math


def few_units_p(p: float, units: int | None) -> float:
    """The bootstrap p value ``p`` recalibrated to ``units`` independent units (module docstring, "Few units");
    unchanged without ``units``."""
    if units is None:
        return p
    if units < 2:
        return 1.0
    from scipy.stats import norm, t

    z = float(norm.isf(min(1.0, max(p, 1e-300))))
    return float(max(t.sf(z * math.sqrt((units - 1) / units), units - 1), 0.5**units))


def few_units_z(alpha: float, units: int) -> float:
    """The normal statistic a test must pass for its p, recalibrated to ``units`` (:func:`few_units_p`), to reach
    ``alpha`` (infinite where ``2^-units`` is above it)."""
    from scipy.stats import t

    if units < 2 or 0.5**units > alpha:
        return math.inf
    return float(t.isf(alpha, units - 1) * math.sqrt(units / (units - 1)))


def widen(units: int | None, alpha: float) -> float:
    """The factor that widens a bootstrap bound at one-sided level alpha to the recalibrated test's."""
    if units is None:
        return 1.0
    if units < 2:
        return math.inf
    from scipy.stats import norm, t

    return float(t.isf(alpha, units - 1) / norm.isf(alpha) * math.sqrt(units / (units - 1)))


def sd_factor(units: int | None) -> float:
    """The plug-in bootstrap's standard error scaled up to the sample variance's (k / (k - 1))."""
    return 1.0 if units is None or units < 2 else math.sqrt(units / (units - 1))
