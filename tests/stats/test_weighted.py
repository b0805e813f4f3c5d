"""The weighted bootstrap of real units: unit draws within strata, the pigeonhole product, weighted estimators
that take a matrix of resample weights, the bounded regression against scipy, and pinned degenerate intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biaslab.stats.bootstrap import bootstrap_metrics
from biaslab.stats.weighted import (
    UnitDraw,
    pin_degenerate,
    weighted_bootstrap,
    weighted_bounded_slope,
    weighted_nanmean,
    weighted_ratio,
)


def test_unit_draws_keep_each_stratum_s_size_and_weight_rows_by_their_unit():
    units = np.array(["a", "a", "b", "c", "c", "c", "d"])
    strata = np.array(["x", "x", "x", "y", "y", "y", "y"])
    draw = UnitDraw(units, strata)
    rng = np.random.default_rng(0)
    for _ in range(50):
        w = draw.draw(rng)
        assert w[0] == w[1] and w[3] == w[4] == w[5]  # rows of one unit share its count
        assert w[0] + w[2] == 2 and w[3] + w[6] == 2  # two units per stratum, two drawn
    with pytest.raises(ValueError):
        UnitDraw(np.array(["a", "a"]), np.array(["x", "y"]))


def test_weighted_estimators_take_one_row_of_weights_or_a_matrix():
    v = np.array([1.0, 0.0, np.nan, 0.5])
    assert weighted_nanmean(v, np.ones(4)) == pytest.approx(0.5)
    assert weighted_nanmean(v, np.array([2.0, 0, 5, 0])) == 1.0
    assert math.isnan(weighted_nanmean(v, np.array([0.0, 0, 1, 0])))
    both = weighted_nanmean(v, np.array([[1.0, 1, 1, 1], [2, 0, 5, 0]]))
    assert both.shape == (2,) and both[0] == pytest.approx(0.5) and both[1] == 1.0
    assert weighted_ratio(np.array([1.0, 2]), np.array([2.0, 2]), np.array([1.0, 3])) == pytest.approx(7 / 8)


def test_bounded_slope_matches_lsq_linear_with_weights():
    from scipy.optimize import lsq_linear

    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(4, 25))
        x = rng.uniform(0, 1, n)
        y = rng.uniform(-0.5, 0.5) + rng.uniform(-3, 3) * x + rng.normal(0, 0.3, n)
        w = rng.integers(0, 4, n).astype(float)
        if w.sum() < 3 or np.ptp(x[w > 0]) == 0:
            continue
        sw = np.sqrt(w)
        fit = lsq_linear(np.column_stack([x * sw, sw]), y * sw, bounds=[[-1, 0], [1, 1]], tol=1e-12)
        assert weighted_bounded_slope(x, y, w) == pytest.approx(fit.x[0], abs=1e-6)
        matrix = weighted_bounded_slope(x, y, np.stack([w, np.ones(n)]))
        assert matrix.shape == (2,) and matrix[0] == pytest.approx(fit.x[0], abs=1e-6)
    assert math.isnan(weighted_bounded_slope(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.ones(2)))  # < 3 rows
    assert math.isnan(weighted_bounded_slope(np.full(4, 0.3), np.arange(4.0), np.ones(4)))  # x does not vary


def _mean(t):
    return {"mean": weighted_nanmean(t["y"], t["weight"])}


def test_cluster_bootstrap_is_as_wide_as_resampling_the_clusters_themselves():
    rng = np.random.default_rng(5)
    cluster_means = rng.normal(0, 1, 40)
    rows = {"cluster": np.repeat(np.arange(40), 10), "y": np.repeat(cluster_means, 10)}
    clustered = weighted_bootstrap(rows, _mean, {"cluster": None}, seed=1)["mean"]
    per_cluster = bootstrap_metrics({"y": cluster_means}, lambda t: {"mean": float(np.mean(t["y"]))}, seed=1)["mean"]
    per_row = bootstrap_metrics(rows, lambda t: {"mean": float(np.mean(t["y"]))}, seed=1)["mean"]
    width = clustered["ci_high"] - clustered["ci_low"]
    assert clustered["n"] == 40 and clustered["value"] == pytest.approx(cluster_means.mean())
    assert width == pytest.approx(per_cluster["ci_high"] - per_cluster["ci_low"], rel=0.15)
    assert width > 2.5 * (per_row["ci_high"] - per_row["ci_low"])  # rows of a cluster are not 400 samples


def test_pigeonhole_counts_both_crossed_factors():
    rng = np.random.default_rng(8)
    a, b = np.meshgrid(np.arange(30), np.arange(30), indexing="ij")
    a, b = a.ravel(), b.ravel()
    effect_a, effect_b = rng.normal(0, 1, 30), rng.normal(0, 1, 30)
    t = {"a": a, "b": b, "y": effect_a[a] + effect_b[b]}
    only_a = weighted_bootstrap(t, _mean, {"a": None}, seed=2)["mean"]
    both = weighted_bootstrap(t, _mean, {"a": None, "b": None}, seed=2)["mean"]
    # with equal effects of both factors the pigeonhole interval is about sqrt(2) times as wide as one factor's
    ratio = (both["ci_high"] - both["ci_low"]) / (only_a["ci_high"] - only_a["ci_low"])
    assert 1.15 < ratio < 1.8


def test_pin_degenerate_gives_the_clopper_pearson_share_of_units():
    metrics = {
        "gap": {"value": 0.0, "ci_low": None, "ci_high": None, "n": 20, "degenerate": True},
        "gap:g1": {"value": 1.0, "ci_low": None, "ci_high": None, "n": 20, "degenerate": True},
        "other": {"value": 0.3, "ci_low": None, "ci_high": None, "n": 20, "degenerate": True},
    }
    pin_degenerate(metrics, {"gap": (-1.0, 1.0)})
    u = 1 - 0.025 ** (1 / 20)
    assert (metrics["gap"]["ci_low"], metrics["gap"]["ci_high"]) == pytest.approx((-u, u))
    assert (metrics["gap:g1"]["ci_low"], metrics["gap:g1"]["ci_high"]) == pytest.approx((1 - 2 * u, 1.0))
    assert "degenerate" not in metrics["gap"] and metrics["other"]["degenerate"]  # no span: left alone
