"""Non-inferiority and equivalence tests of one metric of two runs (a baseline A and a candidate B), from
bootstrap replicates of both runs' metric (Holm's step-down adjustment across several such tests is
:func:`biaslab.stats.adjust.adjust_pvalues`).

**The difference tested.** A metric's *harm* is how far it lies from its unbiased value towards worse
(:meth:`biaslab.probing.headline.Headline.harm_of`). The test is on the harm difference
``D = harm(B) - harm(A)``: H0 ``D >= margin`` (the candidate is worse by the margin or more) against H1
``D < margin``. When higher (lower) is worse, ``D = b - a`` (``a - b``), a linear contrast. When both ways
are worse (``"away"`` from the unbiased value u), ``D = |b - u| - |a - u|``, which is not smooth where a run
lies at u; see below.

**The bootstrap test.** ``da``, ``db`` are the replicates' deviations from the estimates
(``A* - a_hat``, ``B* - b_hat``: the same resample for both runs when the runs are paired; independent
normal draws with each run's standard error when they are not); they stand for the estimation error of
``(a_hat, b_hat)``. For a linear contrast ``r`` (``b - a`` when higher is worse) with replicate errors ``e``,
the p value is ``(1 + #{e <= r_hat - margin}) / (1 + R)`` (R replicates): H0 is rejected when ``r_hat`` lies
further below the margin than the error reaches in a fraction alpha of the replicates, i.e. when the basic
(pivotal) upper bound ``r_hat - q_alpha(e)`` is below the margin. For a symmetric error this is the
percentile bound of ``compare``'s intervals.

**Both ways worse.** With x = a - u and y = b - u, ``|y| - |x| = max(min(y - x, y + x), min(-y - x, x - y))``:
the harm difference is the larger of two "cones" (the candidate above u, or below), each the smaller of two
linear contrasts. H0 (``D >= margin``) holds when, for one cone, both its contrasts are at least the margin;
the test shows each cone false (intersection-union: p = the larger of the cones' p values, no
multiplicity cost) and a cone false by its studentized minimum contrast ``min_j (r_j - margin) / sd_j``.
Under H0 that minimum is stochastically smallest when every contrast sits at the margin; a contrast far
above it (the baseline far from u makes ``y + x`` large) only makes it larger, so its *slack* is taken
from the data in a first step: the lowest value of each contrast's ``1 - beta`` bound (Bonferroni over the
two), the least favourable slack the data allow, and the minimum's null distribution is that of
``min_j (slack_j + e_j) / sd_j`` over the replicates; ``p = beta + p_inner`` (Romano, Shaikh and Wolf
2014's two-step rule, valid at every level above beta; ``beta`` is a tenth of the smallest level the p
value is compared with). Far from u this is the paired test of ``b - a`` (``a - b`` below u); at u both
contrasts of a cone count. The plug-in bootstrap of ``|b_hat - u| - |a_hat - u|`` is not valid there:
``|a_hat - u|`` overstates an unbiased baseline's harm by about 0.8 standard errors, and in simulation a
candidate biased by the margin passed up to a quarter of the time at a nominal 5%.

**Few units.** The bootstrap treats the sample as the population: its spread is the plug-in one (a factor
``(k - 1) / k`` too small in variance over ``k`` units) and its tails are normal, so at small ``k`` its tests
reject too often (at the margin, 11-12% at a nominal 5% with 6 to 30 binary items). Given ``units`` (the ``k``
independent units or clusters the replicates resample), every p value is recalibrated (:func:`few_units_p`): the
bootstrap p is read as a normal statistic ``z = Phi^-1(1 - p)``, which is then referred to Student's t with
``k - 1`` degrees of freedom after the variance correction, ``t = z * sqrt((k - 1) / k)``. For a mean this is
the paired t test; the bounds are widened by the same factor. No p value goes below ``2^-k``, the smallest
p of an exact test on ``k`` units (a unit's sign flipped), so too few units can never pass. **Skewed units**: p is
at least Hall's (1992) skewness-corrected one (:mod:`biaslab.stats.skew`; each contrast's, skewness from the
replicates before any floor): exponential differences passed 16% at the margin at 10 units without it.

**Equivalence** (TOST): on ``b - a`` (it did not move by the margin), ``p = max(p(b - a >= m), p(b - a <= -m))``.

**How many items would settle it.** The normal approximation of :func:`biaslab.stats.sample_size.normal_n` with
the replicates' standard deviation scaled as 1/sqrt(n): the items at which a test at one-sided level alpha has
the given power to settle the question if the true difference is the observed one (below the margin: shown
non-inferior; beyond it: shown worse by the margin).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from biaslab.stats.few_units import few_units_p, sd_factor, widen
from biaslab.stats.paired import take_rows
from biaslab.stats.sample_size import normal_n
from biaslab.stats.skew import hall_p, hall_test, hall_upper

Table = Mapping[str, np.ndarray]
MetricFn = Callable[[Table], Mapping[str, float]]

__all__ = [
    "GateTest",
    "noninferiority",
    "noninferiority_p",
    "equivalence",
    "paired_replicates",
    "normal_replicates",
    "items_to_settle",
]


@dataclass(frozen=True)
class GateTest:
    """One test of one metric: the estimate, its one-sided bound(s), the p value and how it was made."""

    diff: float  # the difference tested: the harm difference (non-inferiority) or b - a (equivalence)
    upper: float  # one-sided (1 - alpha) upper bound of diff
    lower: float  # one-sided (1 - alpha) lower bound of diff
    p: float  # p value of H0 (not non-inferior / not equivalent)
    sd: float  # standard deviation of the replicates' error: the standard error of diff
    method: str


def _p_below(err: np.ndarray, threshold: float) -> float:
    """``(1 + #{err <= threshold}) / (1 + R)``: the bootstrap p value of an error this far below."""
    return float((1 + np.count_nonzero(err <= threshold + 1e-12 * max(1.0, abs(threshold)))) / (1 + err.size))


def _p_above(err: np.ndarray, threshold: float) -> float:
    return float((1 + np.count_nonzero(err >= threshold - 1e-12 * max(1.0, abs(threshold)))) / (1 + err.size))


def _floor(da: np.ndarray, db: np.ndarray, min_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """With ``min_sd`` (means of 0/1 values): normal replicates in place of the bootstrap's, with its covariance,
    scaled up so that ``b - a`` spreads at least ``min_sd``. A bootstrap of a handful of differing 0/1 items is
    lopsided (it cannot put fewer than none of them in a resample), and its lower tail alone passed 17% of
    candidates worse by the margin at 30 items; the normal test with the null's variance is the score test."""
    if not min_sd > 0:
        return da, db
    cov = np.cov(np.vstack([da, db]))
    sd = math.sqrt(max(0.0, cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]))
    if sd < min_sd:
        cov = cov * (min_sd / sd) ** 2 if sd > 0 else np.diag([min_sd**2 / 2] * 2)
    z = _sobol_normal(da.size, cov)
    return z[:, 0], z[:, 1]


def _sobol_normal(n: int, cov: np.ndarray | None = None, seed: int = 0) -> np.ndarray:
    """``n`` quasi-random (Sobol') bivariate normal draws with covariance ``cov`` (None: the identity): a seeded
    pseudo-random sample errs alike in every test (5% point -1.60 to -1.67 SD at 2,000 draws; Sobol' -1.63/-1.66)."""
    from scipy.stats import qmc

    with warnings.catch_warnings():  # Sobol' points balance best at a power of 2; their tails are right regardless
        warnings.simplefilter("ignore")
        return qmc.MultivariateNormalQMC([0.0, 0.0], cov, seed=seed).random(n)


def _clean(da: np.ndarray, db: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    da, db = np.asarray(da, dtype=float), np.asarray(db, dtype=float)
    ok = np.isfinite(da) & np.isfinite(db)
    if np.count_nonzero(ok) < max(5, ok.size / 2):
        raise ValueError(f"only {np.count_nonzero(ok)} of {ok.size} bootstrap replicates define the metric")
    return da[ok], db[ok]


CONES: dict[str, list[list[tuple[float, float]]]] = {
    # the harm difference as max over cones of min over contrasts, each contrast (c_x, c_y) of (a - u, b - u)
    "higher": [[(-1.0, 1.0)]],
    "lower": [[(1.0, -1.0)]],
    "away": [[(-1.0, 1.0), (1.0, 1.0)], [(-1.0, -1.0), (1.0, -1.0)]],
}


def _cone_p(r: np.ndarray, e: np.ndarray, margin: float, beta: float) -> float:
    """p value of "every contrast of the cone is at least the margin" (``r``: estimates, ``e``: replicate errors,
    one column per contrast)."""
    if r.size == 1:
        return _p_below(e[:, 0], r[0] - margin)
    from scipy.stats import norm

    sd = np.std(e, axis=0, ddof=1)
    exact = sd <= 1e-12 * np.maximum(1.0, np.abs(r))
    if np.any(exact & (r < margin)):  # a contrast known without error below the margin rejects the cone
        return min(1.0, beta + 1.0 / (1 + e.shape[0]))
    keep = ~exact  # an exact contrast at or above the margin cannot help
    if not keep.any():  # every contrast known without error, none below the margin: the cone holds
        return 1.0
    r, e, sd = r[keep], e[:, keep], sd[keep]
    slack = np.maximum(0.0, r - margin - float(norm.ppf(1 - beta / r.size)) * sd)  # least favourable slacks
    observed = float(np.min((r - margin) / sd))
    null = np.min((slack + e) / sd, axis=1)
    return min(1.0, beta + _p_below(null, observed))


def _ni_p(
    xy: tuple[float, float],
    dxy: tuple[np.ndarray, np.ndarray],
    cones: list[list[tuple[float, float]]],
    margin: float,
    beta: float,
) -> float:
    ps = []
    for cone in cones:
        c = np.array(cone)
        r = c @ np.array(xy)
        e = np.column_stack(dxy) @ c.T
        ps.append(_cone_p(r, e, margin, beta))
    return max(ps)


def _skew_test(
    xy: tuple[float, float],
    raw: tuple[np.ndarray, np.ndarray],
    dxy: tuple[np.ndarray, np.ndarray],
    cones: list[list[tuple[float, float]]],
    units: int | None,
) -> Callable[[float], float]:
    """Hall's skewness-corrected p (:mod:`biaslab.stats.skew`) as a function of the margin: each cone's its contrasts'
    smallest (the spread from the floored replicates ``dxy``, the skewness from the ``raw`` ones), the cones' largest
    (0 without units)."""
    parts = []
    for cone in cones:
        c = np.array(cone)
        e, e0 = np.column_stack(dxy) @ c.T, np.column_stack(raw) @ c.T
        parts.append([(float(r), hall_test(e[:, j], e0[:, j], units)) for j, r in enumerate(c @ np.array(xy))])
    return lambda m: max(min(test(r - m) for r, test in cone) for cone in parts)


def _check(margin: float, worse: str, alpha: float, beta: float | None) -> float:
    if not margin > 0:
        raise ValueError("the margin must be positive")
    if worse not in CONES:
        raise ValueError(f"worse must be 'higher', 'lower' or 'away', got {worse!r}")
    if worse != "away":
        return 0.0
    beta = alpha / 10 if beta is None else beta
    if not 0 < beta < alpha:
        raise ValueError("beta must lie between 0 and alpha")
    return beta


def noninferiority_p(
    a: float,
    b: float,
    da: np.ndarray,
    db: np.ndarray,
    *,
    margin: float,
    worse: str,
    unbiased: float = 0.0,
    alpha: float = 0.05,
    beta: float | None = None,
    units: int | None = None,
    min_sd: float = 0.0,
) -> float:
    """The p value of :func:`noninferiority` alone (no bounds: for simulations)."""
    beta = _check(margin, worse, alpha, beta)
    raw = _clean(da, db)
    da, db = _floor(*raw, min_sd)
    xy = (a - unbiased, b - unbiased)
    p = few_units_p(_ni_p(xy, (da, db), CONES[worse], margin, beta), units)
    return max(p, _skew_test(xy, raw, (da, db), CONES[worse], units)(margin))


def noninferiority(
    a: float,
    b: float,
    da: np.ndarray,
    db: np.ndarray,
    *,
    margin: float,
    worse: str,
    unbiased: float = 0.0,
    alpha: float = 0.05,
    beta: float | None = None,
    units: int | None = None,
    min_sd: float = 0.0,
) -> GateTest:
    """Test H0 ``harm(B) - harm(A) >= margin`` (module docstring). ``beta`` (``"away"`` only): the level of the
    first step (the contrasts' slack); default alpha / 10. ``units``: the independent units (or clusters) the
    replicates resample, for the small-sample recalibration (module docstring, "Few units"); ``min_sd``: the
    smallest standard error of ``b - a`` under the null, where it is known (the replicates scaled up to it)."""
    beta = _check(margin, worse, alpha, beta)
    raw = _clean(da, db)
    da, db = _floor(*raw, min_sd)
    x, y = a - unbiased, b - unbiased
    cones = CONES[worse]
    diff = float(max(min(cx * x + cy * y for cx, cy in cone) for cone in cones))
    skew_p = _skew_test((x, y), raw, (da, db), cones, units)

    def p_of(m: float) -> float:
        return max(few_units_p(_ni_p((x, y), (da, db), cones, m, beta), units), skew_p(m))

    p = p_of(margin)
    # the linearised error of the harm difference (the sides of the estimates): its spread and lower bound
    sx = -1.0 if worse == "lower" or (worse == "away" and x < 0) else 1.0
    sy = -1.0 if worse == "lower" or (worse == "away" and y < 0) else 1.0
    err = sy * db - sx * da
    wider = widen(units, alpha)
    lower = diff - wider * float(np.quantile(err, 1 - alpha))
    if worse == "away":
        upper = _smallest_margin(p_of, diff, err, alpha)
        method = (
            "paired bootstrap of |b - u| - |a - u|: the larger p over the two sides of u, each the studentized "
            f"minimum of two contrasts with least favourable slack (first step at beta = {beta:.2g})"
        )
    else:
        upper = diff - wider * float(np.quantile(err, alpha))
        upper = max(upper, hall_upper(diff, err, sy * raw[1] - sx * raw[0], units, alpha))
        method = f"paired bootstrap of {'b - a' if worse == 'higher' else 'a - b'} (basic bound)"
    if units is not None:
        method += f"; recalibrated to {units} units (Student's t, {units - 1} df), skewness by Hall's transformation"
    return GateTest(diff, upper, lower, p, float(np.std(err, ddof=1)) * sd_factor(units), method)


def _smallest_margin(p_of: Callable[[float], float], diff: float, err: np.ndarray, alpha: float) -> float:
    """The smallest margin the test passes at level alpha (bisection): the one-sided upper bound of the difference."""
    step = max(float(np.std(err, ddof=1)), 1e-9 * max(1.0, abs(diff)))
    lo, hi = diff, diff + step
    while p_of(hi) > alpha:
        lo, hi = hi, hi + 2 * (hi - diff)
        if hi - diff > 1e6 * step:
            return math.inf
    for _ in range(40):
        mid = (lo + hi) / 2
        if p_of(mid) <= alpha:
            hi = mid
        else:
            lo = mid
    return hi


def equivalence(
    a: float,
    b: float,
    da: np.ndarray,
    db: np.ndarray,
    *,
    margin: float,
    alpha: float = 0.05,
    units: int | None = None,
    min_sd: float = 0.0,
) -> GateTest:
    """TOST of H0 ``|b - a| >= margin`` against ``|b - a| < margin`` (``units``, ``min_sd``: as for
    :func:`noninferiority`)."""
    if not margin > 0:
        raise ValueError("the margin must be positive")
    raw = _clean(da, db)
    da, db = _floor(*raw, min_sd)
    diff = b - a
    err, err0 = db - da, raw[1] - raw[0]
    p = few_units_p(max(_p_below(err, diff - margin), _p_above(err, diff + margin)), units)
    p = max(p, hall_p(diff - margin, err, err0, units), hall_p(-diff - margin, -err, -err0, units))
    wider = widen(units, alpha)
    method = "two one-sided paired bootstrap tests of b - a (basic bounds)"
    if units is not None:
        method += f"; recalibrated to {units} units (Student's t, {units - 1} df), skewness by Hall's transformation"
    return GateTest(
        diff,
        max(diff - wider * float(np.quantile(err, alpha)), hall_upper(diff, err, err0, units, alpha)),
        min(diff - wider * float(np.quantile(err, 1 - alpha)), -hall_upper(-diff, -err, -err0, units, alpha)),
        p,
        float(np.std(err, ddof=1)) * sd_factor(units),
        method,
    )


def _draws(units: Sequence[np.ndarray], strata: Sequence[str], n_resamples: int, seed: int):
    by_stratum: dict[str, list[int]] = {}
    for u, s in enumerate(strata):
        by_stratum.setdefault(str(s), []).append(u)
    rng = np.random.default_rng(seed)
    for _ in range(n_resamples):
        picked = [
            units[u] for members in by_stratum.values() for u in rng.choice(members, size=len(members), replace=True)
        ]
        yield np.concatenate(picked) if picked else np.array([], dtype=int)


def paired_replicates(
    a: Table,
    b: Table,
    fn: MetricFn,
    names: Sequence[str],
    *,
    units: Sequence[np.ndarray] | None = None,
    strata: Sequence[str] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each metric of both runs over the same resamples (units, e.g. clusters, resampled within their stratum,
    the draws of :func:`biaslab.stats.paired.paired_bootstrap_ci`): ``{name: (A*, B*)}``."""
    n = len(next(iter(a.values())))
    units = list(units) if units is not None else [np.array([i]) for i in range(n)]
    strata = list(strata) if strata is not None else ["all"] * len(units)
    out_a = np.full((n_resamples, len(names)), np.nan)
    out_b = np.full((n_resamples, len(names)), np.nan)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for r, idx in enumerate(_draws(units, strata, n_resamples, seed)):
            fa, fb = fn(take_rows(a, idx)), fn(take_rows(b, idx))
            out_a[r] = [_num(fa.get(k)) for k in names]
            out_b[r] = [_num(fb.get(k)) for k in names]
    return {k: (out_a[:, i], out_b[:, i]) for i, k in enumerate(names)}


def normal_replicates(
    se_a: float, se_b: float, n_resamples: int = 2000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two unpaired runs' replicates: normal errors with their standard errors (:func:`_sobol_normal`)."""
    z = _sobol_normal(n_resamples, seed=seed)
    return se_a * z[:, 0], se_b * z[:, 1]


def items_to_settle(
    diff: float, sd: float, n_now: int, margin: float, *, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Items at which a one-sided level-alpha test settles ``diff`` against ``margin`` with the given power, if the
    true difference is ``diff`` and the standard error is ``sd`` at ``n_now`` items, scaled as 1/sqrt(n)
    (None: ``diff`` is the margin, no number of items settles it)."""
    gap = abs(margin - diff)
    if not (math.isfinite(gap) and math.isfinite(sd)) or gap == 0 or n_now < 1:
        return None
    return normal_n(gap, sd * math.sqrt(n_now), 2 * alpha, power)


def _num(v: object) -> float:
    return float(v) if isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool) else math.nan
