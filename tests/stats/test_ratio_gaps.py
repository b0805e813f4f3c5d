"""Gaps between pooled ratios on shared units: the linearisation by hand, and one procedure for interval and p."""

import numpy as np
import pytest

from biaslab.stats.clustered import paired_cluster_inference
from biaslab.stats.ratio_gaps import linearized_ratio, ratio_gap


def test_linearized_ratio_by_hand():
    # num 1, 2, 0, 3 over den 2, 2, 1, 3: r = 6/8 = 0.75, mean(den) = 2, u = 0.75 + (num - 0.75 den) / 2
    r, u = linearized_ratio(np.array([1.0, 2, 0, 3]), np.array([2.0, 2, 1, 3]))
    assert r == 0.75 and u == pytest.approx([0.5, 1.0, 0.375, 1.125]) and u.mean() == pytest.approx(r)
    r, u = linearized_ratio(np.zeros(3), np.zeros(3))
    assert r is None and np.isnan(u).all()
    r, u = linearized_ratio(np.zeros(3), np.zeros(3), empty=0.0)
    assert r == 0.0 and (u == 0).all()


def test_a_gap_of_rates_with_equal_denominators_is_a_paired_mean_difference():
    # one answer per unit and condition: the rates are plain means, the linearisation changes nothing
    rng = np.random.default_rng(2)
    a, b = (rng.random(80) < 0.6).astype(float), (rng.random(80) < 0.4).astype(float)
    ones = np.ones(80)
    gap = ratio_gap(a, ones, b, ones)
    plain = paired_cluster_inference(b, a, null=0.0)
    assert gap["value"] == pytest.approx(a.mean() - b.mean()) and gap["a"] == a.mean() and gap["b"] == b.mean()
    assert (gap["ci_low"], gap["ci_high"], gap["p"]) == pytest.approx((plain["ci_low"], plain["ci_high"], plain["p"]))


def test_gap_interval_and_p_agree_at_any_confidence():
    rng = np.random.default_rng(5)
    for conf in (0.95, 1 - 0.05 / 3):
        for _ in range(100):
            den_a, den_b = rng.integers(0, 4, 60).astype(float), rng.integers(0, 4, 60).astype(float)
            num_a = rng.binomial(den_a.astype(int), 0.5).astype(float)
            num_b = rng.binomial(den_b.astype(int), rng.uniform(0.3, 0.7)).astype(float)
            g = ratio_gap(num_a, den_a, num_b, den_b, confidence=conf)
            if g["ci_low"] is None:
                continue
            assert (g["p"] < 1 - conf) == (not g["ci_low"] <= 0 <= g["ci_high"])
            assert g["value"] == pytest.approx(num_a.sum() / den_a.sum() - num_b.sum() / den_b.sum())


def test_a_condition_without_answers_leaves_the_gap_undefined():
    g = ratio_gap(np.zeros(4), np.zeros(4), np.ones(4), np.ones(4))
    assert g["value"] is None and "no answer" in g["reason"]
