"""Non-inferiority and equivalence tests of a metric of two runs: hand-computed cases, Holm, and simulations of
the type I error at the margin and of the power as the runs grow."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from biaslab.stats import adjust_pvalues
from biaslab.stats.noninferiority import (
    equivalence,
    items_to_settle,
    noninferiority,
    noninferiority_p,
    paired_replicates,
)

ERR = np.arange(-4.0, 5.0)  # nine replicate errors: -4, -3, ..., 4


def test_linear_p_and_bound_by_hand():
    # higher is worse: D = b - a = 1; p = (1 + #{err <= 1 - 3}) / (1 + 9) = (1 + 3) / 10
    t = noninferiority(10.0, 11.0, np.zeros(9), ERR, margin=3.0, worse="higher")
    assert t.diff == 1.0 and t.p == pytest.approx(0.4)
    assert t.upper == pytest.approx(1 - np.quantile(ERR, 0.05))  # 1 + 3.6: the basic bound
    assert t.lower == pytest.approx(1 - np.quantile(ERR, 0.95))
    assert t.sd == pytest.approx(np.std(ERR, ddof=1))
    # lower is worse: the same runs, D = a - b = -1, the errors flip sign: p = (1 + #{-err <= -4}) / 10
    t = noninferiority(10.0, 11.0, np.zeros(9), ERR, margin=3.0, worse="lower")
    assert t.diff == -1.0 and t.p == pytest.approx(0.2)
    # errors of both runs: only their difference counts
    t2 = noninferiority(10.0, 11.0, ERR / 2, ERR * 1.5, margin=3.0, worse="higher")
    assert t2.p == pytest.approx(0.4)


def test_a_paired_mean_difference_with_a_known_distribution():
    """400 items whose per-item difference has mean 0.5 and SD 2: the paired bootstrap's p is the normal
    tail P(Z <= (0.5 - 0.7) / (2 / 20)) = Phi(-2) up to resampling noise."""
    rng = np.random.default_rng(0)
    d = rng.standard_normal(400)
    d = 0.5 + 2 * (d - d.mean()) / d.std()  # exactly mean 0.5, SD 2
    base = rng.normal(3.0, 1.0, 400)
    a, b = {"v": base}, {"v": base + d}
    reps = paired_replicates(a, b, lambda t: {"m": float(np.mean(t["v"]))}, ["m"], n_resamples=8000, seed=1)
    ra, rb = reps["m"]
    t = noninferiority(
        float(base.mean()),
        float((base + d).mean()),
        ra - base.mean(),
        rb - (base + d).mean(),
        margin=0.7,
        worse="higher",
    )
    assert t.diff == pytest.approx(0.5)
    assert t.sd == pytest.approx(2 / math.sqrt(400), rel=0.05)
    assert t.p == pytest.approx(norm.cdf(-2), abs=0.006)
    assert t.upper == pytest.approx(0.5 + norm.ppf(0.95) * 0.1, abs=0.01)


def test_away_far_from_unbiased_is_the_paired_test_of_the_difference():
    """a = 70, b = 72 around u = 50 with errors far smaller than 20: the cone below u is rejected outright, the
    contrast y + x of the cone above has slack, and p = beta + the linear test's p of b - a."""
    rng = np.random.default_rng(2)
    da, db = rng.normal(0, 1, 500), rng.normal(0, 1, 500)
    beta = 0.005
    t = noninferiority(70.0, 72.0, da, db, margin=3.0, worse="away", unbiased=50.0, beta=beta)
    linear = noninferiority(70.0, 72.0, da, db, margin=3.0, worse="higher")
    assert t.diff == 2.0 and t.p == pytest.approx(beta + linear.p)
    # below u the same runs mirrored: the same p
    m = noninferiority(30.0, 28.0, -da, -db, margin=3.0, worse="away", unbiased=50.0, beta=beta)
    assert m.diff == 2.0 and m.p == pytest.approx(t.p)


def test_a_run_against_itself_passes_any_positive_margin():
    rng = np.random.default_rng(3)
    e = rng.normal(0, 5, 300)
    for worse, beta in (("higher", None), ("lower", None), ("away", 0.001)):
        for value in (50.0, 50.5, 80.0):
            t = noninferiority(value, value, e, e, margin=0.01, worse=worse, unbiased=50.0, beta=beta)
            assert t.diff == 0 and t.p <= 1 / 301 + (beta or 0) + 1e-12 and t.upper <= 0.01


def test_runs_without_spread():
    """Both runs the same in every resample: the harm difference is known exactly and decides alone."""
    zero = np.zeros(50)
    t = noninferiority(50.0, 100.0, zero, zero, margin=3.0, worse="away", unbiased=50.0, beta=0.001)
    assert t.diff == 50 and t.p == 1.0 and t.upper == pytest.approx(50)
    t = noninferiority(0.0, 100.0, zero, zero, margin=3.0, worse="away", unbiased=50.0, beta=0.001)
    assert t.diff == 0 and t.p == pytest.approx(0.001 + 1 / 51)


