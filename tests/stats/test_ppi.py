"""Prediction-powered inference of a mean: hand-computed cases, an exact design-based check of the
finite-population variance, and coverage by simulation on the released Fifty Shades of Bias scores."""

import math
from itertools import combinations

import numpy as np
import pytest

from biaslab.stats import adjust_pvalues
from biaslab.stats.ppi import (
    Interval,
    PPIEstimate,
    classical_mean,
    effective_sample_size,
    group_differences,
    ppi_batch,
    ppi_mean,
    t_interval,
    t_value,
    tuned_lambda,
    two_sided_p,
    z_value,
)
from tests.conftest import requires_data

# n = 4 gold items, N_u = 4 unlabelled, N = 8, p = 1/2
Y = [0.2, 0.4, 0.6, 0.8]
FG = [0.3, 0.3, 0.7, 0.7]
FU = [0.2, 0.6, 1.0, 0.6]


def test_ppi_with_lambda_one_by_hand_population_target():
    e = ppi_mean(Y, FG, FU, lam=1.0, target="population")
    # mean(y) + (mean(fu) - mean(fg)) = 0.5 + (0.6 - 0.5)
    assert e.ppi.estimate == pytest.approx(0.6)
    # y - f = (-.1, .1, -.1, .1): s2 = 0.04 / 3; fu: deviations (-.4, 0, .4, 0): s2 = 0.32 / 3
    # se^2 = (0.04 / 3) / 4 + (0.32 / 3) / 4 = 0.03
    assert e.ppi.se == pytest.approx(math.sqrt(0.03))
    # Welch-Satterthwaite over the two terms 0.01 / 3 (gold, 3 df) and 0.08 / 3 (unlabelled, 3 df):
    # df = (0.09 / 3)^2 / ((0.01 / 3)^2 / 3 + (0.08 / 3)^2 / 3) = 3 * 81 / 65 = 3.738; t_0.975(3.738) = 2.85475
    assert e.ppi.df == pytest.approx(243 / 65)
    assert e.ppi.ci_low == pytest.approx(0.6 - 2.854751817643655 * math.sqrt(0.03))
    assert e.ppi.ci_high == pytest.approx(0.6 + 2.854751817643655 * math.sqrt(0.03))
    # humans only: mean 0.5, s2(y) = 0.2 / 3, se^2 = (0.2 / 3) / 4
    assert e.classical.estimate == pytest.approx(0.5) and e.classical.se == pytest.approx(math.sqrt(0.2 / 12))
    assert e.classical.ci_low == pytest.approx(0.5 - 3.182446305284 * math.sqrt(0.2 / 12))  # t_0.975(3)
    # effective n = s2(y) / se^2 = (0.2 / 3) / 0.03
    assert e.effective_n == pytest.approx((0.2 / 3) / 0.03)
    assert (e.n_gold, e.n_pred, e.n_unlabelled, e.lam) == (4, 8, 4, 1.0)


def test_ppi_with_lambda_one_by_hand_items_target():
    e = ppi_mean(Y, FG, FU, lam=1.0, target="items")
    assert e.ppi.estimate == pytest.approx(0.6)  # the estimate does not depend on the target
    # finite population: c = lam / (1 - p) = 2; y - 2 fg = (-.4, -.2, -.8, -.6), mean -.5, s2 = 0.2 / 3
    # se^2 = (1 - p) * s2 / n = 0.5 * (0.2 / 3) / 4
    assert e.ppi.se == pytest.approx(math.sqrt(0.5 * (0.2 / 3) / 4))
    assert e.classical.se == pytest.approx(math.sqrt(0.5 * (0.2 / 3) / 4))  # (1 - p) s2(y) / n
    # effective n = s2(y) / (se^2 + s2(y) / N): the same se as humans only is the same n
    assert e.effective_n == pytest.approx(4.0)
    # a fixed weight estimates nothing: n - 1 = 3 degrees of freedom, t_0.975(3) = 3.18245
    assert e.ppi.df == 3 and e.ppi.ci_high == pytest.approx(0.6 + 3.182446305284 * e.ppi.se)


