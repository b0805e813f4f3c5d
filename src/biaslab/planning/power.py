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
* :func:`normal_n` -- items needed for a mean-like metric with standard error ``se1 / sqrt(n)`` (it lives in
  :mod:`biaslab.stats.sample_size`, which the non-inferiority tests also use; re-exported here).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from biaslab.stats.sample_size import normal_n
from biaslab.stats.sample_size import normal_quantile as _z

__all__ = ["binomial_power", "binomial_n", "binomial_detectable_effect", "fisher_n", "normal_n"]


def _binom(kind: str) -> Any:
    """scipy's binomial cdf / sf / pmf as the bare ufunc that ``scipy.stats.binom`` evaluates inside its support:
    the same numbers without the argument checking that costs a millisecond a call (the plan calls it often)."""
    try:
        from scipy.special import _ufuncs

        return getattr(_ufuncs, f"_binom_{kind}")
    except (ImportError, AttributeError):  # a scipy without them: the public (slower) methods
        from scipy.stats import binom

        return {"cdf": binom.cdf, "sf": binom.sf, "pmf": binom.pmf}[kind]


def _cdf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(X <= k) for X ~ Bin(n, p), elementwise (0 below the support, 1 above it, as ``binom.cdf``)."""
    inside = (k >= 0) & (k < n)
    out = np.where(k >= n, 1.0, 0.0)
    if inside.any():
        out[inside] = _binom("cdf")(k[inside].astype(float), n[inside].astype(float), p)
    return out


def _sf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(X > k) for X ~ Bin(n, p), elementwise (1 below the support, 0 above it, as ``binom.sf``)."""
    inside = (k >= 0) & (k < n)
    out = np.where(k < 0, 1.0, 0.0)
    if inside.any():
        out[inside] = _binom("sf")(k[inside].astype(float), n[inside].astype(float), p)
    return out


def _pmf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    inside = (k >= 0) & (k <= n)
    out = np.zeros(len(k))
    if inside.any():
        out[inside] = _binom("pmf")(k[inside].astype(float), n[inside].astype(float), p)
    return out


def critical_counts(ns: np.ndarray, alpha: float) -> np.ndarray:
    """:func:`critical_count` at each n of ``ns`` (vectorized; the same rule and the same numbers)."""
    ns = np.atleast_1d(np.asarray(ns, dtype=np.int64))
    tol = alpha * (1 + 1e-12)
    guess = ns / 2 - _z(1 - alpha / 2) * np.sqrt(ns) / 2 - 0.5  # the normal approximation: off by a count or two
    c = np.clip(np.floor(guess), -1, None).astype(np.int64)
    while True:
        down = (c >= 0) & (2 * _cdf(c, ns, 0.5) > tol)
        if not down.any():
            break
        c[down] -= 1
    while True:
        up = (2 * _cdf(c + 1, ns, 0.5) <= tol) & (c + 1 < ns / 2)
        if not up.any():
            break
        c[up] += 1
    return c


def critical_count(n: int, alpha: float) -> int:
    """Largest c with 2 P(X <= c | n, 1/2) <= alpha (-1 when even c = 0 does not reject)."""
    return int(critical_counts(np.array([n]), alpha)[0])


def exact_powers(ns: np.ndarray, p1: float, alpha: float = 0.05) -> np.ndarray:
    """:func:`binomial_power` at each n of ``ns``."""
    ns = np.atleast_1d(np.asarray(ns, dtype=np.int64))
    c = critical_counts(ns, alpha)
    pw = _cdf(c, ns, p1) + _sf(ns - c - 1, ns, p1)
    return np.where((c < 0) | (ns < 1), 0.0, pw)


def binomial_power(n: int, p1: float, alpha: float = 0.05) -> float:
    if n < 1:
        return 0.0
    return float(exact_powers(np.array([n]), p1, alpha)[0])


def _normal_binomial_n(p1: float, alpha: float, power: float) -> float:
    za, zb = _z(1 - alpha / 2), _z(power)
    return ((za * 0.5 + zb * math.sqrt(p1 * (1 - p1))) / abs(p1 - 0.5)) ** 2


def _chunks(a: int, b: int, *, backwards: bool = False) -> Iterator[np.ndarray]:
    """The ns from a to b (both included) in consecutive ranges of 256, 512, ... up to 8192 ns, from a (or b)."""
    size, done = 256, 0
    while done < b - a + 1:
        take = min(size, b - a + 1 - done)
        yield np.arange(b - done - take + 1, b - done + 1) if backwards else np.arange(a + done, a + done + take)
        done, size = done + take, min(size * 2, 8192)


