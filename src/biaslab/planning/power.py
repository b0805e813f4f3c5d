"""Power of the tests behind the headline metrics, in closed form.

* :func:`binomial_power` -- exact power of the two-sided exact binomial test of H0 p = 1/2 at
  level ``alpha`` when the true rate is ``p1``: the test rejects for ``k <= c`` or ``k >= n - c``,
  ``c`` the largest count with ``2 P(X <= c | n, 1/2) <= alpha`` (for p0 = 1/2 this is exactly the
  rejection region of ``scipy.stats.binomtest``), so power = ``P(X <= c | p1) + P(X >= n - c | p1)``.
* :func:`binomial_n` -- the smallest n whose exact power reaches the target. Exact power is a
  sawtooth in n (the attainable levels jump as c steps up), so a larger n can have less power;
  the result also gives the smallest n from which *every* larger n reaches the target, and the
  normal-approximation n for comparison.
* :func:`fisher_n` -- pairs needed to detect a Pearson correlation r against 0 (Fisher's z):
  ``n = ((z_{1-alpha/2} + z_{power}) / atanh(r))^2 + 3``.
* :func:`normal_n` -- items needed for a mean-like metric with standard error ``se1 / sqrt(n)``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["binomial_power", "binomial_n", "binomial_detectable_effect", "fisher_n", "normal_n"]


def _z(q: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(q))


def critical_count(n: int, alpha: float) -> int:
    """Largest c with 2 P(X <= c | n, 1/2) <= alpha (-1 when even c = 0 does not reject)."""
    from scipy.stats import binom

    c = int(binom.ppf(alpha / 2, n, 0.5))
    while c >= 0 and 2 * binom.cdf(c, n, 0.5) > alpha * (1 + 1e-12):
        c -= 1
    while 2 * binom.cdf(c + 1, n, 0.5) <= alpha * (1 + 1e-12) and c + 1 < n / 2:
        c += 1
    return c


def binomial_power(n: int, p1: float, alpha: float = 0.05) -> float:
    from scipy.stats import binom

    if n < 1:
        return 0.0
    c = critical_count(n, alpha)
    if c < 0:
        return 0.0
    return float(binom.cdf(c, n, p1) + binom.sf(n - c - 1, n, p1))


def _normal_binomial_n(p1: float, alpha: float, power: float) -> float:
    za, zb = _z(1 - alpha / 2), _z(power)
    return ((za * 0.5 + zb * math.sqrt(p1 * (1 - p1))) / abs(p1 - 0.5)) ** 2


def binomial_n(p1: float, alpha: float = 0.05, power: float = 0.8) -> dict[str, int]:
    """``{"n", "n_all_larger", "n_normal"}`` for the exact two-sided binomial test of p = 1/2."""
    if not 0 < p1 < 1 or p1 == 0.5:
        raise ValueError("p1 must be in (0, 1) and differ from 0.5")
    approx = _normal_binomial_n(p1, alpha, power)
    lo, hi = max(1, int(approx * 0.75) - 20), int(approx * 1.3) + 60  # exact n lies near the normal one
    ns = np.arange(lo, hi + 1)
    pw = np.array([binomial_power(int(n), p1, alpha) for n in ns])
    while not (pw[-60:] >= power).all():  # extend until the sawtooth stays above the target
        more = np.arange(ns[-1] + 1, ns[-1] + 61)
        ns = np.concatenate([ns, more])
        pw = np.concatenate([pw, [binomial_power(int(n), p1, alpha) for n in more]])
    first = int(ns[np.argmax(pw >= power)])
    below = np.flatnonzero(pw < power)
    all_larger = int(ns[below[-1] + 1]) if below.size else 1
    return {"n": first, "n_all_larger": all_larger, "n_normal": math.ceil(approx)}


def binomial_detectable_effect(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest |p1 - 1/2| (as a rate) detected with the target power at exactly ``n`` trials."""
    lo, hi = 0.0, 0.5
    if binomial_power(n, 1.0 - 1e-12, alpha) < power:
        return math.nan
    for _ in range(50):
        mid = (lo + hi) / 2
        if binomial_power(n, 0.5 + mid, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def fisher_n(r: float, alpha: float = 0.05, power: float = 0.8) -> int:
    if not 0 < abs(r) < 1:
        raise ValueError("the correlation must be in (-1, 1) and not 0")
    return math.ceil(((_z(1 - alpha / 2) + _z(power)) / math.atanh(abs(r))) ** 2 + 3)


def normal_n(effect: float, se1: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """n with ``|effect| / (se1 / sqrt(n)) = z_{1-alpha/2} + z_power`` (``se1``: the SE at n = 1)."""
    return max(2, math.ceil((se1 * (_z(1 - alpha / 2) + _z(power)) / abs(effect)) ** 2))
