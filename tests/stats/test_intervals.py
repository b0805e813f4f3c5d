"""Wilson and Clopper-Pearson intervals against hand-computed bounds; honest replacements for
degenerate bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest

from biaslab.stats.intervals import binomial_central_p, clopper_pearson, honest_interval, wilson

Z2 = 1.959963984540054**2


def test_wilson_by_hand():
    # 0 of 10: lower 0, upper z^2 / (n + z^2) = 3.8415 / 13.8415
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(Z2 / (10 + Z2)) and hi == pytest.approx(0.27753, abs=1e-5)
    # 5 of 10: centre 0.5, half-width z*sqrt(0.025 + z^2/400) / (1 + z^2/10) = 0.26341
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.23659, abs=1e-5) and hi == pytest.approx(0.76341, abs=1e-5)


def test_clopper_pearson_by_hand():
    # 0 of n: upper 1 - (alpha/2)^(1/n); n of n: lower (alpha/2)^(1/n)
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(1 - 0.025**0.1))
    assert clopper_pearson(0, 10)[1] == pytest.approx(0.30850, abs=1e-5)
    assert clopper_pearson(10, 10) == (pytest.approx(0.025**0.1), 1.0)
    lo, hi = clopper_pearson(3, 10)  # textbook values
    assert lo == pytest.approx(0.06674, abs=1e-5) and hi == pytest.approx(0.65245, abs=1e-5)


def test_honest_interval_rules():
    zero = honest_interval(0.0, 0.0, 0.0, n=10)
    assert zero["ci_low"] == 0.0 and zero["ci_high"] == pytest.approx(0.30850, abs=1e-5) and zero["n"] == 10
    assert zero["interval"] == "clopper-pearson"
    full = honest_interval(100.0, 100.0, 100.0, n=10, scale=100)
    assert full["ci_low"] == pytest.approx(69.1503, abs=1e-3) and full["ci_high"] == 100.0
    one = honest_interval(100.0, 100.0, 100.0, n=1, scale=100)
    assert one["ci_low"] is None and one["ci_high"] is None and one["too_small"] is True
    assert one["reason"] == "1 unit: too few to estimate spread"
    flat = honest_interval(0.342, 0.342, 0.342, n=5)
    assert flat["ci_low"] is None and flat["degenerate"] is True
    assert flat["reason"].startswith("every bootstrap resample of the 5 units gave the same value")
    assert honest_interval(0.3, None, None, n=5)["reason"] == "undefined in most bootstrap resamples"
    assert "undefined" in honest_interval(None, None, None, n=0)["reason"]
    assert honest_interval(0.0, 0.0, 0.0, n=5, scale=None)["degenerate"] is True  # no proportion: no bound rule
    kept = honest_interval(0.4, 0.2, 0.6, n=30)
    assert (kept["ci_low"], kept["ci_high"], kept["n"]) == (0.2, 0.6, 30) and "interval" not in kept
    assert "reason" not in kept and "reason" not in zero


def test_central_binomial_p_inverts_to_clopper_pearson():
    # 3 of 10 against 0.5: P(X <= 3) = 176/1024, doubled
    assert binomial_central_p(3, 10, 0.5) == pytest.approx(2 * 176 / 1024)
    assert binomial_central_p(0, 10, 0.2) == pytest.approx(2 * 0.8**10)
    assert binomial_central_p(10, 10, 0.5) == pytest.approx(2**-9)
    assert binomial_central_p(5, 10, 0.5) == 1.0
    for k, n in ((0, 7), (3, 10), (9, 12), (12, 12)):
        lo, hi = clopper_pearson(k, n)
        for p0 in np.linspace(0.001, 0.999, 200):
            if min(abs(p0 - lo), abs(p0 - hi)) < 1e-9:
                continue
            assert (binomial_central_p(k, n, p0) < 0.05) == (p0 < lo or p0 > hi)
