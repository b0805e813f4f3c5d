"""cluster_inference / paired_cluster_inference: the issue's small groups, exact cases by hand, the
choice of procedure, and agreement of every interval with its p value on many random inputs."""

import itertools

import numpy as np
import pytest
from scipy.stats import binom

from biaslab.stats.clustered import (
    MIN_ROBUST_CLUSTERS,
    attainable_min_p,
    cluster_inference,
    min_clusters,
    paired_cluster_inference,
)

Z = 1.959963984540054


def pairs(rng, k, size=(10, 30), mean=0.65, icc=0.15):
    """Bias indicators (0/100) of pairs in k predicate clusters with intra-cluster correlation."""
    s = 1 / icc - 1
    p = rng.beta(mean * s, (1 - mean) * s, k)
    sizes = rng.integers(size[0], size[1] + 1, k)
    cl = np.repeat(np.arange(k), sizes)
    return 100.0 * (rng.random(sizes.sum()) < p[cl]), cl


def test_min_clusters_and_floor():
    assert min_clusters(0.95) == 6 and min_clusters(0.90) == 5 and min_clusters(0.99) == 8
    assert attainable_min_p(2) == 0.5 and attainable_min_p(6) == 1 / 32 and attainable_min_p(1) == 1.0


def test_two_predicates_never_get_a_small_p():
    # the compare row: a group of 2 predicates, run B stereotypical on 13 more pairs
    a = np.zeros(40)
    b = np.where(np.arange(40) < 13, 100.0, 0.0)
    cl = np.repeat(["p1", "p2"], 20)
    r = paired_cluster_inference(a, b, cl, bounds=(0, 100), label="predicates")
    assert r["p"] >= 0.5 and r["ci_low"] is None and r["too_small"] is True
    assert r["reason"].startswith("2 predicates: too few to estimate spread")
    assert r["value"] == pytest.approx(100 * 13 / 40) and (r["a"], r["b"]) == (0.0, 32.5)
    # the same pairs taken as independent would be "significant": the clustering is what makes it honest
    assert paired_cluster_inference(a, b, None, bounds=(0, 100))["p"] < 0.001


def test_five_clusters_have_no_interval_and_no_small_p():
    # the "bias_score:disabled 87.6 [79.0, 93.3] n 5 p 0.0625": no 95% interval exists
    rng = np.random.default_rng(0)
    y, cl = pairs(rng, 5, mean=0.88, icc=0.05)
    r = cluster_inference(y, cl, null=50, bounds=(0, 100), label="predicates")
    assert r["ci_low"] is None and r["ci_high"] is None and r["too_small"] and r["n_clusters"] == 5
    assert r["p"] >= 2**-4 and "5 predicates" in r["reason"] and "0.0625" in r["reason"]


def test_every_pair_stereotypical_over_ten_predicates():
    # no spread between predicates, but each predicate is one trial: Clopper-Pearson 10 of 10
    cl = np.repeat(np.arange(10), 20)
    r = cluster_inference(np.full(200, 100.0), cl, null=50, bounds=(0, 100), label="predicates")
    assert r["value"] == 100.0 and r["ci_high"] == 100.0
    assert r["ci_low"] == pytest.approx(100 * 0.025 ** (1 / 10)) and r["ci_low"] == pytest.approx(69.150, abs=1e-3)
    assert r["p"] == pytest.approx(2 * 0.5**10) and r["interval"] == "clopper-pearson"
    assert "10 predicates as trials" in r["method"]
    none = cluster_inference(np.zeros(200), cl, null=50, bounds=(0, 100))
    assert none["ci_low"] == 0.0 and none["ci_high"] == pytest.approx(100 * (1 - 0.025**0.1))


def test_independent_pairs_are_exact_binomial():
    y = np.array([100.0] * 7 + [0.0] * 3)
    r = cluster_inference(y, None, null=50, bounds=(0, 100))
    # P(X >= 7 | 10, 1/2) = 176 / 1024; central two-sided p = 2 * 176 / 1024
    assert r["p"] == pytest.approx(2 * 176 / 1024) and r["n_clusters"] == 10
    assert r["ci_low"] == pytest.approx(34.755, abs=1e-3) and r["ci_high"] == pytest.approx(93.326, abs=1e-3)
    assert "Clopper-Pearson" in r["method"]
    assert binom.sf(6, 10, r["ci_low"] / 100) == pytest.approx(0.025)  # the exact inversion


