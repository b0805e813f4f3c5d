"""The score interval of a trinomial difference (best minus worst; B minus A on paired decisions):
closed forms by hand, an independent constrained maximum-likelihood check, agreement with its p."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from biaslab.stats.trinomial import difference_score_interval, difference_score_p, difference_score_z

Z = norm.ppf(0.975)


def test_all_on_one_side_by_hand():
    # n of n "plus": q_d = (1 - d) / 2, Z(d) = sqrt(n (1 - d) / (1 + d)); Z = z at d = (n - z^2) / (n + z^2)
    for n in (1, 2, 5, 30):
        lo, hi = difference_score_interval(n, 0, n)
        assert hi[0] == 1.0 and lo[0] == pytest.approx((n - Z**2) / (n + Z**2), abs=1e-12)
    lo, hi = difference_score_interval(0, 2, 2)  # mirror image
    assert lo[0] == -1.0 and hi[0] == pytest.approx(-(2 - Z**2) / (2 + Z**2), abs=1e-12)
    # two appearances, both best: the issue's [1.0, 1.0] becomes [-0.315, 1]
    assert difference_score_interval(2, 0, 2)[0][0] == pytest.approx(-0.31524, abs=1e-5)


def test_mcnemar_at_zero():
    # at d = 0 the score statistic is McNemar's (b - c) / sqrt(b + c)
    assert difference_score_z(13, 5, 100, 0.0) == pytest.approx(8 / np.sqrt(18))
    assert difference_score_p(13, 5, 100, 0.0) == pytest.approx(2 * norm.sf(8 / np.sqrt(18)))
    assert difference_score_p(0, 0, 10, 0.0) == 1.0


@pytest.mark.parametrize("counts", [(7, 2, 20), (3, 3, 9), (40, 20, 160), (1, 0, 3), (0, 5, 12)])
def test_statistic_matches_a_numerical_constrained_fit(counts):
    b, c, n = counts
    for d in (-0.6, -0.2, 0.0, 0.1, 0.35):
        lo_q, hi_q = max(0.0, -d), (1 - d) / 2  # p = q + d >= 0 and p + q <= 1

        def nll(q, d=d):
            p = q + d
            rest = max(1e-300, 1 - p - q)
            return -(b * np.log(max(p, 1e-300)) + c * np.log(max(q, 1e-300)) + (n - b - c) * np.log(rest))

        q = minimize_scalar(nll, bounds=(lo_q + 1e-12, hi_q - 1e-12), method="bounded", options={"xatol": 1e-13}).x
        p = q + d
        z = (b - c - n * d) / np.sqrt(n * (p + q - d * d))
        assert difference_score_z(b, c, n, d) == pytest.approx(z, rel=1e-5, abs=1e-6)


def test_interval_and_p_agree_on_random_counts():
    rng = np.random.default_rng(0)
    n = rng.integers(1, 60, 3000)
    b = rng.binomial(n, 0.35)
    c = rng.binomial(n - b, 0.3)
    lo, hi = difference_score_interval(b, c, n)
    est = (b - c) / n
    assert ((lo <= est) & (est <= hi) & (hi - lo > 0)).all()
    for d0 in np.linspace(-0.99, 0.99, 45):
        p = difference_score_p(b, c, n, d0)
        near = np.minimum(np.abs(d0 - lo), np.abs(d0 - hi)) < 1e-12
        outside = (d0 < lo) | (d0 > hi)
        assert ((p < 0.05) == outside)[~near].all()


def test_ends_match_a_root_finder():
    from scipy.optimize import brentq

    for b, c, n in ((40, 20, 160), (3, 0, 7), (5, 9, 30)):
        lo, hi = difference_score_interval(b, c, n)
        est = (b - c) / n

        def f(d, target, b=b, c=c, n=n):
            return float(difference_score_z(b, c, n, d)) - target

        assert lo[0] == pytest.approx(brentq(f, -1 + 1e-12, est, args=(Z,), xtol=1e-14), abs=1e-10)
        assert hi[0] == pytest.approx(brentq(f, est, 1 - 1e-12, args=(-Z,), xtol=1e-14), abs=1e-10)
