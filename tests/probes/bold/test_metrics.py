"""BOLD metrics against hand-computed cases."""

from __future__ import annotations

import math

import pytest
from scipy.stats import t as student

from biaslab.probes.bold.metrics import bold_metrics, cluster_table, cluster_values, group_keys


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
    # the range is its one gap A - B, Welch over 2 against 2 people: too few for any interval (1 / C(4, 2) = 1/6),
    # so the gap counts as [-2, 2] and its p is the exact permutation p of the people's values: as above, 4 / 6
    rng = metrics["sentiment_range:gender"]
    assert (rng["ci_low"], rng["ci_high"]) == (0.0, 2.0) and rng["p"] == pytest.approx(4 / 6)
    assert rng["n_gaps"] == 1 and "1 of 1 gaps have no interval" in rng["note"] and rng["pair"] == "B vs A"
    assert {k for k, m in metrics.items() if "p" in m} == {"sentiment_range", "sentiment_range:gender"}
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


def test_a_person_with_more_texts_weighs_more_in_the_gap():
    """A's people: a1 two texts summing to 0.8, a2 one at -0.6; the mean 0.2/3 over 3 texts is the mean of
    r + (sum - r n) / mean(n) over the 2 people, not of their own means (0.4 and -0.6)."""
    r = 0.2 / 3
    values = cluster_values(cluster_table(SMALL, 0.5), "A")
    assert values == pytest.approx([r + (0.8 - 2 * r) / 1.5, r + (-0.6 - r) / 1.5])
    assert values.mean() == pytest.approx(r)


# race: X five people of two texts (means .5 .7 .3 .5 .5), Y and Z five people of one text each
RACE = (
    [row for k, pair in enumerate([(0.4, 0.6), (0.6, 0.8), (0.2, 0.4), (0.5, 0.5), (0.3, 0.7)])
     for row in rows("race", "X", f"x{k}", *pair)]
    + [row for k, v in enumerate([-0.1, 0.1, -0.3, 0.3, 0.0]) for row in rows("race", "Y", f"y{k}", v)]
    + [row for k, v in enumerate([0.2, 0.0, 0.4, 0.2, 0.2]) for row in rows("race", "Z", f"z{k}", v)]
)  # fmt: skip


def _welch(d, var_a, var_b, m):
    """Welch's t by hand: 5 people a side, Hsu's 4 df, at the Bonferroni level over m gaps: (lo, hi, p)."""
    se = math.sqrt(var_a / 5 + var_b / 5)
    crit = student.ppf(1 - 0.05 / m / 2, 4)
    return d - crit * se, d + crit * se, 2 * student.sf(abs(d) / se, 4)


def _largest(gaps, m):
    """The largest of the gaps: from the farthest distance of an interval from 0 to its farthest end; m x min p."""
    near = max(0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)) for lo, hi, _ in gaps)
    return near, max(max(abs(lo), abs(hi)) for lo, hi, _ in gaps), min(1.0, m * min(p for *_, p in gaps))


def test_the_range_is_the_largest_gap_bonferroni_by_hand():
    """Means X .5, Y 0, Z .2; variances of the people's means (n - 1): X .02, Y .05, Z .02. Three gaps, each at
    1 - 0.05/3; the range 0.5 is X - Y. The headline over two domains: four gaps (gender's A - B has no interval,
    so it reaches 2), each at 1 - 0.05/4; its value is the wider domain's range."""
    metrics, _ = bold_metrics(RACE, threshold=0.5, n_permutations=200)
    rng = metrics["sentiment_range:race"]
    assert rng["value"] == pytest.approx(0.5) and rng["n_gaps"] == 3 and rng["pair"] == "X vs Y"
    lo, hi, p = _largest([_welch(0.5, 0.02, 0.05, 3), _welch(0.3, 0.02, 0.02, 3), _welch(-0.2, 0.05, 0.02, 3)], 3)
    assert (rng["ci_low"], rng["ci_high"], rng["p"]) == pytest.approx((lo, hi, p))
    assert rng["ci_low"] > 0 and rng["p"] < 0.05 and "note" not in rng  # they agree
    assert rng["q"] == pytest.approx(p) and 0 < rng["p_permutation"] <= 1  # one domain: q = p; the test apart
    assert metrics["sentiment_range"]["value"] == rng["value"]  # one domain: the headline is its range
    both, _ = bold_metrics(RACE + SMALL, threshold=0.5, n_permutations=200)
    head = both["sentiment_range"]
    gaps = [_welch(0.5, 0.02, 0.05, 4), _welch(0.3, 0.02, 0.02, 4), _welch(-0.2, 0.05, 0.02, 4)]
    assert head["value"] == pytest.approx(0.5) and head["n_gaps"] == 4 and head["ci_high"] == 2.0
    assert (head["ci_low"], head["p"]) == pytest.approx((_largest(gaps, 4)[0], _largest(gaps, 4)[2]))
    again = both["sentiment_range:race"]  # the domain's own gaps as alone; q: BH over the 2 domains
    assert (again["ci_low"], again["ci_high"], again["p"], again["q"]) == pytest.approx((lo, hi, p, 2 * p))


def test_a_clear_gap_is_significant_with_a_tight_interval():
    data = []
    for i in range(30):
        x, y = (0.7, -0.9) if i % 2 else (0.9, -0.7)
        data += rows("race", "X", f"x{i}", x, x) + rows("race", "Y", f"y{i}", y)
    metrics, _ = bold_metrics(data, threshold=0.5, n_permutations=2000)
    rng = metrics["sentiment_range:race"]
    assert rng["value"] == pytest.approx(1.6) and 1.5 < rng["ci_low"] < 1.6 < rng["ci_high"] < 1.7
    assert rng["p"] < 1e-9 and rng["method"].startswith("largest of 1 gaps")
    assert rng["p_permutation"] == pytest.approx(1 / 2001) and rng["q_permutation"] == pytest.approx(1 / 2001)
    assert metrics["mean_sentiment:X"]["q_vs_rest"] < 0.01 and metrics["mean_sentiment:X"]["n"] == 30
    assert metrics["negative_share:Y"]["value"] == 1.0


def test_no_spread_in_either_group_leaves_the_gap_unbounded():
    """Every text of a group at one score: the gap's spread cannot be estimated, so the range reaches 2."""
    data = [row for i in range(8) for row in rows("race", "X", f"x{i}", 0.8) + rows("race", "Y", f"y{i}", -0.8)]
    rng = bold_metrics(data, threshold=0.5, n_permutations=10)[0]["sentiment_range:race"]
    assert rng["value"] == pytest.approx(1.6) and (rng["ci_low"], rng["ci_high"]) == (0.0, 2.0)
    assert rng["p"] is None and "no spread" in rng["note"]


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


def test_a_group_whose_texts_all_score_at_the_scales_end_gets_the_exact_interval():
    """Scores lie in [-1, 1]: eight people whose every text scores 1 are eight trials all at the top (Clopper-
    Pearson 8/8 on the scale: lower end 2 x 0.025^(1/8) - 1), as the shares' indicators are, not a metric without
    an interval."""
    data = [row for i in range(8) for row in rows("race", "X", f"x{i}", 1.0, 1.0) + rows("race", "Y", f"y{i}", 0.2)]
    m = bold_metrics(data, threshold=0.5, n_permutations=10)[0]["mean_sentiment:X"]
    assert m["value"] == 1.0 and m["n"] == 8 and m["method"].startswith("exact binomial over 8 people/topics")
    assert m["ci_low"] == pytest.approx(2 * 0.025 ** (1 / 8) - 1) and m["ci_high"] == 1.0
