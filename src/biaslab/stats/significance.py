"""Significance tests used by the probes: permutation tests and a binomial test (q values and other adjusted
p values: :mod:`biaslab.stats.adjust`).

All randomness comes from a local ``numpy.random.Generator`` built from the ``seed`` argument,
so results are reproducible and nothing touches global RNG state.

Permutation p-values
--------------------
Both permutation tests are two-sided on the absolute value of the statistic (difference in
means, or mean of paired differences). Under either null hypothesis the permutation
distribution of the statistic has mean zero, so ``|T*| >= |T|`` is the natural two-sided event.

* When the number of distinct rearrangements is at most ``n_permutations`` (for the sign-flip
  test: at most ``2 (n_permutations + 1)``, so that a Monte Carlo p never falls below the exact
  minimum ``2^(1-n)``) the test is exact:
  every rearrangement (the observed one included) is enumerated and
  ``p = #{|T*| >= |T|} / #rearrangements``.
* Otherwise ``n_permutations`` random rearrangements are drawn and
  ``p = (1 + #{|T*| >= |T|}) / (1 + n_permutations)`` (the observed arrangement counts as one
  of the permutations, so p is never 0).

Statistics that are equal up to floating-point noise count as ties (``>=``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "TestResult",
    "permutation_test_means",
    "paired_permutation_test",
    "binomial_test",
]

# Max number of float64 cells in one block of permuted data (keeps memory ~40 MB).
_BLOCK_CELLS = 5_000_000


@dataclass(frozen=True)
class TestResult:
    """Outcome of a significance test."""

    __test__ = False  # not a pytest test class

    statistic: float  # observed statistic (NaN if the test is undefined)
    p: float  # two-sided p-value (NaN if undefined)
    n: int  # number of observations used
    method: str  # short description, e.g. "permutation, two-sample, 10000 random"

    def as_dict(self) -> dict:
        return {
            "statistic": _none_if_nan(self.statistic),
            "p": _none_if_nan(self.p),
            "n": self.n,
            "method": self.method,
        }


def _none_if_nan(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _tolerance(observed: float) -> float:
    return 1e-10 * max(1.0, abs(observed))


def permutation_test_means(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_permutations: int = 10_000,
    seed: int | Sequence[int] = 0,
) -> TestResult:
    """Two-sample permutation test of ``mean(a) - mean(b)`` (group labels are shuffled)."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    na, nb = a.size, b.size
    n = na + nb
    if na == 0 or nb == 0:
        return TestResult(math.nan, math.nan, n, "permutation, two-sample (undefined: empty group)")
    observed = float(a.mean() - b.mean())
    pooled = np.concatenate([a, b])
    total = float(pooled.sum())
    tol = _tolerance(observed)

    n_arrangements = math.comb(n, na)
    if n_arrangements <= n_permutations:
        count = 0
        for idx in _combination_blocks(n, na):
            sa = pooled[idx].sum(axis=1)
            stats = sa / na - (total - sa) / nb
            count += int(np.count_nonzero(np.abs(stats) >= abs(observed) - tol))
        return TestResult(
            observed, count / n_arrangements, n, f"permutation, two-sample, exact ({n_arrangements} arrangements)"
        )

    rng = np.random.default_rng(seed)
    count = 0
    block = max(1, _BLOCK_CELLS // n)
    done = 0
    while done < n_permutations:
        k = min(block, n_permutations - done)
        perm = rng.permuted(np.broadcast_to(pooled, (k, n)), axis=1)
        sa = perm[:, :na].sum(axis=1)
        stats = sa / na - (total - sa) / nb
        count += int(np.count_nonzero(np.abs(stats) >= abs(observed) - tol))
        done += k
    return TestResult(
        observed, (count + 1) / (n_permutations + 1), n, f"permutation, two-sample, {n_permutations} random"
    )


def paired_permutation_test(
    differences: Sequence[float] | np.ndarray,
    *,
    n_permutations: int = 10_000,
    seed: int | Sequence[int] = 0,
) -> TestResult:
    """Paired (sign-flip) permutation test of ``mean(differences) == 0``.

    Each observation is a pair of scores (x_i, y_i) and ``differences[i] = x_i - y_i``; under
    the null hypothesis which score belongs to which condition is arbitrary, so each difference
    keeps or flips its sign with probability 1/2.
    """
    d = np.asarray(differences, dtype=float).ravel()
    n = d.size
    if n == 0:
        return TestResult(math.nan, math.nan, 0, "permutation, paired sign-flip (undefined: no pairs)")
    observed = float(d.mean())
    tol = _tolerance(observed)

    if n < 63 and 2 ** (n - 1) <= n_permutations + 1:  # else a Monte Carlo p could fall below 2^(1-n)
        n_arrangements = 2**n
        signs = 1 - 2 * ((np.arange(n_arrangements)[:, None] >> np.arange(n)) & 1)
        stats = (signs * d).mean(axis=1)
        count = int(np.count_nonzero(np.abs(stats) >= abs(observed) - tol))
        return TestResult(
            observed, count / n_arrangements, n, f"permutation, paired sign-flip, exact ({n_arrangements} arrangements)"
        )

    rng = np.random.default_rng(seed)
    count = 0
    block = max(1, _BLOCK_CELLS // n)
    done = 0
    while done < n_permutations:
        k = min(block, n_permutations - done)
        signs = rng.integers(0, 2, size=(k, n), dtype=np.int8) * 2 - 1
        stats = (signs @ d) / n
        count += int(np.count_nonzero(np.abs(stats) >= abs(observed) - tol))
        done += k
    return TestResult(
        observed, (count + 1) / (n_permutations + 1), n, f"permutation, paired sign-flip, {n_permutations} random"
    )


def binomial_test(k: int, n: int, p: float = 0.5) -> TestResult:
    """Exact two-sided binomial test of ``k`` successes in ``n`` trials against success rate ``p``."""
    from scipy.stats import binomtest

    if n <= 0:
        return TestResult(math.nan, math.nan, 0, "binomial, two-sided (undefined: no trials)")
    res = binomtest(int(k), int(n), p=p, alternative="two-sided")
    return TestResult(k / n, float(res.pvalue), int(n), f"binomial, two-sided, H0 p={p:g}")


def _combination_blocks(n: int, k: int, block_rows: int = 100_000):
    """All k-subsets of range(n) as index arrays of shape (rows, k), in blocks."""
    it = itertools.combinations(range(n), k)
    while True:
        chunk = list(itertools.islice(it, block_rows))
        if not chunk:
            return
        yield np.array(chunk, dtype=np.intp).reshape(len(chunk), k)
