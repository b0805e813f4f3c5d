"""Estimands: each kind's result and unit values are those of the functions it composes, called by hand, and the
hand-computed value is the metric's."""

import numpy as np
import pytest

from biaslab.probing.metric_ranges import declared_estimand
from biaslab.probing.pairing import UnitValues
from biaslab.stats import (
    RATE,
    RATE_GAP,
    Estimand,
    Rows,
    cluster_inference,
    estimate,
    paired_cluster_inference,
    units_of,
    within_range,
)
from biaslab.stats.group_means import combination_inference, combination_units
from biaslab.stats.unit_values import masked_ratio_units, ols_slope_units, pearson_units, subset_mean_units

CLUSTERS = np.repeat([f"c{k}" for k in range(8)], 3)  # 24 rows, 8 clusters of 3
STRATA = np.where(np.arange(24) < 12, "a", "b")


def rows(**columns):
    return Rows(**columns, clusters=CLUSTERS, strata=STRATA)


def test_a_mean_leaves_out_undefined_rows_and_is_cluster_inference_of_the_rest():
    values = np.tile([1.0, 0.0, 0.5, np.nan], 6)
    result, units = estimate(Estimand("rate", "mean", unit="pairs", range=RATE), rows(values=values))
    keep = np.isfinite(values)
    direct = cluster_inference(values[keep], CLUSTERS[keep], STRATA[keep], null=None, bounds=RATE, label="pairs")
    assert result == within_range(direct, RATE)
    assert result["value"] == pytest.approx(0.5) and result["range"] == [0.0, 1.0] and result["n"] == 18
    assert np.array_equal(units.mask, keep) and np.array_equal(units.values[keep], values[keep])
    assert np.isnan(units.values[~keep]).all() and units.bounds == RATE


def test_a_ratio_is_the_pooled_ratio_over_rows_with_a_denominator_with_its_null():
    den = np.tile([2.0, 3.0, 0.0], 8)
    num = np.minimum(np.random.default_rng(2).integers(0, 4, 24), den)
    e = Estimand("share", "ratio", null=0.5, range=RATE)
    result, units = estimate(e, rows(num=num, den=den), seed=3)
    values, keep = masked_ratio_units(num, den)
    direct = cluster_inference(values[keep], CLUSTERS[keep], STRATA[keep], null=0.5, label="units", seed=3)
    assert result == within_range(direct, RATE)  # linearised values leave [0, 1]: no exact steps, as directly
    assert result["value"] == pytest.approx(num.sum() / den.sum()) and result["null"] == 0.5
    assert result["p"] is not None and result["ci_low"] < result["value"] < result["ci_high"]
    assert units.mask.sum() == 16 and np.nanmean(units.values) == pytest.approx(result["value"])


def test_a_difference_is_paired_over_the_rows_where_either_side_is_defined():
    rng = np.random.default_rng(1)
    first = rng.integers(0, 2, 24).astype(float)
    second = rng.integers(0, 2, 24).astype(float)
    first[[0, 5]], second[[5, 9]] = np.nan, np.nan  # row 5 has neither side: left out
    e = Estimand("gap", "difference", null=0.0, range=RATE_GAP, bounds=RATE)
    result, units = estimate(e, rows(values=first, second=Rows(values=second)))
    keep = np.ones(24, dtype=bool)
    keep[5] = False
    a, b = subset_mean_units(first[keep]), subset_mean_units(second[keep])
    direct = paired_cluster_inference(b, a, CLUSTERS[keep], STRATA[keep], null=0.0, label="units")
    direct.pop("a"), direct.pop("b")
    assert np.nanmean(first) - np.nanmean(second) == pytest.approx(result["value"])
    # linearised values leave [0, 1] where a side is missing: no exact bounds, as the direct call
    assert result == within_range(direct, RATE_GAP)
    assert np.array_equal(units.mask, keep) and np.allclose(units.values[keep], a - b)
    assert "a" not in result and result["range"] == [-1.0, 1.0]


def test_a_difference_of_two_ratios_and_of_complete_sides_keeps_its_bounds():
    rng = np.random.default_rng(4)
    num_a, num_b = rng.integers(0, 2, 24).astype(float), rng.integers(0, 2, 24).astype(float)
    den = np.ones(24)  # every denominator alike: the sides' values are the rows' own 0/1
    e = Estimand("gap", "difference", null=0.0, range=RATE_GAP, bounds=RATE)
    result, units = estimate(e, rows(num=num_a, den=den, second=Rows(num=num_b, den=den)))
    direct = paired_cluster_inference(num_b, num_a, CLUSTERS, STRATA, null=0.0, bounds=RATE, label="units")
    direct.pop("a"), direct.pop("b")
    assert result == within_range(direct, RATE_GAP) and result["value"] == pytest.approx((num_a - num_b).mean())
    assert result["ci_low"] is not None
    assert units.bounds == (-1.0, 1.0)