def test_equivalence_by_hand():
    # b - a = 1: p(b - a >= 3) = (1 + #{err <= -2}) / 10 = 0.4, p(b - a <= -3) = (1 + #{err >= 4}) / 10 = 0.2
    t = equivalence(10.0, 11.0, np.zeros(9), ERR, margin=3.0)
    assert t.diff == 1.0 and t.p == pytest.approx(0.4)
    t = equivalence(10.0, 11.0, np.zeros(9), ERR / 10, margin=3.0)  # errors within ±0.4: both sides shown
    assert t.p == pytest.approx(0.1)
    with pytest.raises(ValueError):
        equivalence(1.0, 1.0, ERR, ERR, margin=0.0)


def test_holm_by_hand():
    # the gate's Holm (an untested margin counts, as p = 1)
    # sorted 0.01, 0.03, 0.04: 3 x 0.01 = 0.03, 2 x 0.03 = 0.06, max(0.06, 1 x 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.2]) == [0.2] and holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    # sorted 0.01, 0.04, (1): 3 x 0.01 = 0.03, 2 x 0.04 = 0.08, 1
    assert holm([0.04, None, 0.01]) == pytest.approx([0.08, 1.0, 0.03])


def holm(p):
    return adjust_pvalues(p, "holm", missing="as_one")


def test_items_to_settle_is_the_normal_plan():
    # SE 1 at 100 items (SD of one item 10), a gap of 2 to the margin, one-sided 0.05, power 0.8
    n = items_to_settle(1.0, 1.0, 100, 3.0, alpha=0.05, power=0.8)
    assert n == math.ceil((10 * (norm.ppf(0.95) + norm.ppf(0.8)) / 2) ** 2)
    assert items_to_settle(3.0, 1.0, 100, 3.0) is None


# -- simulations: item-level paired data, the item bootstrap of a mean as multinomial weights -------------------


def _simulate(
    worse: str,
    mean_a: float,
    mean_b: float,
    n: int,
    *,
    rho: float,
    sd: float = 1.0,
    margin: float,
    unbiased: float = 0.0,
    reps: int = 600,
    n_resamples: int = 400,
    seed: int = 0,
    plug_in: bool = False,
) -> float:
    """Share of simulated pairs of runs (n items, per-item values correlated rho) shown non-inferior at 0.05."""
    rng = np.random.default_rng(seed)
    cov = sd**2 * np.array([[1.0, rho], [rho, 1.0]])
    weights = rng.multinomial(n, np.full(n, 1 / n), size=n_resamples) / n  # resample of items, both runs
    hits = 0
    for _ in range(reps):
        xy = rng.multivariate_normal([mean_a, mean_b], cov, size=n)
        a, b = xy.mean(axis=0)
        da, db = weights @ xy[:, 0] - a, weights @ xy[:, 1] - b
        if plug_in:  # the naive percentile bound of |b - u| - |a - u|
            d = np.abs(b + db - unbiased) - np.abs(a + da - unbiased)
            hits += np.quantile(d, 0.95) < margin
        else:
            hits += noninferiority_p(a, b, da, db, margin=margin, worse=worse, unbiased=unbiased) <= 0.05
    return hits / reps


def _mc_ceiling(reps: int, alpha: float = 0.05) -> float:
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)


def test_type_one_error_at_the_margin_is_at_most_alpha_higher_is_worse():
    # candidate worse by exactly the margin: 0.25 SD, n = 100 (standard error of the difference 0.1)
    rate = _simulate("higher", 0.0, 0.25, 100, rho=0.5, margin=0.25)
    assert rate <= _mc_ceiling(600)
    assert rate >= 0.02  # and not trivially conservative


@pytest.mark.parametrize("mean_a", [0.0, 0.15, 2.0])
def test_type_one_error_at_the_margin_is_at_most_alpha_away_from_unbiased(mean_a):
    """Worse both ways, candidate |b| = |a| + margin: the baseline exactly unbiased (the least favourable
    case, where |a_hat| overstates its harm), near it and far from it."""
    se = 1 / math.sqrt(100)
    for sign in (1, -1):
        rate = _simulate("away", mean_a, sign * (mean_a + 3 * se), 100, rho=0.0, margin=3 * se, reps=400)
        assert rate <= _mc_ceiling(400), (mean_a, sign, rate)


def test_the_plug_in_bootstrap_of_the_harm_difference_is_not_valid_at_unbiased():
    """Why the test above is not the plug-in one: with the baseline exactly unbiased and the candidate worse by
    the margin, the naive percentile bound of |b - u| - |a - u| passes far more often than 5%."""
    se = 1 / math.sqrt(100)
    rate = _simulate("away", 0.0, 3 * se, 100, rho=0.0, margin=3 * se, reps=400, plug_in=True)
    assert rate > 0.12


def test_power_rises_with_the_number_of_items():
    # no true difference, margin 0.2 SD, per-item correlation 0.5
    rates = [_simulate("higher", 0.0, 0.0, n, rho=0.5, margin=0.2, reps=300, seed=n) for n in (25, 100, 400)]
    assert rates[0] < rates[1] < rates[2] and rates[2] > 0.9
    away = [_simulate("away", 1.0, 1.0, n, rho=0.5, margin=0.2, reps=200, seed=n) for n in (25, 100, 400)]
    assert away[0] < away[1] < away[2] and away[2] > 0.8