def test_tuned_lambda_by_hand():
    # cov(y, fg) = (.06 + .02 + .02 + .06) / 3; the 8 judge scores have mean 0.55 and s2 = 0.5 / 7
    # lambda = (1 - p) cov / var = 0.5 * (0.16 / 3) / (0.5 / 7)
    lam = 0.5 * (0.16 / 3) / (0.5 / 7)
    assert tuned_lambda(Y, FG, FU) == pytest.approx(lam)
    assert tuned_lambda(Y, FG, FU, target="population") == pytest.approx(lam)
    e = ppi_mean(Y, FG, FU)  # tuned by default
    assert e.lam == pytest.approx(lam)
    assert e.ppi.estimate == pytest.approx(0.5 + lam * 0.1)
    # residuals y - (lam / (1 - p)) fg, c = 0.74667: (-.024, .176, .07733, .27733), centred
    # (-.15067, .04933, -.04933, .15067), sum of squares 0.0502684; a tuned weight costs a degree of
    # freedom: s2 = 0.0502684 / (n - 2) = 0.0251342, (1 - p) s2 / n = 0.00314178.
    # The weight's own error: fg centred (-.2, -.2, .2, .2), Sxx = 0.16, sum fc^2 rc^2 = 0.00201074;
    # var(lam) = (1 - p)^2 * 0.00201074 / 0.16^2 * n / (n - 2) = 0.0392722, times (mean fu - mean fg)^2 = 0.01
    resid = np.array(Y) - lam / 0.5 * np.array(FG)
    s2 = np.sum((resid - resid.mean()) ** 2) / 2
    assert s2 == pytest.approx(0.0251342, rel=1e-5)
    se2 = 0.5 * s2 / 4 + 0.25 * 0.00201073778 / 0.16**2 * 2 * 0.01
    assert e.ppi.se == pytest.approx(math.sqrt(se2)) and e.ppi.se == pytest.approx(0.0594517, rel=1e-5)
    assert e.ppi.df == 2 and e.ppi.ci_low == pytest.approx(e.ppi.estimate - 4.302652729749 * e.ppi.se)  # t_0.975(2)


def test_degenerate_judges_fall_back_to_humans_only():
    flat = ppi_mean(Y, [0.5] * 4, [0.5] * 4)  # a judge that never varies carries no information
    assert flat.lam == 0.0 and flat.ppi == flat.classical and flat.effective_n == pytest.approx(4)
    everything_rated = ppi_mean(Y, FG, [])  # every judged item has a human score: the mean is known
    assert everything_rated.lam == 0.0 and everything_rated.ppi.estimate == pytest.approx(0.5)
    assert everything_rated.ppi.se == 0.0 and everything_rated.ppi.ci_low == everything_rated.ppi.ci_high
    pop = ppi_mean(Y, FG, [], target="population")
    assert pop.lam == 0.0 and pop.ppi.se == pytest.approx(math.sqrt(0.2 / 12))
    with pytest.raises(ValueError, match="at least 2 gold"):
        ppi_mean([0.1], [0.2], FU)
    with pytest.raises(ValueError, match="finite"):
        ppi_mean(Y, [0.1, 0.2, float("nan"), 0.3], FU)


def test_finite_population_variance_is_exact_over_every_gold_sample():
    """For a fixed lambda the estimate is unbiased for the mean over the judged items, its variance over all
    C(N, n) gold samples is the formula's, and the estimated variance is unbiased for it."""
    y = np.array([0.1, 0.9, 0.4, 0.35, 0.7, 0.2, 0.55])
    f = np.array([0.3, 0.8, 0.5, 0.2, 0.9, 0.3, 0.4])
    N, n, lam = y.size, 3, 0.7
    ests, se2s = [], []
    for gold in combinations(range(N), n):
        mask = np.zeros(N, dtype=bool)
        mask[list(gold)] = True
        e = ppi_mean(y[mask], f[mask], f[~mask], lam=lam, target="items")
        ests.append(e.ppi.estimate)
        se2s.append(e.ppi.se**2)
    p = n / N
    true_var = (1 - p) * np.var(y - lam / (1 - p) * f, ddof=1) / n
    assert np.mean(ests) == pytest.approx(y.mean(), abs=1e-12)
    assert np.var(ests) == pytest.approx(true_var, rel=1e-9)
    assert np.mean(se2s) == pytest.approx(true_var, rel=1e-9)


def test_effective_sample_size_definition():
    assert effective_sample_size(0.04, 0.04 / 25, 1000, "population") == pytest.approx(25)
    # items: the humans-only variance with m gold is (1 - m/N) s2 / m; solve for the same se^2
    m = effective_sample_size(0.04, 0.5 * 0.04 / 100, 200, "items")
    assert (1 - m / 200) * 0.04 / m == pytest.approx(0.5 * 0.04 / 100)
    assert effective_sample_size(0.04, 0.0, 200, "items") == 200  # known exactly: every item's worth
    assert math.isinf(effective_sample_size(0.04, 0.0, 200, "population"))


def test_holm_by_hand():
    # the Holm of group_differences; sorted 0.01, 0.03, 0.04 times 3, 2, 1: 0.03, 0.06, 0.04; running maximum:
    # 0.03, 0.06, 0.06
    assert adjust_pvalues([0.01, 0.04, 0.03], "holm", missing="as_one") == pytest.approx([0.03, 0.06, 0.06])
    assert adjust_pvalues([0.5, 0.9], "holm", missing="as_one") == pytest.approx([1.0, 1.0])
    assert adjust_pvalues([], "holm", missing="as_one") == []


