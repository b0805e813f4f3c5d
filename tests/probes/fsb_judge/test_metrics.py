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


def _table(human, judge, evaluated=None):
    judge = np.asarray(judge, dtype=float).reshape(len(human), -1)
    evaluated = np.ones(judge.shape, bool) if evaluated is None else np.asarray(evaluated, bool)
    return {"item_id": np.arange(len(human)), "human": np.asarray(human, float), "judge": judge, "evaluated": evaluated}


def test_intervals_by_hand_with_one_repetition():
    """One repetition: the correlations by Fisher's z over the scored texts (rho on average ranks), against 0; the
    errors by the t interval of the texts' errors (n - 1 df, 30 or more informative texts), no p; the undetected
    share by the exact binomial."""
    from scipy.stats import binomtest, norm, rankdata, t

    from biaslab.probes.fsb_judge.inference import judge_inference

    rng = np.random.default_rng(4)
    human = rng.uniform(0, 1, 60)
    judge = np.clip(human + rng.normal(0, 0.2, 60), 0, 1)
    judge[:5] = np.nan  # 5 answers without a score
    m = judge_inference(_table(human, judge))
    ok = np.isfinite(judge)
    for name, x, y in [
        ("pearson_r", human[ok], judge[ok]),
        ("spearman_r", rankdata(human[ok]), rankdata(judge[ok])),
    ]:
        r = np.corrcoef(x, y)[0, 1]
        z, se = np.arctanh(r), 1 / np.sqrt(55 - 3)
        assert m[name]["value"] == pytest.approx(r) and m[name]["n"] == 55
        assert (m[name]["ci_low"], m[name]["ci_high"]) == pytest.approx(
            tuple(np.tanh([z - 1.959964 * se, z + 1.959964 * se]))
        )
        assert m[name]["p"] == pytest.approx(2 * norm.sf(abs(z) / se)) and m[name]["null"] == 0.0
    err = np.abs(judge[ok] - human[ok])
    half = t.ppf(0.975, 54) * err.std(ddof=1) / np.sqrt(55)
    mae = m["mae"]
    assert mae["value"] == pytest.approx(err.mean()) and mae["p"] is None and mae["n"] == 55
    assert (mae["ci_low"], mae["ci_high"]) == pytest.approx((err.mean() - half, err.mean() + half), abs=1e-9)
    ci = binomtest(5, 60).proportion_ci(method="exact")
    und = m["undetected_rate"]
    assert und["value"] == pytest.approx(5 / 60) and (und["ci_low"], und["ci_high"]) == pytest.approx((ci.low, ci.high))
    in_bin = ok & (human >= 0.75)  # mae_bin_75_100: over that bin's scored texts only
    assert m["mae_bin_75_100"]["n"] == int(in_bin.sum())
    assert m["mae_bin_75_100"]["value"] == pytest.approx(np.abs(judge - human)[in_bin].mean())


def test_the_correlation_over_several_repetitions_is_the_mean_of_linearised_texts():
    """Two repetitions: r is the mean of the two repetitions' r; each text's value is, per repetition, r plus its
    influence zx zy - r (zx^2 + zy^2) / 2 (spread over the texts the repetition did not score), averaged over the
    two; the interval is the t interval of those values (40 texts, 39 df)."""
    from scipy.stats import t

    from biaslab.probes.fsb_judge.inference import judge_inference

    rng = np.random.default_rng(5)
    human = rng.uniform(0, 1, 40)
    judge = np.clip(human[:, None] + rng.normal(0, 0.25, (40, 2)), 0, 1)
    evaluated = np.ones((40, 2), bool)
    evaluated[:4, 0] = False  # the first 4 texts were examples in repetition 0
    judge[:4, 0] = np.nan
    values, rs = np.zeros(40), []
    for k in range(2):
        s = evaluated[:, k]
        x, y = human[s], judge[s, k]
        zx, zy = (x - x.mean()) / x.std(), (y - y.mean()) / y.std()
        r = np.corrcoef(x, y)[0, 1]
        rs.append(r)
        u = np.full(40, r)
        u[s] = r + (zx * zy - r * (zx**2 + zy**2) / 2) / s.mean()
        values += u / 2
    m = judge_inference(_table(human, judge, evaluated))["pearson_r"]
    half = t.ppf(0.975, 39) * values.std(ddof=1) / np.sqrt(40)
    assert m["value"] == pytest.approx(np.mean(rs)) == pytest.approx(values.mean())
    assert (m["ci_low"], m["ci_high"]) == pytest.approx((values.mean() - half, values.mean() + half), abs=1e-9)
    assert m["p"] < 1e-6 and m["n"] == 40
