"""Paired comparisons of two runs on the same items: an exact McNemar test, a paired swap
(sign-flip) permutation test of any metric, and a paired bootstrap CI of a metric's difference.

The two runs are two tables with one row per shared item, in the same order (``a[k]`` and
``b[k]`` are the same item). A metric function maps a table to ``{metric: value}``.

* :func:`mcnemar_exact` -- two runs' binary decisions per pair (e.g. "the model preferred the
  stereotypical sentence"). Only discordant pairs carry information: with ``n10`` pairs that are
  1 in A and 0 in B and ``n01`` the other way, under H0 (both runs equally likely to say 1) the
  count ``n01`` is Binomial(n10 + n01, 1/2); p is the exact two-sided binomial p value
  (``scipy.stats.binomtest``). No discordant pair: p = 1.
* :func:`paired_swap_test` -- under H0 "the two runs are exchangeable on every item", each item's
  A row and B row may be swapped with probability 1/2. The statistic is ``metric(B) - metric(A)``;
  for a metric that is a mean of per-item values this is exactly the sign-flip test of the
  per-item differences. Exact enumeration when ``2^(n-1) <= n_permutations + 1`` (so that no
  Monte Carlo p falls below the exact minimum ``2^(1-n)``), else Monte Carlo with
  ``p = (1 + #{|T*| >= |T|}) / (1 + n_permutations)``.
* :func:`paired_bootstrap_ci` -- resampling units (items, or clusters of items such as the pairs
  of one predicate, resampled within their stratum) are drawn with replacement; the same draw is
  applied to both runs and the difference taken; 95% percentile interval.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from biaslab.stats.significance import TestResult

Table = Mapping[str, np.ndarray]
MetricFn = Callable[[Table], Mapping[str, float]]

__all__ = ["mcnemar_exact", "paired_swap_test", "paired_bootstrap_ci", "take_rows"]


def mcnemar_exact(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray) -> TestResult:
    """Exact two-sided McNemar test of paired binary outcomes; ``statistic`` is ``n01 - n10``."""
    from scipy.stats import binomtest

    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"mcnemar_exact: a has shape {a.shape} and b {b.shape}; they must be paired")
    n10 = int(np.count_nonzero(a & ~b))
    n01 = int(np.count_nonzero(~a & b))
    n = n10 + n01
    if n == 0:
        return TestResult(0.0, 1.0, int(a.size), "exact McNemar (no discordant pairs)")
    p = float(binomtest(n01, n, 0.5, alternative="two-sided").pvalue)
    return TestResult(float(n01 - n10), p, int(a.size), f"exact McNemar ({n10} vs {n01} discordant)")


def take_rows(table: Table, idx: np.ndarray) -> dict[str, np.ndarray]:
    return {k: np.asarray(v)[idx] for k, v in table.items()}


def _swap(a: Table, b: Table, mask: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    sa, sb = {}, {}
    for k in a:
        va, vb = np.asarray(a[k]), np.asarray(b[k])
        m = mask.reshape((-1,) + (1,) * (va.ndim - 1))
        sa[k] = np.where(m, vb, va)
        sb[k] = np.where(m, va, vb)
    return sa, sb


def _diffs(fn: MetricFn, a: Table, b: Table, names: Sequence[str]) -> np.ndarray:
    fa, fb = fn(a), fn(b)
    return np.array([_num(fb.get(n)) - _num(fa.get(n)) for n in names], dtype=float)


def _num(v: object) -> float:
    return float(v) if isinstance(v, (int, float, np.floating, np.integer)) else math.nan


def paired_swap_test(
    a: Table, b: Table, fn: MetricFn, names: Sequence[str], *, n_permutations: int = 2000, seed: int = 0
) -> dict[str, TestResult]:
    """Two-sided paired permutation p value of ``fn(b)[name] - fn(a)[name]`` for every name."""
    n = len(next(iter(a.values())))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        observed = _diffs(fn, a, b, names)
        tol = 1e-10 * np.maximum(1.0, np.abs(observed))
        # enumerate whenever a Monte Carlo p could fall below the exact minimum 2^(1-n)
        exact = n < 20 and 2 ** (n - 1) <= n_permutations + 1
        if exact:
            masks = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
        else:
            rng = np.random.default_rng(seed)
            masks = rng.integers(0, 2, size=(n_permutations, n)).astype(bool)
        count = np.zeros(len(names))
        valid = np.zeros(len(names))
        for mask in masks:
            d = _diffs(fn, *_swap(a, b, mask), names)
            ok = np.isfinite(d)
            valid += ok
            count += ok & (np.abs(np.where(ok, d, 0.0)) >= np.abs(observed) - tol)
    method = (
        f"paired sign-flip permutation, exact ({len(masks)} arrangements)"
        if exact
        else f"paired sign-flip permutation, {n_permutations} random"
    )
    out = {}
    for i, name in enumerate(names):
        if not math.isfinite(observed[i]) or valid[i] == 0:
            out[name] = TestResult(math.nan, math.nan, n, method + " (undefined)")
        elif exact:
            out[name] = TestResult(float(observed[i]), float(count[i] / valid[i]), n, method)
        else:
            out[name] = TestResult(float(observed[i]), float((count[i] + 1) / (valid[i] + 1)), n, method)
    return out


def paired_bootstrap_ci(
    a: Table,
    b: Table,
    fn: MetricFn,
    names: Sequence[str],
    *,
    units: Sequence[np.ndarray] | None = None,
    strata: Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, tuple[float | None, float | None]]:
    """Percentile CI of ``fn(b)[name] - fn(a)[name]`` over paired resamples.

    ``units``: row-index arrays of the resampling units (default: every row its own unit);
    ``strata``: one label per unit; units are resampled within their stratum.
    """
    n = len(next(iter(a.values())))
    if units is None:
        units = [np.array([i]) for i in range(n)]
    strata = list(strata) if strata is not None else ["all"] * len(units)
    by_stratum: dict[str, list[int]] = {}
    for u, s in enumerate(strata):
        by_stratum.setdefault(str(s), []).append(u)
    rng = np.random.default_rng(seed)
    samples = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for _ in range(n_resamples):
            picked = [
                units[u]
                for members in by_stratum.values()
                for u in rng.choice(members, size=len(members), replace=True)
            ]
            idx = np.concatenate(picked) if picked else np.array([], dtype=int)
            samples.append(_diffs(fn, take_rows(a, idx), take_rows(b, idx), names))
    arr = np.array(samples, dtype=float).reshape(n_resamples, len(names))
    alpha = (1 - confidence) / 2
    out: dict[str, tuple[float | None, float | None]] = {}
    for i, name in enumerate(names):
        col = arr[:, i][np.isfinite(arr[:, i])]
        if col.size < max(10, n_resamples // 2):
            out[name] = (None, None)
        else:
            out[name] = (float(np.quantile(col, alpha)), float(np.quantile(col, 1 - alpha)))
    return out
