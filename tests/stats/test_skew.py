"""Hall's (1992) skewness correction of the gate's one-sided test (:mod:`biaslab.stats.skew`), by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student

from biaslab.stats.skew import hall, hall_p, hall_upper, skewness


def test_halls_transformation_by_hand():
    """g(T) = T + gamma / (6 sqrt(k)) + gamma T^2 / (3 sqrt(k)) + gamma^2 T^3 / (27 k), Hall's published form:
    -2 + 0.057735 + 0.461880 - 0.035556 at gamma 1.2 and 12 units."""
    assert hall(-2.0, 1.2, 12) == pytest.approx(-1.515940, abs=1e-6)
    assert hall(-2.0, 0.0, 12) == -2.0  # no skewness: the studentized statistic itself
    ts = np.linspace(-30, 30, 601)
    assert np.all(np.diff([hall(t, 3.0, 6) for t in ts]) > 0)  # monotone even where the quadratic term is not


def test_skewness_from_the_replicates_by_hand():
    """Replicate errors -1, -1, 2: plug-in skewness 2 / 2^1.5 = 0.7071, so the units' g1 is 0.7071 sqrt(8) = 2.0
    at 8 units, G1 = 2.0 sqrt(8 * 7) / 6 = 2.4944, plus its standard error sqrt(6 / 8) = 0.8660."""
    assert skewness(np.array([-1.0, -1.0, 2.0]), 8) == pytest.approx(3.360464, abs=1e-6)
    assert skewness(np.array([-1.0, 0.0, 1.0]), 6) == pytest.approx(1.0)  # symmetric: sqrt(6 / 6) alone
    assert skewness(np.zeros(5), 8) == 0.0 and skewness(np.array([-1.0, 2.0]), 2) == 0.0


def test_the_corrected_p_and_its_bound_by_hand():
    rng = np.random.default_rng(1)
    err = rng.exponential(1.0, 500) - 1.0  # right-skewed replicate errors
    k, gap = 20, -2.5
    se = float(np.std(err, ddof=1)) * math.sqrt(k / (k - 1))
    by_hand = float(student.cdf(hall(gap / se, skewness(err, k), k), k - 1))
    assert hall_p(gap, err, err, k) == pytest.approx(by_hand)
    assert by_hand > float(student.cdf(gap / se, k - 1))  # right skew: stricter than Student's t
    upper = hall_upper(0.0, err, err, k, 0.05)  # the smallest margin passed at 5%: p exactly 0.05 there
    assert hall_p(0.0 - upper, err, err, k) == pytest.approx(0.05, abs=1e-9)
    assert hall_p(gap, err, err, None) == 0.0 and hall_upper(0.0, err, err, None, 0.05) == -math.inf
