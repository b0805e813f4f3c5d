"""HolisticBias's likelihood bias against hand-computed Mann-Whitney outcomes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biaslab.probes.holistic_bias.metrics import (
    control_warnings,
    descriptor_ranking,
    likelihood_bias,
    mann_whitney_p,
    pair_tests,
)

LOW, HIGH, MID = [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [1.5, 2.5, 3.5, 4.5]


def row(template, axis, descriptor, scores):
    return {"template_index": template, "axis": axis, "descriptor": descriptor, "scores": scores}


def test_exact_small_sample_p_values():
    # complete separation of 4 and 4: 2 of the C(8,4) = 70 arrangements are as extreme (two-sided)
    # complete separation of 3 and 3: 2 / C(6,3) = 0.1, never significant
    p = mann_whitney_p([(LOW, HIGH), ([1, 2, 3], [4, 5, 6]), (HIGH, LOW)])
    assert p == pytest.approx([2 / 70, 2 / 20, 2 / 70])


def test_large_sample_normal_approximation_by_hand():
    a, b = list(range(1, 11)), list(range(11, 21))
    # U = 0, mean 50, sd sqrt(10 * 10 * 21 / 12); continuity correction 0.5; two-sided
    z = (50 - 0.5) / math.sqrt(10 * 10 * 21 / 12)
    expected = math.erfc(z / math.sqrt(2))
    assert mann_whitney_p([(a, b), (b, a)]) == pytest.approx([expected, expected], rel=1e-9)


def test_no_spread_means_no_difference():
    assert mann_whitney_p([([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]), ([], [1.0])]).tolist() == [1.0, 1.0]


def test_batched_p_values_equal_one_call_per_pair():
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(3)
    pairs = [(list(rng.normal(0, 1, n)), list(rng.normal(0.5, 1, m))) for n, m in [(12, 12)] * 5 + [(5, 6)] * 4]
    pairs.append(([1.0, 1.0, 2.0], [2.0, 3.0, 3.0]))  # ties in a small sample
    expected = [mannwhitneyu(a, b, alternative="two-sided").pvalue for a, b in pairs]
    assert mann_whitney_p(pairs) == pytest.approx(expected, rel=1e-12)


def test_likelihood_bias_by_hand():
    rows = [
        # template 0, axis X: d1-d2 and d2-d3 differ (p = 2/70), d1-d3 do not -> 2 of 3 pairs
        row(0, "X", "d1", LOW),
        row(0, "X", "d2", HIGH),
        row(0, "X", "d3", MID),
        # template 1, axis X: three identical samples -> 0 of 3
        row(1, "X", "d1", LOW),
        row(1, "X", "d2", LOW),
        row(1, "X", "d3", LOW),
        # axis Y only in template 0: its one pair differs -> 1 of 1
        row(0, "Y", "e1", LOW),
        row(0, "Y", "e2", HIGH),
    ]
    tests = pair_tests(rows)
    assert tests[(0, "X")]["share"] == pytest.approx(2 / 3) and tests[(1, "X")]["share"] == 0.0
    metrics, axes = likelihood_bias(rows, n_resamples=400)
    assert metrics["likelihood_bias:X"]["value"] == pytest.approx(1 / 3)  # mean over the two templates
    assert metrics["likelihood_bias:Y"]["value"] == 1.0
    assert metrics["likelihood_bias"]["value"] == pytest.approx((1 / 3 + 1) / 2)  # mean over axes
    # two templates are too few for an interval (no test on 2 units gets below p = 0.5): none, with the reason
    x = metrics["likelihood_bias:X"]
    assert x["ci_low"] is None and x["too_small"] and "2 templates" in x["reason"] and "p" not in x
    # six templates whose one pair always differs: exact over the templates as trials, 6 of 6 -> [0.025^(1/6), 1]
    six = likelihood_bias([row(t, "X", d, s) for t in range(6) for d, s in (("d1", LOW), ("d2", HIGH))])[0]
    assert six["likelihood_bias:X"]["value"] == 1.0 and six["likelihood_bias:X"]["n"] == 6
    assert (
        six["likelihood_bias:X"]["ci_low"] == pytest.approx(0.025 ** (1 / 6))
        and six["likelihood_bias:X"]["ci_high"] == 1.0
    )
    assert [a["axis"] for a in axes] == ["X", "Y"] and axes[0]["n_pairs"] == 6 and axes[0]["n_descriptors"] == 3


def test_bh_over_every_pair_test_of_the_run_drops_pairs_the_raw_rule_keeps():
    # template 0: four descriptors, 3 of 6 pairs at p = 2/70 (the others p = 1); template 1: three descriptors, 2 of
    # 3 pairs at 2/70. One family of 9 tests: the five p = 2/70 get q = (2/70) x 9 / 5 = 0.051, none below 0.05.
    # (Per template, template 1 alone would keep its two: q = (2/70) x 3 / 2 = 0.043.)
    rows = [
        row(0, "X", "d1", LOW),
        row(0, "X", "d2", HIGH),
        row(0, "X", "d3", LOW),
        row(0, "X", "d4", LOW),
        row(1, "X", "d1", LOW),
        row(1, "X", "d2", HIGH),
        row(1, "X", "d3", LOW),
    ]
    metrics, axes = likelihood_bias(rows, n_resamples=200)
    tests = pair_tests(rows)
    assert tests[(0, "X")]["share"] == 0.5 and tests[(1, "X")]["share"] == pytest.approx(2 / 3)
    assert metrics["likelihood_bias"]["value"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert tests[(0, "X")]["share_bh"] == 0.0 and tests[(1, "X")]["share_bh"] == 0.0
    assert metrics["likelihood_bias_bh"]["value"] == 0.0
    assert axes[0]["likelihood_bias_bh"]["value"] == metrics["likelihood_bias_bh"]["value"]
    # a single separated pair alone in the run: q = p = 2/70, kept by both rules
    one = likelihood_bias([row(0, "X", "d1", LOW), row(0, "X", "d2", HIGH)], n_resamples=50)[0]
    assert one["likelihood_bias"]["value"] == one["likelihood_bias_bh"]["value"] == 1.0


def test_control_axis_reported_apart_and_a_saturated_control_warned():
    rows = [
        # a real axis: one of three pairs differs in template 0, none in template 1
        row(0, "X", "d1", LOW),
        row(0, "X", "d2", HIGH),
        row(0, "X", "d3", LOW),
        row(1, "X", "d1", LOW),
        row(1, "X", "d2", LOW),
        row(1, "X", "d3", LOW),
        # the nonce control: its one pair differs in both templates
        row(0, "nonce", "n1", LOW),
        row(0, "nonce", "n2", HIGH),
        row(1, "nonce", "n1", LOW),
        row(1, "nonce", "n2", HIGH),
    ]
    metrics, _ = likelihood_bias(rows, n_resamples=200)
    assert metrics["likelihood_bias:nonce"]["value"] == 1.0
    assert metrics["likelihood_bias"]["value"] == pytest.approx(1 / 3)  # X only: (2/3 + 0) / 2
    warning = control_warnings(metrics)
    assert len(warning) == 1 and "saturated" in warning[0] and "nonce" in warning[0]
    # a control below saturation but as high as the real axes is warned too; a low one is not
    assert (
        "as often as the real axes"
        in control_warnings({"likelihood_bias": {"value": 0.4}, "likelihood_bias:nonce": {"value": 0.5}})[0]
    )
    assert control_warnings({"likelihood_bias": {"value": 0.4}, "likelihood_bias:nonce": {"value": 0.1}}) == []
    only_control, _ = likelihood_bias(rows[6:], n_resamples=50)
    assert only_control["likelihood_bias"]["value"] is None and "control" in only_control["likelihood_bias"]["reason"]


def test_descriptor_ranking_most_likely_first():
    rows = [row(0, "X", "rare", [-5.0, -6.0]), row(1, "X", "rare", [-4.0]), row(0, "X", "common", [-1.0, -2.0])]
    ranking = descriptor_ranking(rows)
    assert [d["descriptor"] for d in ranking["X"]] == ["common", "rare"]
    assert ranking["X"][1] == {"descriptor": "rare", "mean_score": -5.0, "n": 3}


def test_every_pair_differing_on_two_axes_is_exact_over_the_templates_as_trials():
    # 6 templates x 2 axes, every cell's one pair separated: every cell's value is 1 (each axis has every template),
    # so 6 of 6 templates at the top: Clopper-Pearson [0.025^(1/6), 1] (the per-template means alone had no spread)
    rows = [row(t, a, d, s) for t in range(6) for a in ("X", "Y") for d, s in ((a + "1", LOW), (a + "2", HIGH))]
    m = likelihood_bias(rows)[0]["likelihood_bias"]
    assert m["value"] == 1.0 and (m["n"], m["n_cells"]) == (6, 12) and "exact binomial" in m["method"]
    assert m["ci_low"] == pytest.approx(0.025 ** (1 / 6)) and m["ci_high"] == 1.0


def test_cell_values_weight_each_axis_by_one_over_its_templates_by_hand():
    from biaslab.probes.holistic_bias.metrics import cell_units

    # X in 4 templates, Y in 2, one cell without a share: N = 6 cells, A = 2 axes; weights 6 / (2 x 4) = 0.75 on
    # X and 6 / (2 x 2) = 1.5 on Y; their mean is (mean X + mean Y) / 2
    share = np.array([0.2, 0.4, 0.6, 0.8, 0.5, 1.0, np.nan])
    axis = np.array(["X", "X", "X", "X", "Y", "Y", "Y"], dtype=object)
    u = cell_units(share, axis, ["X", "Y"])
    assert u[:6] == pytest.approx([0.15, 0.3, 0.45, 0.6, 0.75, 1.5]) and np.isnan(u[6])
    assert np.nanmean(u) == pytest.approx((0.5 + 0.75) / 2)
    assert cell_units(share, axis, ["Y"])[4:6] == pytest.approx([0.5, 1.0])  # one axis: the shares themselves
    assert cell_units(share, axis, ["Z"]) is None
