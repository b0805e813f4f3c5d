"""The cluster sign-flip test of a mean and its inversion into a confidence interval.

Data: ``k`` clusters, cluster ``c`` holding ``n_c`` units whose values sum to ``Y_c``. The
estimate is the pooled mean ``theta_hat = sum(Y) / sum(n)`` (every unit weighs the same: a bias
score is the share of stereotypical pairs over all pairs, whatever their predicate).

Test of ``H0: theta = theta0``. The cluster residuals ``e_c = Y_c - theta0 * n_c`` sum to
``T = N * (theta_hat - theta0)``, the observed statistic (``N = sum(n)``): it is the point
estimate's distance from the null, in units. Under H0 each cluster's residual is assumed
symmetric about 0 and independent of the others, so flipping the sign of whole clusters does not
change the distribution of ``T``. For a set of sign vectors ``g`` (all ``2^k`` of them when
``k <= MAX_EXACT_CLUSTERS``; else the identity and ``N_RANDOM_FLIPS`` random ones, seeded)::

    p(theta0) = #{g : |sum_c g_c e_c(theta0)| >= |T(theta0)|} / #flips

The identity (and, when enumerating, its negation) always counts, so the exact p is never below
``2 / 2^k = 2^(1-k)``, and the Monte Carlo p never below ``1 / (N_RANDOM_FLIPS + 1)``, which is
smaller than ``2^(1-k)`` only where ``2^(k-1) <= N_RANDOM_FLIPS + 1`` -- clusters that are always
enumerated.

Inversion. Write ``theta0 = theta_hat + delta``, ``u_c = Y_c - theta_hat * n_c`` (residuals at
the estimate), ``c_g = sum g_c u_c`` and ``b_g = sum g_c n_c``. Flip ``g`` counts at ``delta``
when ``|c_g - delta b_g| >= N |delta|``: a concave quadratic in ``delta`` being ``>= 0``, true on
the closed interval ``[-|c_g| / (N - s b_g), |c_g| / (N + s b_g)]`` (``s`` the sign of ``c_g``),
which contains 0; the two constant flips count for every ``delta``. Every flip's interval holds
the estimate, so ``p`` falls monotonically on either side of it and the confidence set
``{theta0 : p(theta0) >= alpha}`` is one interval, whose upper end is the ``m``-th largest right
end (``m = ceil(alpha * #flips)``) and whose lower end the ``m``-th smallest left end. The p value
at the null is counted on the same interval ends, so ``p < alpha`` exactly when the interval
excludes the null (each end is widened by ``1e-9`` of the values' scale so that floating-point
ties count as ties, in the p value and the interval alike). An end is infinite when fewer than
``m`` flips have a finite end: with ``2^(1-k) >= alpha`` (``k <= 5`` at 95%) no interval exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_EXACT_CLUSTERS", "N_RANDOM_FLIPS", "SignFlipResult", "sign_flip_inference", "flip_ends"]

MAX_EXACT_CLUSTERS = 16  # 2^16 = 65,536 sign vectors: enumerated
N_RANDOM_FLIPS = 9_999  # beyond: the identity and 9,999 random sign vectors (10,000 in all)
_BLOCK_CELLS = 4_000_000  # sign-vector cells per block (memory bound)


@dataclass(frozen=True)
class SignFlipResult:
    """``p`` at the null; ``[ci_low, ci_high]`` (possibly infinite) from the same flips."""

    estimate: float
    p: float
    ci_low: float
    ci_high: float
    n_flips: int
    exact: bool

    @property
    def method(self) -> str:
        if self.exact:
            return f"sign-flip, exact ({self.n_flips:,} sign patterns), interval by test inversion"
        return f"sign-flip, {self.n_flips - 1:,} random sign patterns, interval by test inversion"


def _exact_blocks(k: int):
    """All ``2^k`` sign vectors (rows x k, +-1), in blocks; the first row is all +1."""
    rows = max(1, _BLOCK_CELLS // max(k, 1))
    bits = np.arange(k)
    for start in range(0, 2**k, rows):
        idx = np.arange(start, min(2**k, start + rows))
        yield 1.0 - 2.0 * ((idx[:, None] >> bits) & 1)


def _random_blocks(multiplicity: np.ndarray, n_random: int, seed: int):
    """The identity, then ``n_random`` random sign vectors, summed over clusters that are alike.

    Clusters with the same (total, size) enter every statistic only through the sum of their
    signs, so for ``m`` alike clusters one draw of ``2 * Binomial(m, 1/2) - m`` stands for their
    ``m`` independent signs: the same distribution, at a cost that does not grow with repeats.
    """
    rng = np.random.default_rng(seed)
    m = multiplicity.astype(np.int64)
    yield m[None, :].astype(float)
    rows = max(1, _BLOCK_CELLS // max(m.size, 1))
    many = m > 1
    done = 0
    while done < n_random:
        r = min(rows, n_random - done)
        signs = np.where(rng.random((r, m.size)) < 0.5, 1.0, -1.0)  # clusters alike with no other
        if many.any():
            signs[:, many] = 2.0 * rng.binomial(m[many], 0.5, size=(r, int(many.sum()))) - m[many]
        yield signs
        done += r


def flip_ends(
    totals: np.ndarray, sizes: np.ndarray, *, exact: bool, n_random: int = N_RANDOM_FLIPS, seed: int = 0
) -> tuple[float, np.ndarray, np.ndarray]:
    """``(theta_hat, left, right)``: each sign vector's interval of ``delta = theta0 - theta_hat``
    on which it is at least as extreme as the observed arrangement (before the tie widening)."""
    y = np.asarray(totals, dtype=float)
    n = np.asarray(sizes, dtype=float)
    big_n = float(n.sum())
    est = float(y.sum() / big_n)
    gap = big_n - float(n.min())  # |b_g| of any non-constant sign vector is at most N - 2 min(n)
    if exact:
        blocks = _exact_blocks(y.size)
    else:  # alike clusters share one summed sign (see _random_blocks)
        alike, multiplicity = np.unique(np.stack([y, n], axis=1), axis=0, return_counts=True)
        y, n = alike[:, 0], alike[:, 1]
        blocks = _random_blocks(multiplicity, n_random, seed)
    u = y - est * n
    lefts, rights = [], []
    for g in blocks:
        c = g @ u
        b = g @ n
        s = np.where(c >= 0, 1.0, -1.0)
        constant = np.abs(b) > gap
        with np.errstate(divide="ignore", invalid="ignore"):
            right = np.where(constant, math.inf, np.abs(c) / (big_n + s * b))
            left = np.where(constant, -math.inf, -np.abs(c) / (big_n - s * b))
        lefts.append(left)
        rights.append(right)
    return est, np.concatenate(lefts), np.concatenate(rights)


def sign_flip_inference(
    totals: np.ndarray,
    sizes: np.ndarray,
    *,
    null: float,
    confidence: float = 0.95,
    max_exact: int = MAX_EXACT_CLUSTERS,
    n_random: int = N_RANDOM_FLIPS,
    seed: int = 0,
) -> SignFlipResult:
    """Sign-flip p value of ``H0: theta = null`` and the interval ``{theta0 : p(theta0) >= 1 - confidence}``.

    ``totals[c]`` is the sum of cluster ``c``'s unit values and ``sizes[c]`` its number of units
    (positive). Exact enumeration of the ``2^k`` sign vectors when ``k <= max_exact``, else the
    identity plus ``n_random`` random sign vectors from ``numpy.random.default_rng(seed)``.
    """
    y = np.asarray(totals, dtype=float).ravel()
    n = np.asarray(sizes, dtype=float).ravel()
    if y.shape != n.shape or y.size == 0:
        raise ValueError(f"sign_flip_inference: {y.size} totals and {n.size} sizes; need as many, at least one")
    if (n <= 0).any():
        raise ValueError("sign_flip_inference: every cluster needs at least one unit")
    k = y.size
    exact = k <= max_exact or 2 ** (k - 1) <= n_random + 1  # never a Monte Carlo p below 2^(1-k)
    est, left, right = flip_ends(y, n, exact=exact, n_random=n_random, seed=seed)
    scale = max(1.0, float(np.max(np.abs(y / n))), abs(est))
    tol = 1e-9 * scale
    left, right = left - tol, right + tol
    flips = right.size
    alpha = 1 - confidence
    m = max(1, math.ceil(alpha * flips - 1e-9))  # the fewest counting flips that keep p >= alpha
    upper = float(np.partition(right, flips - m)[flips - m])
    lower = float(np.partition(left, m - 1)[m - 1])
    delta = float(null) - est
    count = int(np.count_nonzero((left <= delta) & (delta <= right)))
    return SignFlipResult(est, count / flips, est + lower, est + upper, flips, exact)
