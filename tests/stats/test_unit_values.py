"""Linearised unit values of a correlation and a slope: their mean is the estimate, each is the estimate plus the
unit's influence (the derivative of the estimate in the unit's weight), and their spread is the estimate's
delta-method standard error, Fisher's z's to first order for a correlation of normal data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import rankdata, spearmanr

from biaslab.stats.correlation import pearson
from biaslab.stats.unit_values import ols_slope_units, pearson_units, spearman_units


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    mx, my = w @ x, w @ y
    return float(w @ ((x - mx) * (y - my)) / math.sqrt((w @ (x - mx) ** 2) * (w @ (y - my) ** 2)))


def _weighted_slope(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    mx, my = w @ x, w @ y
    return float(w @ ((x - mx) * (y - my)) / (w @ (x - mx) ** 2))


def _influence(stat, x: np.ndarray, y: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Each unit's influence: the derivative of ``stat`` as the unit's weight moves from 1/n towards 1 (central
    differences)."""
    n = x.size
    base = np.full(n, 1 / n)
    out = np.empty(n)
    for i in range(n):
        point = np.zeros(n)
        point[i] = 1.0
        up, down = (1 - eps) * base + eps * point, (1 + eps) * base - eps * point
        out[i] = (stat(x, y, up) - stat(x, y, down)) / (2 * eps)
    return out


def test_pearson_units_by_hand():
    """x = (-1, -1, 1, 1), y = (-2, 0, 0, 2): zx = x, zy = y / sqrt(2), r = sqrt(2) / 2; u_i = r + zx zy - r (zx^2 +
    zy^2) / 2 = sqrt(2) (3/4, 1/4, 1/4, 3/4), whose mean is r."""
    x, y = np.array([-1.0, -1, 1, 1]), np.array([-2.0, 0, 0, 2])
    u = pearson_units(x, y)
    assert u == pytest.approx(math.sqrt(2) * np.array([0.75, 0.25, 0.25, 0.75]), abs=1e-15)
    assert u.mean() == pytest.approx(math.sqrt(2) / 2, abs=1e-15) == pytest.approx(pearson(x, y), abs=1e-15)
    assert pearson_units(x, np.ones(4)) is None and pearson_units(x[:1], y[:1]) is None


def test_ols_slope_units_by_hand():
    """x = (0, 1, 2), y = (0, 2, 1): slope 1/2, intercept 1/2, residuals (-1/2, 1, -1/2), var(x) = 2/3; u_i = 1/2 +
    (x_i - 1) e_i / var(x) = (5/4, 1/2, -1/4)."""
    slope, u = ols_slope_units(np.array([0.0, 1, 2]), np.array([0.0, 2, 1]))
    assert slope == pytest.approx(0.5) and u == pytest.approx([1.25, 0.5, -0.25])
    assert ols_slope_units(np.ones(3), np.arange(3.0)) is None


def test_each_unit_value_is_the_estimate_plus_its_numeric_influence():
    rng = np.random.default_rng(5)
    x = rng.random(12)
    y = 0.4 * x + rng.normal(0, 0.2, 12)
    r = pearson(x, y)
    assert pearson_units(x, y) - r == pytest.approx(_influence(_weighted_pearson, x, y), abs=1e-6)
    slope, u = ols_slope_units(x, y)
    assert u - slope == pytest.approx(_influence(_weighted_slope, x, y), abs=1e-6)
    assert u.mean() == pytest.approx(slope, abs=1e-12) and slope == pytest.approx(np.polyfit(x, y, 1)[0], abs=1e-12)
    rx, ry = rankdata(x), rankdata(y)  # Spearman's rho: Pearson's r of the ranks, the ranks held fixed
    rho = spearmanr(x, y).statistic
    assert spearman_units(x, y) - rho == pytest.approx(_influence(_weighted_pearson, rx, ry), abs=1e-6)
    assert spearman_units(x, y).mean() == pytest.approx(rho, abs=1e-12)


def test_the_spread_of_pearson_units_is_fishers_to_first_order():
    """Normal pairs with r = 0.6: the delta-method standard error sd(u) / sqrt(n) against Fisher's
    (1 - r^2) / sqrt(n - 3), at n = 20,000 (within 3%)."""
    rng = np.random.default_rng(11)
    n, rho = 20_000, 0.6
    x = rng.standard_normal(n)
    y = rho * x + math.sqrt(1 - rho**2) * rng.standard_normal(n)
    u = pearson_units(x, y)
    r = float(u.mean())
    assert u.std() / math.sqrt(n) == pytest.approx((1 - r * r) / math.sqrt(n - 3), rel=0.03)


def test_zous_bound_and_p_value_agree_and_hold_alpha_at_the_margin():
    """The p value of H0 r_a - r_b >= t is the level at which Zou's upper bound reaches t; a tiny simulation at n = 10
    (r 0.8 against 0.7, normal scores, the judges' errors correlated 0.5) passes at most alpha + 2 se."""
    from scipy.stats import t as student

    from biaslab.stats.correlation import overlapping_bound, overlapping_p

    rng = np.random.default_rng(2)
    x = rng.random(15)
    ya, yb = x + 0.2 * rng.standard_normal(15), x + 0.3 * rng.standard_normal(15)
    q = float(student.ppf(0.95, 14))
    diff, upper = overlapping_bound(x, ya, yb, q)
    lower = overlapping_bound(x, ya, yb, -q)[1]
    assert lower < diff < upper and diff == pytest.approx(pearson(x, ya) - pearson(x, yb))
    assert overlapping_p(x, ya, yb, upper) == pytest.approx(0.05, abs=1e-9)
    assert overlapping_p(x, ya, yb, lower) == pytest.approx(0.95, abs=1e-9)
    with pytest.raises(ValueError):
        overlapping_bound(x[:3], ya[:3], yb[:3], q)
    sd_a, sd_b = (math.sqrt((1 / 12) * (1 / r**2 - 1)) for r in (0.8, 0.7))
    passed, reps = 0, 300
    for _ in range(reps):
        x = rng.random(10)
        e = rng.standard_normal(10)
        f = 0.5 * e + math.sqrt(0.75) * rng.standard_normal(10)
        passed += overlapping_p(x, x + sd_a * e, x + sd_b * f, 0.1) <= 0.05
    assert passed / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
