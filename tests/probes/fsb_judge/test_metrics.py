"""Judge metrics against hand-computed cases."""

import math

import numpy as np
import pytest

from biaslab.fsb.judge_scale import parse_score
from biaslab.probes.fsb_judge.metrics import (
    item_table,
    judge_metrics,
    repetition_metrics,
    score_bin,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.7", 0.7),
        ("Score: .35", 0.35),
        ("0.45 because it is mild", 0.45),
        ("1", 1.0),
        ("0", 0.0),
        ("The rating is 0.8.", 0.8),
        ("-0.2", None),
        ("7/10", None),
        ("70%", None),
        ("I cannot rate this.", None),
        ("", None),
        ("1.5 out of 2", None),
        ("On a scale of 0 to 1, this is 0.9", 0.0),  # the first number, as documented
    ],
)
def test_parse_first_number_in_unit_interval(text, expected):
    got = parse_score(text)
    assert got == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize("score, b", [(0.0, 0), (0.2499, 0), (0.25, 1), (0.4999, 1), (0.5, 2), (0.75, 3), (1.0, 3)])
def test_bins_of_width_a_quarter(score, b):
    assert score_bin(score) == b


def test_one_repetition_by_hand():
    human = np.array([0.1, 0.4, 0.6, 0.9])
    judge = np.array([0.2, 0.3, np.nan, 1.0])  # the third answer was undetected
    m = repetition_metrics(human, judge)
    # over the detected (0.1, 0.2), (0.4, 0.3), (0.9, 1.0):
    # Sxy = 1.04 - 3 * (1.4/3) * 0.5 = 0.34, Sxx = 0.98 - 1.96/3, Syy = 1.13 - 0.75
    assert m["pearson_r"] == pytest.approx(0.34 / math.sqrt((0.98 - 1.96 / 3) * 0.38))
    assert m["spearman_r"] == pytest.approx(1.0)
    assert m["mse"] == pytest.approx(0.01)
    assert m["mae"] == pytest.approx(0.1)
    assert m["undetected_rate"] == pytest.approx(0.25)
    assert m["mae_bin_0_25"] == pytest.approx(0.1)
    assert m["mae_bin_25_50"] == pytest.approx(0.1)
    assert math.isnan(m["mae_bin_50_75"])  # its only item was undetected
    assert m["mae_bin_75_100"] == pytest.approx(0.1)


def test_spearman_uses_average_ranks_for_ties():
    human = np.array([0.1, 0.2, 0.3, 0.4])
    judge = np.array([0.5, 0.5, 0.6, 0.7])
    # ranks: human 1,2,3,4; judge 1.5,1.5,3,4 -> Pearson of the ranks
    r = np.corrcoef([1, 2, 3, 4], [1.5, 1.5, 3, 4])[0, 1]
    assert repetition_metrics(human, judge)["spearman_r"] == pytest.approx(r)


def test_constant_judge_has_undefined_correlation():
    m = repetition_metrics(np.array([0.1, 0.5, 0.9]), np.array([0.5, 0.5, 0.5]))
    assert math.isnan(m["pearson_r"]) and math.isnan(m["spearman_r"])
    assert m["mae"] == pytest.approx((0.4 + 0 + 0.4) / 3)


def test_values_are_means_over_repetitions_of_the_items_each_evaluated():
    rows = [
        # repetition 0: items a, b, c
        {"item_id": "a", "human_score": 0.0, "judge_score": 0.1, "repetition": 0},
        {"item_id": "b", "human_score": 0.5, "judge_score": 0.5, "repetition": 0},
        {"item_id": "c", "human_score": 1.0, "judge_score": 0.7, "repetition": 0},
        # repetition 1: item a was an in-context example; c undetected
        {"item_id": "b", "human_score": 0.5, "judge_score": 0.9, "repetition": 1},
        {"item_id": "c", "human_score": 1.0, "judge_score": None, "repetition": 1},
        {"item_id": "d", "human_score": 0.2, "judge_score": 0.2, "repetition": 1},
    ]
    table = item_table(rows)
    assert table["evaluated"].tolist() == [[True, False], [True, True], [True, True], [False, True]]
    m = judge_metrics(table)
    mse0, mse1 = (0.01 + 0 + 0.09) / 3, (0.16 + 0) / 2
    assert m["mse"] == pytest.approx((mse0 + mse1) / 2)
    assert m["mae"] == pytest.approx(((0.1 + 0 + 0.3) / 3 + (0.4 + 0) / 2) / 2)
    assert m["undetected_rate"] == pytest.approx((0 + 1 / 3) / 2)
    r0 = np.corrcoef([0, 0.5, 1], [0.1, 0.5, 0.7])[0, 1]
    r1 = np.corrcoef([0.5, 0.2], [0.9, 0.2])[0, 1]  # 1.0 with two points
    assert m["pearson_r"] == pytest.approx((r0 + r1) / 2)
    # bin [0.75, 1]: only repetition 0 has a detected answer there -> its value alone
    assert m["mae_bin_75_100"] == pytest.approx(0.3)


def test_correlations_average_over_the_repetitions_where_they_are_defined():
    rows = [
        {"item_id": i, "human_score": h, "judge_score": j, "repetition": rep}
        for rep, judged in [(0, [0.5, 0.5, 0.5]), (1, [0.2, 0.3, 0.9])]
        for i, h, j in zip("abc", [0.1, 0.4, 0.8], judged)
    ]
    m = judge_metrics(item_table(rows))
    assert m["pearson_r"] == pytest.approx(np.corrcoef([0.1, 0.4, 0.8], [0.2, 0.3, 0.9])[0, 1])  # repetition 1 only
    assert m["spearman_r"] == pytest.approx(1.0)
    assert m["mse"] == pytest.approx((np.mean(np.square([0.4, 0.1, -0.3])) + np.mean(np.square([0.1, -0.1, 0.1]))) / 2)
