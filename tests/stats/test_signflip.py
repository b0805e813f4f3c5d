"""The cluster sign-flip test and its inversion: hand-computed p values, a brute-force reference for
p and for the interval's ends, the 2^(1-k) floor, Monte Carlo against exact."""

import itertools

import numpy as np
import pytest

from biaslab.stats.signflip import sign_flip_inference


def brute_p(totals, sizes, null):
    """Enumerate every sign pattern of the cluster residuals Y_c - null * n_c."""
    e = np.asarray(totals, float) - null * np.asarray(sizes, float)
    observed = abs(e.sum())
    hits = sum(
        abs(np.dot(g, e)) >= observed - 1e-9 * max(1.0, observed) for g in itertools.product((1, -1), repeat=e.size)
    )
    return hits / 2**e.size


def test_three_clusters_by_hand():
    # sizes 4, 2, 2 pairs with 4, 2, 0 stereotypical; null 0.5: residuals (2, 1, -1), T = 2.
    # the 8 sign patterns give sums 2, 4, 0, 2, -2, 0, -4, -2: |sum| >= 2 for 6 of them
    r = sign_flip_inference([4, 2, 0], [4, 2, 2], null=0.5)
    assert r.estimate == pytest.approx(6 / 8) and r.p == pytest.approx(6 / 8) and r.exact and r.n_flips == 8
    # residuals (1, 1.5, 1.5): only the all-plus and all-minus patterns reach |4|: p = 2/8, the floor
    r = sign_flip_inference([2, 3, 4], [2, 3, 5], null=0.5)
    assert r.p == pytest.approx(2 ** (1 - 3))
    # with 3 clusters no 95% interval exists (every null keeps p >= 0.25)
    assert r.ci_low == -np.inf and r.ci_high == np.inf


def test_six_clusters_by_hand():
    # six single units 1..6, null 0: every residual positive, only +-(all) reach 21: p = 2/64
    r = sign_flip_inference([1, 2, 3, 4, 5, 6], np.ones(6), null=0)
    assert r.p == pytest.approx(2 / 64) and r.estimate == pytest.approx(3.5)
    # alpha * 64 = 3.2: the interval keeps nulls where at least 4 patterns count. At null 1 the
    # residuals are (0, 1, 2, 3, 4, 5), T = 15: +-(all) and the two that flip only the 0 count -> 4
    assert brute_p([1, 2, 3, 4, 5, 6], np.ones(6), 1.0) == pytest.approx(4 / 64)
    assert r.ci_low == pytest.approx(1.0, abs=1e-6)  # just below 1, only the two constant patterns count
    assert brute_p([1, 2, 3, 4, 5, 6], np.ones(6), 1.0 - 1e-6) == pytest.approx(2 / 64)


@pytest.mark.parametrize("seed", range(40))
def test_p_and_interval_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(6, 10))
    sizes = rng.integers(1, 7, k).astype(float)
    totals = rng.normal(0.4, 1.0, k) * sizes
    for null in rng.normal(0.4, 1.0, 5):
        r = sign_flip_inference(totals, sizes, null=null)
        assert r.p == pytest.approx(brute_p(totals, sizes, null), abs=1e-12)
    r = sign_flip_inference(totals, sizes, null=0.0)
    span = r.ci_high - r.ci_low
    # the ends are where the brute-force p crosses 0.05: inside just within an end, outside just beyond it
    eps = 1e-6 * span
    for inside, outside in ((r.ci_low + eps, r.ci_low - eps), (r.ci_high - eps, r.ci_high + eps)):
        assert brute_p(totals, sizes, inside) >= 0.05
        assert brute_p(totals, sizes, outside) < 0.05
    for null in np.linspace(r.ci_low - span, r.ci_high + span, 31):  # agreement, same flips
        if min(abs(null - r.ci_low), abs(null - r.ci_high)) < 1e-9 * span:
            continue  # exactly at an end: a floating-point tie, either answer is right
        res = sign_flip_inference(totals, sizes, null=null)
        assert (res.p < 0.05) == (null < r.ci_low or null > r.ci_high)


def test_never_below_two_to_the_one_minus_k():
    rng = np.random.default_rng(3)
    for k in (2, 3, 5, 8, 13, 14, 15, 17, 25):
        sizes = rng.integers(1, 5, k).astype(float)
        totals = sizes * (5 + rng.random(k))  # every cluster far above the null
        r = sign_flip_inference(totals, sizes, null=0.0)
        assert r.p >= 2.0 ** (1 - k) * (1 - 1e-12)
        assert r.exact == (k <= 16)


def test_monte_carlo_is_seeded_and_close_to_exact():
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 6, 16).astype(float)
    totals = (rng.normal(0.25, 1, 16)) * sizes
    exact = sign_flip_inference(totals, sizes, null=0.0)
    mc = sign_flip_inference(totals, sizes, null=0.0, max_exact=0, seed=7)
    assert exact.exact and not mc.exact and mc.n_flips == 10_000
    assert mc == sign_flip_inference(totals, sizes, null=0.0, max_exact=0, seed=7)
    assert abs(mc.p - exact.p) < 4 * np.sqrt(exact.p * (1 - exact.p) / 10_000) + 1e-4
    assert mc.ci_low == pytest.approx(exact.ci_low, abs=0.1 * (exact.ci_high - exact.ci_low))


def test_alike_clusters_drawn_together_match_exact():
    # 16 single units with only three distinct values: the Monte Carlo draws one binomial per
    # value; its p must match the enumeration of all 2^16 patterns
    d = np.array([1.0] * 7 + [-1.0] * 2 + [0.0] * 7)
    exact = sign_flip_inference(d, np.ones(16), null=0.0)
    assert exact.p == pytest.approx(brute_p(d, np.ones(16), 0.0))
    mc = sign_flip_inference(d, np.ones(16), null=0.0, max_exact=0, seed=1)
    assert abs(mc.p - exact.p) < 4 * np.sqrt(exact.p * (1 - exact.p) / 10_000)
    # at the null 0 the zero units do nothing: this is the exact McNemar (sign) test, 7 vs 2
    from scipy.stats import binomtest

    assert exact.p == pytest.approx(binomtest(7, 9).pvalue)


def test_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        sign_flip_inference([], [], null=0)
    with pytest.raises(ValueError, match="at least one unit"):
        sign_flip_inference([1.0, 2.0], [1.0, 0.0], null=0)
