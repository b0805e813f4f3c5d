"""Non-inferiority of two paired proportions: Tango's score test (Tango 1998, "Equivalence test and confidence
interval for the difference in proportions for the paired-sample design", Statistics in Medicine 17).

Items answered by both runs, each 0 or 1 in each run: ``up`` items are 1 in the candidate and 0 in the baseline,
``down`` the reverse, ``n`` items in all. The difference of the proportions is ``(up - down) / n``. H0: the
candidate's proportion is higher by ``delta`` or more. The score statistic divides ``up - down - n * delta`` by its
standard error under H0, ``sqrt(n * (2 q + delta * (1 - delta)))``, where ``q`` is the restricted maximum-likelihood
estimate of the share of ``down`` items given a difference of exactly ``delta`` (a closed-form root of a quadratic).
Taking the variance under the null, not from the sample, is what keeps the test at its level where the sample shows
few differing items (a Wald test passes 17% of candidates worse by the margin at 30 items with the baseline at 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.stats import norm


def restricted_down_share(up: int, down: int, n: int, delta: float) -> float:
    """The maximum-likelihood share of ``down`` items when the candidate is higher by exactly ``delta``."""
    a = 2.0 * n
    b = -up - down + (2.0 * n - up + down) * delta
    c = -down * delta * (1.0 - delta)
    disc = max(0.0, b * b - 4.0 * a * c)
    return max(0.0, (-b + math.sqrt(disc)) / (2.0 * a))


def tango_z(up: int, down: int, n: int, delta: float) -> float:
    """The score statistic of H0 "higher by ``delta``" (negative: the data lie below it)."""
    q = restricted_down_share(up, down, n, delta)
    var = n * (2.0 * q + delta * (1.0 - delta))
    if var <= 0:
        return -math.inf if up - down < n * delta else math.inf
    return (up - down - n * delta) / math.sqrt(var)


def noninferior_p(up: int, down: int, n: int, delta: float) -> float:
    """One-sided p value of H0 "the candidate's proportion is higher by ``delta`` or more" (``0 < delta < 1``)."""
    if n < 1:
        return 1.0
    return float(norm.cdf(tango_z(up, down, n, delta)))


def _bisect(holds: Callable[[float], bool], lo: float, hi: float) -> float:
    """The smallest x in [lo, hi] where ``holds(x)`` (monotone: false below, true above)."""
    if not holds(hi):
        return hi
    for _ in range(50):
        mid = (lo + hi) / 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def noninferiority_test(
    up: int,
    down: int,
    n: int,
    delta: float,
    alpha: float,
    z_crit: float | None = None,
    calibrate: Callable[[float], float] | None = None,
) -> tuple[float, float, float]:
    """``(p, upper, lower)`` on the difference's scale (shares): the p value of H0 "higher by ``delta`` or more",
    and the one-sided bounds of the difference from the same test inverted, at the critical statistic ``z_crit``
    (default the normal one at ``alpha``). ``calibrate(p)``: a correction applied to the p value (the small-sample
    one of :func:`biaslab.stats.noninferiority.few_units_p`, whose level ``z_crit`` then is)."""
    crit = float(norm.isf(alpha)) if z_crit is None else z_crit
    p = noninferior_p(up, down, n, delta)
    diff = (up - down) / n
    upper = _bisect(lambda d: tango_z(up, down, n, d) <= -crit, diff, 1.0)
    lower = -_bisect(lambda d: tango_z(down, up, n, d) <= -crit, -diff, 1.0)
    return (calibrate(p) if calibrate else p), upper, lower