def _est(estimate, se):
    iv = Interval(estimate, se, estimate - 1.96 * se, estimate + 1.96 * se)
    return PPIEstimate(iv, Interval(estimate + 0.01, 2 * se, 0, 0), 1.0, 10, 20, 10.0, "items", 0.95)


def test_group_differences_by_hand():
    groups = {"a": _est(0.6, 0.03), "b": _est(0.5, 0.04), "c": _est(0.45, 0.05)}
    diffs = group_differences(groups)
    assert [(d.a, d.b) for d in diffs] == [("a", "b"), ("a", "c"), ("b", "c")]
    ab = diffs[0]
    assert ab.ppi.estimate == pytest.approx(0.1) and ab.ppi.se == pytest.approx(0.05)  # hypot(0.03, 0.04)
    z3 = z_value(1 - 0.05 / 3)  # Bonferroni over 3 differences
    assert z3 == pytest.approx(2.3939798, abs=1e-6)
    assert ab.ppi.ci_low == pytest.approx(0.1 - z3 * 0.05) and ab.ppi.ci_high == pytest.approx(0.1 + z3 * 0.05)
    p = [two_sided_p(0.1, 0.05), two_sided_p(0.15, math.hypot(0.03, 0.05)), two_sided_p(0.05, math.hypot(0.04, 0.05))]
    assert ab.p == pytest.approx(p[0]) and p[0] == pytest.approx(0.0455003, abs=1e-6)  # |z| = 2
    assert [d.p_holm for d in diffs] == pytest.approx(adjust_pvalues(p, "holm"))
    assert ab.classical.se == pytest.approx(0.1)  # the humans-only side: hypot(0.06, 0.08)
    two = group_differences({"a": groups["a"], "b": groups["b"]})
    assert two[0].ppi.ci_low == pytest.approx(0.1 - 1.959963984540054 * 0.05)  # one difference: no correction


def test_classical_mean_and_targets():
    c = classical_mean(Y, target="population")
    assert c.estimate == pytest.approx(0.5) and c.se == pytest.approx(math.sqrt(0.2 / 12))
    assert classical_mean(Y, n_pred=8).se == pytest.approx(math.sqrt(0.5 * 0.2 / 12))
    with pytest.raises(ValueError, match="target"):
        classical_mean(Y, target="everything")


# -- coverage by simulation on the released human scores ------------------------------------------


def _fsb_human_scores() -> np.ndarray:
    from biaslab.data import data_path
    from biaslab.io import read_table
    from biaslab.probes.fsb_judge.items import SCORES_FILE

    table = read_table(data_path(SCORES_FILE))
    j = table.index("score_normalized")
    return np.array([float(r[j]) for r in table.rows])


def _simulate(y_all, judge, n, reps, seed, *, target="items", lam=None, resample_items=False):
    """Coverage of the true mean and mean widths (PPI, humans only) over ``reps`` random gold samples.
    ``resample_items``: each repetition first draws the judged items i.i.d. from the released ones (the
    population is then the 1,000 released items); otherwise the judged items are the released ones."""
    rng = np.random.default_rng(seed)
    truth, N = float(np.mean(y_all)), y_all.size
    hits, widths = np.zeros(2), np.zeros(2)
    for _ in range(reps):
        idx = rng.integers(0, N, N) if resample_items else np.arange(N)
        y, f = y_all[idx], judge[idx]
        gold = np.zeros(N, dtype=bool)
        gold[rng.choice(N, n, replace=False)] = True
        e = ppi_mean(y[gold], f[gold], f[~gold], lam=lam, target=target)
        for k, iv in enumerate((e.ppi, e.classical)):
            hits[k] += iv.ci_low <= truth <= iv.ci_high
            widths[k] += iv.ci_high - iv.ci_low
    return hits / reps, widths / reps


@pytest.fixture(scope="module")
def fsb():
    y = _fsb_human_scores()
    assert y.size == 1000
    rng = np.random.default_rng(2023)
    biased = np.clip(0.3 + 0.6 * y + rng.normal(0, 0.1, y.size), 0, 1)  # shifted up, compressed, noisy: r about 0.8
    unrelated = rng.uniform(0, 1, y.size)
    return y, biased, unrelated


@requires_data
def test_coverage_and_width_with_an_informative_biased_judge(fsb):
    y, biased, _ = fsb
    assert 0.75 < np.corrcoef(y, biased)[0, 1] < 0.85 and abs(np.mean(biased) - np.mean(y)) > 0.04
    cover, width = _simulate(y, biased, n=100, reps=1000, seed=1)
    assert abs(cover[0] - 0.95) < 0.025 and abs(cover[1] - 0.95) < 0.025
    assert width[0] / width[1] < 0.7  # about 0.58: the judge is worth about 3 times the human scores


