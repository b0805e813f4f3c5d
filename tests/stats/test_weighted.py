"""Weighted estimators that take one row of weights or a matrix of them, and the bounded regression against
scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biaslab.stats.weighted import weighted_bounded_slope, weighted_nanmean, weighted_ratio


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
