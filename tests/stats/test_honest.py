"""honest_metric: no zero-width interval shown as one, a reason for every missing interval, no
cluster-level p below what the clusters allow."""

import pytest

from biaslab.stats.honest import honest_metric


def test_issue_rows_become_honest():
    # compare row "bias_score:Conservative -100.0 [-100.0, -100.0]" over 4 predicates: too small
    row = honest_metric(
        {"value": -100.0, "ci_low": -100.0, "ci_high": -100.0, "n": 30, "p": 1e-9, "q": 1e-8},
        independent=False,
        n_clusters=4,
        label="predicates",
    )
    assert row["ci_low"] is None and row["too_small"] and row["reason"].startswith("4 predicates: too few")
    assert row["p"] is None and row["q"] is None and "0.125" in row["p_reason"]
    # crows "tie_rate 0.000 [0.000, 0.000]" over 1,508 independent pairs: exact upper bound
    tie = honest_metric({"value": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 1508}, scale=1.0)
    assert tie["ci_low"] == 0.0 and tie["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 1508))
    assert tie["interval"] == "clopper-pearson"
    # BOLD "mean_sentiment:atheism 0.063 [0.063, 0.063]": no proportion, no interval
    sent = honest_metric({"value": 0.063, "ci_low": 0.063, "ci_high": 0.063, "n": 1})
    assert sent["ci_low"] is None and sent["too_small"] and sent["reason"] == "1 unit: too few to estimate spread"
    sent = honest_metric({"value": 0.063, "ci_low": 0.063, "ci_high": 0.063, "n": 12})
    assert sent["ci_low"] is None and sent["degenerate"] and "zero-width" in sent["reason"]


def test_bbq_disambiguated_bias_at_the_bound_over_template_clusters():
    # "bias_score_disambig:Sexual_orientation 100.0 [100.0, 100.0] p 0.25" over 8 templates: exact over clusters
    row = honest_metric(
        {"value": 100.0, "ci_low": 100.0, "ci_high": 100.0, "n": 40, "p": 0.25},
        scale=100.0,
        independent=False,
        n_clusters=8,
        label="templates",
        null=50.0,
    )
    assert row["ci_low"] == pytest.approx(100 * 0.025 ** (1 / 8)) and row["ci_high"] == 100.0
    assert row["p"] == pytest.approx(2 * 0.5**8) and "8 templates as trials" in row["interval_note"]


def test_good_rows_are_untouched_and_missing_intervals_get_a_reason():
    good = {"value": 0.4, "ci_low": 0.3, "ci_high": 0.5, "n": 40, "p": 0.02, "n_clusters": 12}
    assert honest_metric(good, independent=False) == good
    bare = honest_metric({"value": 0.4, "ci_low": None, "ci_high": None, "n": 40})
    assert bare["reason"] == "no interval was computed for this metric"
    kept = honest_metric({"value": 0.4, "ci_low": None, "ci_high": None, "n": 40, "reason": "bootstrap off"})
    assert kept["reason"] == "bootstrap off"
    undefined = honest_metric({"value": None, "ci_low": 0.1, "ci_high": 0.2, "n": 0})
    assert undefined["ci_low"] is None and "undefined" in undefined["reason"]
    half = honest_metric({"value": 0.4, "ci_low": 0.1, "ci_high": None, "n": 40})
    assert half["ci_low"] is None and "one end" in half["reason"]
    backwards = honest_metric({"value": 0.4, "ci_low": 0.5, "ci_high": 0.1, "n": 40})
    assert backwards["ci_low"] is None and backwards["reason"] == "the interval is not finite"


def test_p_at_the_floor_is_kept():
    row = honest_metric(
        {"value": 0.9, "ci_low": 0.7, "ci_high": 0.95, "n": 100, "p": 2**-9}, independent=False, n_clusters=10
    )
    assert row["p"] == 2**-9 and "p_reason" not in row