def binomial_n(p1: float, alpha: float = 0.05, power: float = 0.8) -> dict[str, int]:
    """``{"n", "n_all_larger", "n_normal"}`` for the exact two-sided binomial test of p = 1/2.

    ``n``: the smallest n from ``max(1, 0.75 n_normal - 20)`` whose exact power reaches ``power``;
    ``n_all_larger``: the smallest n from which every larger n reaches it (1 when every n from there does).

    Exact power is a sawtooth in n (the attainable levels jump as c steps up), so a larger n can have less
    power. It is computed only where it can cross the target, bracketed by two bounds that never fall as n
    grows: below the first n at which the randomized test of level exactly alpha reaches the target
    (:func:`_randomized_powers`), no n does; from the first n at which that power less twice the binomial's
    largest point probability reaches it (:func:`_power_floors`), every n does. The bracket is found by
    bisection; between its ends ``n`` is searched forwards and the last n below the target backwards."""
    if not 0 < p1 < 1 or p1 == 0.5:
        raise ValueError("p1 must be in (0, 1) and differ from 0.5")
    approx = _normal_binomial_n(p1, alpha, power)
    lo = max(1, int(approx * 0.75) - 20)  # exact n lies near the normal one
    start = _first_n(lambda n: _randomized_powers(np.array([n]), p1, alpha)[0] >= power, lo)
    stop = _first_n(lambda n: _power_floors(np.array([n]), p1, alpha)[0] >= power, start)
    first = None
    for ns in _chunks(start, stop):  # the first n reaching the target (at stop at the latest)
        hit = np.flatnonzero(exact_powers(ns, p1, alpha) >= power)
        if hit.size:
            first = int(ns[hit[0]])
            break
    assert first is not None, "the power floor reached the target, so the exact power did"
    last_below = first - 1 if first > lo else None  # every n from lo to first misses the target
    for ns in _chunks(first, stop, backwards=True):  # the last n below the target, from stop backwards
        miss = np.flatnonzero(exact_powers(ns, p1, alpha) < power)
        if miss.size:
            last_below = int(ns[miss[-1]])
            break
    return {"n": first, "n_all_larger": 1 if last_below is None else last_below + 1, "n_normal": math.ceil(approx)}


def _randomized_powers(ns: np.ndarray, p1: float, alpha: float) -> np.ndarray:
    """Power of the symmetric test that rejects where the exact test does and, with the probability that brings
    its level to exactly alpha, at the count next to each tail. For p = 1/2 it is the uniformly most powerful
    unbiased test, so its power never falls as n grows (at n + 1 it has at least the power of the n-trial test
    that ignores one trial), and the exact test, which rejects less, never has more."""
    ns = np.atleast_1d(np.asarray(ns, dtype=np.int64))
    c = critical_counts(ns, alpha)
    low, high = c + 1, ns - c - 1
    two = low < high  # two edge counts; one when they meet in the middle; none past it
    size = 2 * _cdf(c, ns, 0.5)
    at_edge = _pmf(low, ns, 0.5) + np.where(two, _pmf(high, ns, 0.5), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where((low <= high) & (at_edge > 0), np.clip((alpha - size) / at_edge, 0.0, 1.0), 0.0)
    extra = gamma * (_pmf(low, ns, p1) + np.where(two, _pmf(high, ns, p1), 0.0))
    return np.where(ns < 1, 0.0, exact_powers(ns, p1, alpha) + extra)


def _power_floors(ns: np.ndarray, p1: float, alpha: float) -> np.ndarray:
    """A bound on the exact power at n and at every larger n: :func:`_randomized_powers` (never falling) less the
    most the randomized test adds, two point probabilities, each at most the binomial's largest, which never
    grows with n (the distribution at n + 1 mixes two shifted copies of that at n)."""
    ns = np.atleast_1d(np.asarray(ns, dtype=np.int64))
    mode = np.minimum(ns, np.floor((ns + 1) * p1).astype(np.int64))
    return _randomized_powers(ns, p1, alpha) - 2 * _pmf(mode, ns, p1)


def _first_n(holds: Callable[[int], bool], lo: int) -> int:
    """The smallest n >= lo for which ``holds``, a condition that once true stays true as n grows: doubling
    steps, then bisection."""
    if holds(lo):
        return lo
    bad, step = lo, 1
    while not holds(lo + step):
        bad, step = lo + step, step * 2
    good = lo + step
    while good - bad > 1:
        mid = (bad + good) // 2
        if holds(mid):
            good = mid
        else:
            bad = mid
    return good


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
