"""Pearson's r and its bootstrap CI, checked against values worked out by hand."""

import math

import numpy as np
import pytest

from biaslab.stats.correlation import pearson, pearson_with_ci

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


def test_p_value_by_hand():
    # with n - 2 = 2 degrees of freedom the two-sided t-test p-value of r is exactly 1 - |r|
    res = pearson_with_ci(X, Y, n_resamples=0)
    assert res["r"] == pytest.approx(R, abs=1e-15) and res["p"] == pytest.approx(1 - R, abs=1e-12)
    assert res["ci_low"] is None and res["ci_high"] is None and res["n"] == 4


def test_bootstrap_ci_and_when_there_is_none():
    x = np.array([1.0, 2.0, 3.0, 5.0])
    line = pearson_with_ci(x, 2 * x + 1)
    assert line["r"] == pytest.approx(1.0) and line["ci_low"] == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    a = rng.normal(size=30)
    b = a + rng.normal(size=30)
    res = pearson_with_ci(a, b, seed=5)
    assert res["ci_low"] < res["r"] < res["ci_high"] and res == pearson_with_ci(a, b, seed=5)
    assert res["r"] == pytest.approx(pearson(a, b), abs=1e-12)
    assert pearson_with_ci(x, np.ones(4))["r"] is None
    assert pearson_with_ci(x[:2], x[:2])["r"] is None  # fewer than min_n = 3 pairs
    assert pearson_with_ci([], [])["r"] is None
    # (0, 0, 1) against (0, 1, 1): r = (1/3) / (2/3) = 0.5, and with one degree of freedom
    # p = 1 - (2/pi) atan(t) with t = r / sqrt(1 - r^2) = 1/sqrt(3), so p = 2/3. A resample is
    # constant on a side unless it draws both the first and the last pair, which happens with
    # probability 12/27 only: more than half the resamples are skipped, so there is no CI.
    few = pearson_with_ci([0.0, 0.0, 1.0], [0.0, 1.0, 1.0])
    assert few["r"] == pytest.approx(0.5) and few["p"] == pytest.approx(2 / 3)
    assert few["ci_low"] is None and few["ci_high"] is None