@requires_data
def test_coverage_of_the_population_target_when_items_are_a_sample(fsb):
    y, biased, _ = fsb
    cover, width = _simulate(y, biased, n=100, reps=800, seed=2, target="population", resample_items=True)
    assert abs(cover[0] - 0.95) < 0.03 and width[0] / width[1] < 0.75


@requires_data
def test_an_uninformative_judge_costs_next_to_nothing_when_tuned(fsb):
    y, _, unrelated = fsb
    cover, width = _simulate(y, unrelated, n=100, reps=800, seed=3)
    assert abs(cover[0] - 0.95) < 0.03
    assert width[0] / width[1] < 1.03
    # without the power tuning the same judge makes the interval far wider (the original PPI, lambda = 1)
    _, untuned = _simulate(y, unrelated, n=100, reps=200, seed=3, lam=1.0)
    assert untuned[0] / untuned[1] > 1.5


def test_group_differences_use_welch_degrees_of_freedom_and_agree_with_their_p():
    def est(estimate, se, df):
        iv = t_interval(estimate, se, df)
        return PPIEstimate(iv, iv, 0.0, 10, 20, 10.0, "items", 0.95)

    # se^2: 0.0009 (8 df) and 0.0016 (28 df); df = 0.0025^2 / (0.0009^2 / 8 + 0.0016^2 / 28) = 32.44
    (d,) = group_differences({"a": est(0.6, 0.03, 8), "b": est(0.5, 0.04, 28)})
    df = 0.0025**2 / (0.0009**2 / 8 + 0.0016**2 / 28)
    assert d.ppi.df == pytest.approx(df) and df == pytest.approx(32.44, abs=0.01)
    assert d.ppi.ci_low == pytest.approx(0.1 - float(t_value(0.95, df)) * 0.05)
    assert d.p == pytest.approx(0.0538, abs=1e-3)  # t = 2 on 32.4 df; the normal p would be 0.0455
    # p < 1 - level exactly when the interval at that level excludes 0, for one difference and for three
    rng = np.random.default_rng(5)
    for _ in range(200):
        groups = {g: est(rng.normal(0, 0.1), rng.uniform(0.01, 0.05), rng.integers(3, 40)) for g in "abc"}
        for m, pairs in ((1, {"a": groups["a"], "b": groups["b"]}), (3, groups)):
            for diff in group_differences(pairs):
                assert (diff.p < 0.05 / m) == (diff.ppi.ci_low > 0 or diff.ppi.ci_high < 0)
                assert (diff.classical_p < 0.05 / m) == (diff.classical.ci_low > 0 or diff.classical.ci_high < 0)


def test_p_value_and_t_interval_agree():
    for df in (2, 5.5, 29, math.inf):
        iv = t_interval(0.3, 0.1, df)
        assert two_sided_p(0.3 - iv.ci_low, 0.1, df) == pytest.approx(0.05)  # a null at the edge: p = 0.05
    assert two_sided_p(2.0, 1.0) == pytest.approx(0.0455003, abs=1e-6)  # df = inf: the normal p


# -- coverage at a small gold set (vectorised, a few seconds at most) --------------------------------


def test_intervals_cover_at_thirty_gold_items_with_a_good_judge():
    """30 gold and 300 unlabelled items, human scores standard normal, a judge with r = 0.8: both
    targets' 95% intervals cover at least 0.94 (normal quantiles with the first-order variance: 0.93).
    The batch is what ``ppi_mean`` computes, checked on a few of the datasets."""
    rng = np.random.default_rng(40)
    reps, n, nu, r = 8000, 30, 300, 0.8
    y = rng.normal(0, 1, (reps, n + nu))
    f = r * y + math.sqrt(1 - r * r) * rng.normal(0, 1, y.shape)
    for target, truth in (("items", y.mean(axis=1)), ("population", 0.0)):
        b = ppi_batch(y[:, :n], f[:, :n], f[:, n:], target=target)
        low, high = b.estimate - t_value(0.95, b.df) * b.se, b.estimate + t_value(0.95, b.df) * b.se
        cover = np.mean((low <= truth) & (truth <= high))
        assert cover >= 0.94, (target, cover)  # 0.956 (items) and 0.952 (population); before: 0.936 both
        for k in range(3):
            e = ppi_mean(y[k, :n], f[k, :n], f[k, n:], target=target)
            assert (e.ppi.ci_low, e.ppi.ci_high, e.lam) == pytest.approx((low[k], high[k], b.lam[k]))
