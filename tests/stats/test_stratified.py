import math

import numpy as np
import pytest

from biaslab.stats.significance import permutation_test_means
from biaslab.stats.stratified import label_permutation_test, stratified_bootstrap_metrics


def test_every_resample_keeps_each_stratum_size_and_moves_clusters_whole():
    strata = np.array(["a"] * 4 + ["b"] * 6, dtype=object)
    clusters = np.array(["a1", "a1", "a2", "a2", "b1", "b1", "b1", "b2", "b2", "b2"], dtype=object)
    seen = []

    def fn(t):
        labels = t["cluster"].tolist()
        whole = all(labels.count(c) % (2 if c.startswith("a") else 3) == 0 for c in set(labels))
        seen.append((int((t["stratum"] == "a").sum()), int((t["stratum"] == "b").sum()), whole))
        return {"rows_a": float((t["stratum"] == "a").sum()), "x": float(t["x"].mean())}

    table = {"stratum": strata, "cluster": clusters, "x": np.arange(10, dtype=float)}
    out = stratified_bootstrap_metrics(table, fn, strata=strata, clusters=clusters, n_resamples=200, seed=1)
    assert set(seen) == {(4, 6, True)}
    assert out["rows_a"]["degenerate"] and out["rows_a"]["value"] == 4.0  # the same in every resample
    assert out["x"]["n"] == 4  # four clusters
    assert out["x"]["ci_low"] < 4.5 < out["x"]["ci_high"]


def test_units_override_and_exact_interval_of_a_rate_at_one():
    table = {"y": np.ones(8)}
    out = stratified_bootstrap_metrics(
        table, lambda t: {"rate": float(t["y"].mean())}, proportions=("rate",), units={"rate": 3}
    )
    assert out["rate"]["n"] == 3 and out["rate"]["interval"] == "clopper-pearson"
    assert out["rate"]["ci_low"] == pytest.approx(0.025 ** (1 / 3))


def test_a_cluster_across_two_strata_is_refused():
    with pytest.raises(ValueError, match="spans two strata"):
        stratified_bootstrap_metrics(
            {"x": np.zeros(2)}, lambda t: {"m": 0.0}, strata=np.array(["a", "b"]), clusters=np.array(["c", "c"])
        )


def test_label_permutation_matches_the_exact_two_sample_test():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0.8, 1, 7), rng.normal(0, 1, 6)])
    labels = np.array(["a"] * 7 + ["b"] * 6)
    exact = permutation_test_means(x[:7], x[7:])  # all 1716 arrangements
    mc = label_permutation_test(
        lambda g: x[g == "a"].mean() - x[g == "b"].mean(), labels, n_permutations=20000, seed=5
    )[0]
    assert mc.statistic == pytest.approx(exact.statistic)
    assert abs(mc.p - exact.p) < 4 * math.sqrt(exact.p * (1 - exact.p) / 20000) + 1e-4


def test_labels_shuffle_only_within_strata_and_with_their_cluster():
    # the statistic only depends on how many 'a' labels each stratum holds: constant under within-stratum
    # shuffles, so every permutation ties with the observed value (p = 1)
    strata = np.array([0, 0, 0, 1, 1, 1])
    labels = np.array(["a", "b", "b", "a", "a", "b"])
    stat = lambda g: float(((g == "a") & (strata == 0)).sum() - ((g == "a") & (strata == 1)).sum())  # noqa: E731
    assert label_permutation_test(stat, labels, strata=strata, n_permutations=300)[0].p == 1.0
    # rows of one cluster keep one label: a cluster of two 'a' rows moves as one
    clusters = np.array([0, 0, 1, 2, 3, 4])
    firsts = []
    label_permutation_test(
        lambda g: firsts.append(g[0] == g[1]) or 0.0,
        np.array(["a", "a", "b", "b", "a", "b"]),
        clusters=clusters,
        n_permutations=100,
    )
    assert all(firsts)
    with pytest.raises(ValueError, match="different labels"):
        label_permutation_test(lambda g: 0.0, np.array(["a", "b"]), clusters=np.array([0, 0]))


def test_vector_statistic_gives_one_test_per_component_and_undefined_stays_undefined():
    x = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    labels = np.array(["m", "m", "m", "f", "f", "f"])
    res = label_permutation_test(
        lambda g: np.array([x[g == "m"].mean() - x[g == "f"].mean(), np.nan]), labels, n_permutations=2000, seed=0
    )
    assert len(res) == 2
    assert res[0].statistic == 1.0 and res[0].p == pytest.approx(2 / 20, abs=0.03)  # 2 of 20 arrangements as extreme
    assert math.isnan(res[1].p)
