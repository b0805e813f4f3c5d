"""BOLD metrics against hand-computed cases."""

from __future__ import annotations

import pytest

from biaslab.probes.bold.metrics import bold_metrics, cluster_table, group_keys


def rows(domain, group, name, *scores):
    return [{"domain": domain, "group": group, "name": name, "evaluation": s} for s in scores]


# two groups of two people: A = a1 [0.6, 0.2], a2 [-0.6]; B = b1 [0.0, 0.0], b2 [0.9]
SMALL = (
    rows("gender", "A", "a1", 0.6, 0.2)
    + rows("gender", "A", "a2", -0.6)
    + rows("gender", "B", "b1", 0.0, 0.0)
    + rows("gender", "B", "b2", 0.9)
)


def test_group_means_shares_and_range_by_hand():
    metrics, groups = bold_metrics(SMALL, threshold=0.5, n_permutations=20_000)
    assert metrics["mean_sentiment:A"]["value"] == pytest.approx(0.2 / 3)
    assert metrics["mean_sentiment:B"]["value"] == pytest.approx(0.3)
    assert metrics["positive_share:A"]["value"] == pytest.approx(1 / 3)  # 0.6 >= 0.5
    assert metrics["negative_share:A"]["value"] == pytest.approx(1 / 3)  # -0.6 <= -0.5
    assert metrics["positive_share:B"]["value"] == pytest.approx(1 / 3)
    assert metrics["negative_share:B"]["value"] == 0.0
    assert metrics["sentiment_range:gender"]["value"] == pytest.approx(0.3 - 0.2 / 3)
    assert metrics["mean_sentiment"]["value"] == pytest.approx((0.6 + 0.2 - 0.6 + 0.9) / 6)
    assert metrics["positive_share"]["value"] == pytest.approx(2 / 6)
    # permuting whole people: 6 ways to put 2 of the 4 in A; 4 of them give a range >= the observed one
    # ({a1,a2}: .233, {a1,b1}: .05, {a1,b2}: .767, {a2,b1}: .767, {a2,b2}: .05, {b1,b2}: .233)
    assert metrics["sentiment_range:gender"]["p_permutation"] == pytest.approx(4 / 6, abs=0.015)
    assert metrics["mean_sentiment:A"]["p_vs_rest"] == pytest.approx(4 / 6, abs=0.015)  # two groups: the same test
    # the tests are not the intervals' procedure: no metric gives them as its p
    assert all("p" not in m for m in metrics.values())
    # two people per group: too few for an interval of a group mean (the smallest p on 2 clusters is 0.5)
    assert metrics["mean_sentiment:A"]["ci_low"] is None and metrics["mean_sentiment:A"]["too_small"]
    assert [g["group"] for g in groups] == ["A", "B"]
    assert groups[0]["n_attempts"] == 3 and groups[0]["n_clusters"] == 2


def test_the_threshold_decides_what_is_clearly_positive():
    strict = bold_metrics(SMALL, threshold=0.5, n_permutations=10)[0]
    loose = bold_metrics(SMALL, threshold=0.05, n_permutations=10)[0]
    assert strict["positive_share:A"]["value"] == pytest.approx(1 / 3)
    assert loose["positive_share:A"]["value"] == pytest.approx(2 / 3)  # 0.2 now counts
    assert loose["negative_share:B"]["value"] == 0.0  # 0.0 is neither


def test_a_clear_gap_is_significant_with_a_tight_interval():
    data = []
    for i in range(30):
        data += rows("race", "X", f"x{i}", 0.8, 0.8) + rows("race", "Y", f"y{i}", -0.8)
    metrics, _ = bold_metrics(data, threshold=0.5, n_permutations=2000)
    rng = metrics["sentiment_range:race"]
    assert rng["value"] == pytest.approx(1.6) and rng["ci_low"] == pytest.approx(1.6)
    assert rng["ci_high"] == pytest.approx(1.6)
    assert rng["p_permutation"] == pytest.approx(1 / 2001) and rng["q_permutation"] == pytest.approx(1 / 2001)
    assert metrics["mean_sentiment:X"]["q_vs_rest"] < 0.01 and metrics["mean_sentiment:X"]["n"] == 30
    assert metrics["negative_share:Y"]["value"] == 1.0


def test_intervals_cover_the_resampled_range():
    metrics, _ = bold_metrics(SMALL, threshold=0.5, n_permutations=10)
    rng = metrics["sentiment_range:gender"]  # the range keeps its bootstrap interval (A's and B's people resampled)
    assert rng["ci_low"] <= rng["ci_high"] and 0 <= rng["ci_high"] <= 1.5


def test_unscored_attempts_and_single_group_domains():
    data = SMALL + rows("gender", "B", "b3", None) + rows("race", "Only", "o1", 0.5)
    metrics, groups = bold_metrics(data, threshold=0.5, n_permutations=10)
    assert metrics["mean_sentiment:B"]["value"] == pytest.approx(0.3)  # None left out
    assert "sentiment_range:race" not in metrics  # a range needs two groups
    assert metrics["mean_sentiment:Only"]["p_vs_rest"] is None


def test_a_group_name_in_two_domains_is_qualified():
    data = rows("d1", "same", "n1", 0.1) + rows("d2", "same", "n2", 0.2) + rows("d1", "other", "n3", 0.0)
    assert group_keys(data) == {("d1", "same"): "d1/same", ("d2", "same"): "d2/same", ("d1", "other"): "other"}
    table = cluster_table(data, 0.5)
    assert sorted(table.group.tolist()) == ["d1/same", "d2/same", "other"]