def test_every_cluster_at_the_same_interior_mean():
    cl = np.repeat(np.arange(8), 4)
    y = np.tile([100.0, 0.0, 100.0, 0.0], 8)  # every predicate at 50
    r = cluster_inference(y, cl, null=50, bounds=(0, 100))
    assert r["ci_low"] is None and r["degenerate"] and r["p"] == 1.0 and "same mean" in r["reason"]
    r = cluster_inference(y, cl, null=30, bounds=(0, 100))
    assert r["p"] is None  # no spread, no test


def test_no_change_between_runs():
    a = np.random.default_rng(1).choice([0.0, 100.0], 200)
    cl = np.repeat(np.arange(10), 20)
    r = paired_cluster_inference(a, a, cl, bounds=(0, 100))
    half = 100 * (1 - 0.025 ** (1 / 10))
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(-half), pytest.approx(half)) and r["p"] == 1.0
    assert "no unit changed" in r["method"] and "reason" not in r
    r = paired_cluster_inference(a, a, cl, null=40, bounds=(0, 100))
    assert r["p"] == pytest.approx(2 * 0.6**10) and r["p"] < 0.05 and 40 > r["ci_high"]
    # without bounds nothing bounds the change: no interval, p 1 against 0
    r = paired_cluster_inference(a / 100, a / 100, cl)
    assert r["ci_low"] is None and r["p"] == 1.0 and r["degenerate"]


def test_every_unit_changed_upwards():
    cl = np.repeat(np.arange(8), 5)
    r = paired_cluster_inference(np.zeros(40), np.full(40, 100.0), cl, bounds=(0, 100))
    assert r["value"] == 100 and r["ci_high"] == 100
    assert r["ci_low"] == pytest.approx(-100 + 200 * 0.025 ** (1 / 8))
    assert r["p"] == pytest.approx(2 * 0.5**8)


def test_cluster_labels_are_per_stratum_and_the_test_is_of_the_value_shown():
    rng = np.random.default_rng(2)
    y, cl = pairs(rng, 8)
    groups = np.where(cl < 4, "A", "B")
    labels = cl % 4  # "0".."3" in both groups: 8 clusters in all
    r = cluster_inference(y, labels, groups, null=50, bounds=(0, 100))
    assert r["n_clusters"] == 8 and r["n"] == y.size and r["value"] == pytest.approx(y.mean())
    # the p value is the sign-flip test of the cluster residuals Y_c - 50 n_c
    totals, sizes = np.bincount(cl, weights=y), np.bincount(cl)
    e = totals - 50 * sizes
    brute = np.mean([abs(np.dot(g, e)) >= abs(e.sum()) - 1e-9 for g in itertools.product((1, -1), repeat=8)])
    assert r["p"] == pytest.approx(brute)


def test_procedure_choice():
    rng = np.random.default_rng(3)
    y, cl = pairs(rng, 12)
    assert "exact (4,096" in cluster_inference(y, cl, null=50)["method"]
    y, cl = pairs(rng, 20)
    assert "random sign patterns" in cluster_inference(y, cl, null=50)["method"]
    y, cl = pairs(rng, MIN_ROBUST_CLUSTERS + 10)  # a few clusters may hold only stereotypical pairs
    r = cluster_inference(y, cl, np.where(cl % 2, "a", "b"), null=50)
    assert "CR2" in r["method"] and "within strata" in r["method"] and r["df"] < 60 - 2  # unequal sizes, 2 strata
    assert MIN_ROBUST_CLUSTERS == 30
    assert "sign-flip" in cluster_inference(y, cl, null=50, method="sign-flip")["method"]
    assert "CR2" in cluster_inference(y[:200], cl[:200], null=50, method="cluster-robust")["method"]
    # 2,000 independent pairs of which 8 changed: few informative units, so the sign-flip (McNemar) test
    a = np.zeros(2000)
    b = a.copy()
    b[:8] = 1.0
    r = paired_cluster_inference(a, b, None)
    assert "sign-flip" in r["method"] and r["p"] == pytest.approx(2 * 0.5**8, abs=0.002)