def test_a_slope_and_a_correlation_are_over_rows_where_both_are_finite():
    x = np.tile([0.0, 0.5, 1.0], 8)
    y = x * 0.4 + np.linspace(0, 0.3, 24)
    y[3] = np.nan
    keep = np.isfinite(y)
    slope, su = ols_slope_units(x[keep], y[keep])
    result, units = estimate(Estimand("slope", "slope", null=0.0, range=RATE_GAP), rows(x=x, y=y))
    assert result == within_range(cluster_inference(su, CLUSTERS[keep], STRATA[keep], null=0.0), RATE_GAP)
    assert result["value"] == pytest.approx(slope)
    r, ru = estimate(Estimand("r", "correlation", null=0.0, range=RATE_GAP), rows(x=x, y=y))
    direct = cluster_inference(pearson_units(x[keep], y[keep]), CLUSTERS[keep], STRATA[keep], null=0.0)
    assert r == within_range(direct, RATE_GAP)
    assert r["value"] == pytest.approx(np.corrcoef(x[keep], y[keep])[0, 1])
    assert ru.pairs is not None and np.array_equal(ru.pairs[0], x[keep])
    gate = UnitValues(ru.values, ru.mask, ru.bounds, ru.pairs)  # the gate's form of the same values
    assert np.nanmean(gate.values[gate.mask]) == pytest.approx(r["value"])


def test_undefined_metrics_say_why_and_bad_declarations_fail():
    out, units = estimate(Estimand("rate", "mean", null=0.5), rows(values=np.full(24, np.nan)), why_empty="none")
    assert out["value"] is None and out["reason"] == "none" and out["null"] == 0.5 and units is None
    flat, _ = estimate(Estimand("slope", "slope"), rows(x=np.ones(24), y=np.arange(24.0)))
    assert flat["value"] is None and "no units" in flat["reason"]
    with pytest.raises(ValueError, match="kind 'median'"):
        Estimand("m", "median")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="second side"):
        estimate(Estimand("gap", "difference"), rows(values=np.ones(24)))


def test_a_declared_estimand_takes_its_range_from_the_probes_declarations():
    ranges = {"diff_rate": RATE_GAP, "*_rate": RATE}
    assert declared_estimand(ranges, "male_rate:race_white", "mean").range == RATE
    assert declared_estimand(ranges, "diff_rate", "difference", unit="pairs", null=0.0).range == RATE_GAP
    assert declared_estimand(ranges, "log_odds", "mean").range is None


def test_units_of_gives_the_units_estimate_infers_from_without_the_inference():
    x = np.tile([0.0, 0.5, 1.0], 8)
    y = np.cos(np.arange(24.0))
    for e, r in (
        (Estimand("r", "correlation"), rows(x=x, y=y)),
        (Estimand("gap", "difference", bounds=(-1.0, 1.0)), rows(values=y, second=Rows(values=-y))),
    ):
        _, units = estimate(e, r)
        alone = units_of(e, r)
        assert units is not None and alone is not None and alone.bounds == units.bounds
        assert np.array_equal(alone.values, units.values, equal_nan=True) and np.array_equal(alone.mask, units.mask)
    assert units.bounds == (-2.0, 2.0) and np.allclose(units.values, 2 * y)


# Groups a (mean 3/4, plus two NaN rows), b (mean 1/3), c (mean 1/2) and z (no coefficient: left out).
GROUPS = np.array(["a"] * 10 + ["b"] * 6 + ["c"] * 4 + ["z"] * 3)
VALUES = np.r_[[1.0, 0.0, 1.0, 1.0] * 2, np.nan, np.nan, [0.0, 0.0, 1.0] * 2, [0.5] * 4, [1.0] * 3]
CELLS = np.where(np.arange(23) % 2 == 0, "even", "odd")


