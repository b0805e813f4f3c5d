"""Paired tests and the paired bootstrap, against hand-computed cases."""

import numpy as np
import pytest

from biaslab.stats.paired import mcnemar_exact, paired_bootstrap_ci, paired_swap_test
from biaslab.stats.significance import paired_permutation_test


def test_mcnemar_by_hand():
    # 1 pair 1 -> 0, 7 pairs 0 -> 1, 4 concordant: P(X <= 1 or X >= 7 | n=8) = 2 * (1 + 8) / 256
    a = [1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    b = [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]
    res = mcnemar_exact(a, b)
    assert res.p == pytest.approx(18 / 256, abs=1e-12)
    assert res.statistic == 6 and res.n == 12 and "1 vs 7" in res.method
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]).p == 1.0  # no discordant pair
    # symmetric: swapping the runs gives the same p
    assert mcnemar_exact(b, a).p == pytest.approx(res.p)
    # 5 vs 5 discordant: no evidence at all
    assert mcnemar_exact([1] * 5 + [0] * 5, [0] * 5 + [1] * 5).p == pytest.approx(1.0)


def mean_fn(t):
    return {"mean": float(np.mean(t["x"]))}


def test_swap_test_is_the_sign_flip_test_by_hand():
    a = {"x": np.array([0.0, 0.0, 0.0])}
    b = {"x": np.array([1.0, 2.0, 3.0])}
    # 8 sign patterns of (1, 2, 3); |mean| >= 2 only for all + and all -: p = 2/8
    res = paired_swap_test(a, b, mean_fn, ["mean"], n_permutations=1000)["mean"]
    assert res.p == pytest.approx(0.25) and res.statistic == pytest.approx(2.0) and "exact" in res.method


def test_swap_test_equals_the_exact_sign_flip_of_per_item_differences():
    rng = np.random.default_rng(3)
    xa, xb = rng.normal(size=10), rng.normal(0.5, 1, size=10)
    swap = paired_swap_test({"x": xa}, {"x": xb}, mean_fn, ["mean"], n_permutations=1024)["mean"]
    flip = paired_permutation_test(xb - xa, n_permutations=1024)
    assert swap.p == pytest.approx(flip.p) and swap.statistic == pytest.approx(flip.statistic)


def test_swap_test_monte_carlo_is_seeded_and_never_zero():
    a = {"x": np.zeros(40)}
    b = {"x": np.ones(40)}
    r1 = paired_swap_test(a, b, mean_fn, ["mean"], n_permutations=500, seed=1)["mean"]
    r2 = paired_swap_test(a, b, mean_fn, ["mean"], n_permutations=500, seed=1)["mean"]
    assert r1.p == r2.p == pytest.approx(1 / 501)


def test_paired_bootstrap_of_a_constant_shift_is_that_shift():
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    ci = paired_bootstrap_ci({"x": x}, {"x": x + 0.7}, mean_fn, ["mean"], n_resamples=200)["mean"]
    assert ci == (pytest.approx(0.7), pytest.approx(0.7))
    # an unpaired look at the same data would have a wide interval; the paired one is zero-width
    same = paired_bootstrap_ci({"x": x}, {"x": x}, mean_fn, ["mean"], n_resamples=200)["mean"]
    assert same == (0.0, 0.0)


def test_cluster_bootstrap_resamples_whole_clusters_within_strata():
    # cluster 1 = items 0-2 (difference 1 each), cluster 2 = item 3 (difference 0). Resampling the
    # two clusters: P(cluster 2 twice) = 1/4, mean 0, so the 2.5% quantile is 0 (resampling the
    # four items instead: P(mean 0) = (1/4)^4, and the 2.5% quantile would be 0.25).
    a = {"x": np.zeros(4)}
    b = {"x": np.array([1.0, 1.0, 1.0, 0.0])}
    units = [np.array([0, 1, 2]), np.array([3])]
    ci = paired_bootstrap_ci(a, b, mean_fn, ["mean"], units=units, n_resamples=2000, seed=0)["mean"]
    assert ci == (0.0, 1.0)
    items = paired_bootstrap_ci(a, b, mean_fn, ["mean"], n_resamples=2000, seed=0)["mean"]
    assert items[0] == 0.25
    # each cluster its own stratum: every resample keeps both, so the difference is always 3/4
    strat = paired_bootstrap_ci(a, b, mean_fn, ["mean"], units=units, strata=["g1", "g2"], n_resamples=200)["mean"]
    assert strat == (pytest.approx(0.75), pytest.approx(0.75))