def test_null_none_gives_the_interval_only():
    rng = np.random.default_rng(4)
    y, cl = pairs(rng, 9)
    r = cluster_inference(y / 100, cl, null=None, bounds=(0, 1))
    assert r["p"] is None and r["ci_low"] < r["value"] < r["ci_high"]


@pytest.mark.parametrize("kind", ["continuous", "binary", "paired-binary", "paired-continuous"])
def test_every_interval_agrees_with_its_p_value(kind):
    """On many random inputs: with an interval, p < 0.05 exactly when it excludes the null
    (nulls exactly at an end are floating-point ties); without one, p is None or >= 0.05. Sign-flip
    and cluster-robust p values never fall below 2^(1-k)."""
    rng = np.random.default_rng(["continuous", "binary", "paired-binary", "paired-continuous"].index(kind))
    with_interval = 0
    for trial in range(150):
        k = int(rng.choice([1, 2, 3, 5, 6, 7, 9, 12, 20, 35, 60]))
        sizes = rng.integers(1, 8, k)
        cl = np.repeat(np.arange(k), sizes)
        strata = np.where(cl % 3 == 0, "x", "y") if trial % 2 else None
        shift = rng.normal(0, 1.5, k)[cl]
        if kind.endswith("binary"):
            p = 1 / (1 + np.exp(-shift))
            a = (rng.random(cl.size) < p).astype(float)
            b = np.where(rng.random(cl.size) < 0.3, 1 - a, a)
        else:
            a = shift + rng.normal(size=cl.size)
            b = a + rng.normal(0.2, 1, cl.size)
        bounds = (0.0, 1.0) if kind.endswith("binary") else None
        method = ("auto", "sign-flip", "cluster-robust")[trial % 3]
        base = dict(bounds=bounds, method=method, n_random=999, seed=trial)
        first = (
            paired_cluster_inference(a, b, cl, strata, null=0.0, **base)
            if kind.startswith("paired")
            else cluster_inference(a, cl, strata, null=0.5, **base)
        )
        lo, hi = first["ci_low"], first["ci_high"]
        centre = 0.0 if kind.startswith("paired") else 0.5
        span = (hi - lo) if lo is not None else 1.0
        nulls = np.r_[centre, rng.uniform((lo or 0) - span, (hi or 1) + span, 6)]
        if bounds is not None:
            nulls = np.clip(nulls, -1.0 if kind.startswith("paired") else 0.0, 1.0)
        for null in nulls:
            r = (
                paired_cluster_inference(a, b, cl, strata, null=null, **base)
                if kind.startswith("paired")
                else cluster_inference(a, cl, strata, null=null, **base)
            )
            assert (r["ci_low"], r["ci_high"]) == (lo, hi)  # the interval does not depend on the null
            if lo is None:
                assert r["p"] is None or r["p"] >= 0.05, r
                assert "reason" in r
                continue
            with_interval += 1
            assert lo < hi
            if min(abs(null - lo), abs(null - hi)) < 1e-9 * span:
                continue
            assert (r["p"] < 0.05) == (null < lo or null > hi), (r, null)
            if null == centre and ("sign-flip" in r["method"] or "CR2" in r["method"]):
                assert r["p"] >= attainable_min_p(r["n_clusters"]) * (1 - 1e-12)
    assert with_interval > 300  # the check above ran on many intervals


def test_bad_input():
    with pytest.raises(ValueError, match="finite"):
        cluster_inference([1.0, np.nan], null=0)
    with pytest.raises(ValueError, match="one per value"):
        cluster_inference([1.0, 2.0], [1], null=0)
    with pytest.raises(ValueError, match="outside the bounds"):
        cluster_inference([1.0, 2.0], null=0, bounds=(0, 1))
    with pytest.raises(ValueError, match="paired"):
        paired_cluster_inference([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="method"):
        cluster_inference([1.0], null=0, method="bootstrap")
    empty = cluster_inference([], null=0)
    assert empty["value"] is None and empty["reason"] == "no units" and empty["n_clusters"] == 0
