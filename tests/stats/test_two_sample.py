"""The two-group difference of means: hand-computed Welch values, the small-group rules, agreement
between interval and p, and coverage by simulation at 3 to 50 units per group."""

import math

import numpy as np
import pytest
from scipy import stats

from biaslab.stats.two_sample import attainable_min_p_two_sample, two_sample_inference


def test_welch_by_hand_and_against_scipy():
    # a = 1, 2, 3: mean 2, s^2 1; b = 4, 6, 8, 10: mean 7, s^2 20/3. se^2 = 1/3 + 5/3 = 2,
    # Hsu's df = min(3, 4) - 1 = 2, t = 5 / sqrt(2)
    a, b = [1.0, 2.0, 3.0], [4.0, 6.0, 8.0, 10.0]
    res = two_sample_inference(a, b)
    crit = stats.t.ppf(0.975, 2)
    assert res["value"] == -5.0 and res["se"] == pytest.approx(math.sqrt(2)) and res["df"] == 2
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((-5 - crit * math.sqrt(2), -5 + crit * math.sqrt(2)))
    assert res["p"] == pytest.approx(2 * stats.t.sf(5 / math.sqrt(2), 2))
    assert res["p"] > 0.05 and res["ci_high"] > 0  # agreement: 0 inside, not significant
    # scipy's Welch statistic is the same t (its df differ: Welch-Satterthwaite)
    assert stats.ttest_ind(a, b, equal_var=False).statistic == pytest.approx(-5 / math.sqrt(2))
    assert res["n"] == 7 and res["n_a"] == 3 and res["n_b"] == 4 and "Hsu" in res["method"]


def test_interval_is_the_set_of_nulls_not_rejected():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.4, 1, 12), rng.normal(0, 1, 15)
    res = two_sample_inference(a, b)
    for end in ("ci_low", "ci_high"):
        at = two_sample_inference(a, b, null=res[end])
        assert at["p"] == pytest.approx(0.05, rel=1e-9)
    inside = two_sample_inference(a, b, null=res["value"])
    assert inside["p"] == 1.0


@pytest.mark.parametrize(("na", "nb"), [(1, 30), (3, 3), (2, 4), (2, 3)])
def test_too_few_units_give_no_interval_and_an_exact_p(na, nb):
    res = two_sample_inference(np.arange(na) + 10.0, np.arange(nb, dtype=float))
    assert res["ci_low"] is None and res["too_small"] and "too few" in res["reason"]
    assert res["p"] is None or res["p"] >= attainable_min_p_two_sample(na, nb)
    assert res["p"] is None or res["p"] >= 0.05


def test_the_smallest_permutation_p():
    assert attainable_min_p_two_sample(3, 3) == 1 / 20 and attainable_min_p_two_sample(3, 4) == 1 / 35
    assert attainable_min_p_two_sample(0, 4) == 1.0
    # 3 against 4 is the smallest balanced-ish design that can reach 0.05: far apart, p floored at 1/35
    res = two_sample_inference([100.0, 101.0, 102.0], [0.0, 1.0, 2.0, 3.0])
    assert res["p"] == pytest.approx(1 / 35) and res["ci_low"] > 0


def test_no_spread_is_degenerate_not_a_zero_width_interval():
    res = two_sample_inference([0.5] * 5, [0.5] * 6)
    assert res["ci_low"] is None and res["degenerate"] and res["p"] == 1.0 and res["value"] == 0.0
    res = two_sample_inference([0.7] * 5, [0.5] * 6)
    assert res["ci_low"] is None and res["p"] is None and res["value"] == pytest.approx(0.2)


def test_empty_group_and_bad_values():
    assert two_sample_inference([], [1.0, 2.0])["value"] is None
    with pytest.raises(ValueError, match="finite"):
        two_sample_inference([1.0, math.nan], [1.0, 2.0])


@pytest.mark.parametrize(("na", "nb"), [(3, 4), (5, 5), (10, 10), (50, 50), (4, 12), (6, 30)])
@pytest.mark.parametrize("dist", ["normal, unequal spread", "exponential", "bimodal"])
def test_coverage_by_simulation(na, nb, dist):
    """2,000 data sets per case, the true difference 0; coverage at least 0.95 - 0.025 (4 SE of the
    simulation is 0.02; Welch's t is approximate with skewed data in unbalanced groups)."""
    rng = np.random.default_rng(na * 100 + nb)
    covered = 0
    for _ in range(2000):
        if dist == "exponential":
            a, b = rng.exponential(1, na), rng.exponential(1, nb)
        elif dist == "bimodal":
            a, b = rng.beta(0.5, 0.5, na), rng.beta(0.5, 0.5, nb)
        else:
            a, b = rng.normal(0, 1, na), rng.normal(0, 3, nb)
        res = two_sample_inference(a, b)
        assert (res["p"] < 0.05) == (not res["ci_low"] <= 0.0 <= res["ci_high"])
        covered += res["ci_low"] <= 0.0 <= res["ci_high"]
    assert covered / 2000 >= 0.925