def test_a_combination_is_combination_inference_over_rows_with_a_value_and_a_coefficient():
    keep = np.isfinite(VALUES) & (GROUPS != "z")
    contrast = {"a": 0.5, "c": 0.5, "b": -1.0}  # 3/8 + 1/4 - 1/3 = 7/24
    e = Estimand("gap", "combination", unit="items", null=0.0, range=RATE_GAP, bounds=RATE, method="cluster-robust")
    r = Rows(values=VALUES, groups=GROUPS, coef=contrast, strata=CELLS)
    result, units = estimate(e, r)
    direct = combination_inference(
        VALUES[keep], GROUPS[keep], contrast, null=0.0, strata=CELLS[keep], method="cluster-robust", label="items"
    )
    assert result == within_range(direct, RATE_GAP) and result["value"] == pytest.approx(7 / 24)
    assert result["n"] == 18 and result["n_groups"] == 3 and "cluster-robust" in result["method"]
    # a contrast's units: (x - 1/2) n c_g / n_g about the middle of the scale, unbounded
    assert np.array_equal(units.mask, keep) and units.bounds is None
    assert units.values[0] == pytest.approx(0.5 * 18 * 0.5 / 8)  # a row of a at 1
    assert units.values[10] == pytest.approx(-0.5 * 18 * -1 / 6)  # a row of b at 0
    assert np.nanmean(units.values) == pytest.approx(7 / 24) and np.isnan(units.values[~keep]).all()
    mean = {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}  # (3/4 + 1/3 + 1/2) / 3 = 19/36
    e = Estimand("mean", "combination", unit="items", null=0.5, range=RATE, bounds=RATE)
    result, units = estimate(e, Rows(values=VALUES, groups=GROUPS, coef=mean))
    direct = combination_inference(VALUES[keep], GROUPS[keep], mean, null=0.5, label="items")
    assert result == within_range(direct, RATE) and result["value"] == pytest.approx(19 / 36)
    alone = units_of(e, Rows(values=VALUES, groups=GROUPS, coef=mean))
    expected, bounds = combination_units(VALUES[keep], GROUPS[keep], mean, null=0.5)
    assert np.array_equal(alone.values[keep], expected) and alone.bounds == bounds == units.bounds
    assert np.nanmean(alone.values) == pytest.approx(19 / 36)


def test_a_combination_without_coefficients_is_undefined_and_one_with_clusters_fails():
    e = Estimand("gap", "combination", null=0.0, bounds=RATE)
    out, units = estimate(e, Rows(values=VALUES, groups=GROUPS), why_empty="a side has no items")
    assert out["value"] is None and out["reason"] == "a side has no items" and out["null"] == 0.0 and units is None
    assert units_of(e, Rows(values=VALUES, groups=GROUPS, coef={})) is None
    with pytest.raises(ValueError, match="no clusters"):
        estimate(e, Rows(values=VALUES, groups=GROUPS, coef={"a": 1.0}, clusters=GROUPS))


def test_n_random_sets_the_sign_flip_s_random_vectors():
    """Twenty clusters (too many to enumerate): the declared number of random sign vectors is the procedure's, for
    a mean and for a paired difference; a combination, whose procedure has its own, refuses one."""
    clusters = np.repeat([f"c{k}" for k in range(20)], 2)
    values = np.linspace(0.0, 1.0, 40) ** 2
    second = values[::-1].copy()
    for n_random in (999, 4_999):
        e = Estimand("m", "mean", null=0.3, n_random=n_random)
        got = estimate(e, Rows(values=values, clusters=clusters))[0]
        assert got == cluster_inference(values, clusters, null=0.3, label="units", n_random=n_random)
        assert f"{n_random:,} random" in got["method"]
        d = Estimand("d", "difference", null=0.0, n_random=n_random)
        paired = estimate(d, Rows(values=values, second=Rows(values=second), clusters=clusters))[0]
        direct = paired_cluster_inference(second, values, clusters, null=0.0, label="units", n_random=n_random)
        assert paired == {k: v for k, v in direct.items() if k not in ("a", "b")}
    with pytest.raises(ValueError, match="n_random"):
        Estimand("c", "combination", n_random=999)


def test_units_of_gives_the_values_estimate_infers_on_snapped_onto_their_bounds():
    """A linearised rate whose item with no yes lands a rounding error below 0 (-5.6e-17): the unit values the gate
    tests are those the interval is inferred from, snapped onto [0, 1] as their bounds say."""
    num, den = np.array([1.0, 3.0, 2.0, 0.0, 0.0]), np.array([3.0, 5.0, 3.0, 3.0, 1.0])
    rate = Estimand("rate", "ratio", range=RATE)
    alone, inferred = units_of(rate, Rows(num=num, den=den)), estimate(rate, Rows(num=num, den=den))[1]
    assert alone.bounds == inferred.bounds == RATE
    assert np.array_equal(alone.values, inferred.values) and alone.values.min() == 0.0
    assert UnitValues.ratio(num, den).values.tolist() == alone.values.tolist()
