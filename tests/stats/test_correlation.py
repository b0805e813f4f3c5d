"""Pearson's r and its Fisher interval and p value, checked against values worked out by hand."""

import math

import numpy as np
import pytest

from biaslab.stats.correlation import pearson, pearson_inference

# x = 1..4, y = 2, 4, 5, 9: deviations (-1.5, -0.5, 0.5, 1.5) and (-3, -1, 0, 4), so
# Sxy = 4.5 + 0.5 + 0 + 6 = 11, Sxx = 5, Syy = 26 and r = 11 / sqrt(130) = 0.96476...
X = [1.0, 2.0, 3.0, 4.0]
Y = [2.0, 4.0, 5.0, 9.0]
R = 11 / math.sqrt(130)


def test_pearson_by_hand():
    assert pearson(X, Y) == pytest.approx(R, abs=1e-15)
    assert pearson(X, [-v for v in Y]) == pytest.approx(-R, abs=1e-15)
    assert pearson(np.array(X), 3 * np.array(X) - 7) == pytest.approx(1.0, abs=1e-15)
    # Spearman's rho is r of the ranks: (1, 2, 3) against (1, 3, 2) gives Sxy = 1, Sxx = Syy = 2
    assert pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5, abs=1e-15)


def test_pearson_is_numpy_corrcoef_to_the_bit():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=50), rng.normal(size=50)
    assert pearson(x, y) == float(np.corrcoef(x, y)[0, 1])


@pytest.mark.parametrize(("x", "y"), [([], []), ([1.0], [2.0]), ([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [5, 5, 5])])
def test_pearson_is_nan_for_short_or_constant_input(x, y):
    assert math.isnan(pearson(x, y))


def test_pearson_needs_pairs():
    with pytest.raises(ValueError, match="paired"):
        pearson([1, 2, 3], [1, 2])


def test_pearson_inference_on_four_pairs_by_hand():
    # n = 4: Fisher's z has standard error 1 / sqrt(4 - 3) = 1, so the interval is tanh(atanh(r) -+ 1.96)
    res = pearson_inference(X, Y)
    z = math.atanh(R)
    assert res["value"] == pytest.approx(R) and res["n"] == 4
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((math.tanh(z - 1.959964), math.tanh(z + 1.959964)))
    assert res["p"] == pytest.approx(math.erfc(z / math.sqrt(2)))  # 2 * P(Z > z)


def test_pearson_inference_by_hand_and_against_scipy():
    from scipy.stats import pearsonr

    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y = [2.0, 1.0, 4.0, 3.0, 6.0, 5.0]
    res = pearson_inference(x, y)
    r = pearson(x, y)
    z, se = math.atanh(r), 1 / math.sqrt(3)
    assert res["value"] == pytest.approx(r) and res["n"] == 6
    ends = (math.tanh(z - 1.959964 * se), math.tanh(z + 1.959964 * se))
    assert (res["ci_low"], res["ci_high"]) == pytest.approx(ends)
    assert res["p"] == pytest.approx(math.erfc(z / se / math.sqrt(2)))
    ci = pearsonr(x, y).confidence_interval(0.95)  # scipy's Fisher interval
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert (res["p"] < 0.05) == (res["ci_low"] > 0)


def test_pearson_inference_agrees_and_covers():
    rng = np.random.default_rng(7)
    for n in (5, 10, 50):
        covered = 0
        for _ in range(1500):
            x = rng.normal(size=n)
            y = 0.5 * x + math.sqrt(0.75) * rng.normal(size=n)
            res = pearson_inference(x, y, null=0.5)
            inside = res["ci_low"] <= 0.5 <= res["ci_high"]
            assert (res["p"] < 0.05) == (not inside)
            covered += inside
        assert covered / 1500 >= 0.925, n


def test_pearson_inference_without_an_interval_says_why():
    assert pearson_inference([1, 2, 3], [1, 3, 2])["too_small"]
    line = pearson_inference([1, 2, 3, 4], [3, 5, 7, 9])
    assert line["degenerate"] and line["ci_low"] is None and "line" in line["reason"]
    const = pearson_inference([1, 2, 3, 4], [1, 1, 1, 1])
    assert const["value"] is None and "constant" in const["reason"]
