"""Prediction-powered inference (PPI) of a mean: a judge's scores on every item, corrected by the
judge-vs-human differences on a random labelled subset (Angelopoulos, Bates, Fannjiang, Jordan and
Zrnic, "Prediction-powered inference", Science 2023), with the power-tuned weight of PPI++
(Angelopoulos, Duchi and Zrnic, "PPI++: efficient prediction-powered inference", 2023).

Notation: ``n`` gold items with human scores ``y`` and judge scores ``f``; ``N_u`` further items
with judge scores only (the unlabelled ones); ``N = n + N_u`` judged items in all, ``p = n / N``.
The estimate, for a weight ``lam``, is PPI++'s

    theta(lam) = mean(y) + lam * (mean of f over the unlabelled - mean of f over the gold items)

``lam = 0`` is the humans-only (classical) mean; ``lam = 1`` is the original PPI estimate
``mean_u(f) + mean(y - f)``. Its variance depends on what the mean is *of* (``target``):

* ``"items"`` (the default of ``biaslab ppi``): the mean human score over the ``N`` judged items,
  as if people had rated every one of them; the gold items are a simple random sample of the judged
  ones. Finite-population variance: ``(1 - p) * s2(y - lam / (1 - p) * f) / n`` over the gold items
  (the survey-sampling difference estimator's; humans only, ``(1 - p) * s2(y) / n``).
* ``"population"``: the mean over the population the items were drawn from (items i.i.d., the
  papers' setting): ``s2(y - lam * f) / n + lam^2 * s2(f over the unlabelled) / N_u``
  (humans only, ``s2(y) / n``).

``s2`` is the sample variance (``ddof=1``). Intervals are Student t, ``estimate +- t_df * se``, since the
normal quantile with these first-order variances covers only about 0.935 at 30 gold items (the same
in the ppi_py reference code). A tuned weight is fitted on the gold items, so with ``lam`` tuned:

* the residual variance above divides by ``n - 2`` instead of ``n - 1`` (a fitted slope), and
  ``df = n - 2``; humans only or a fixed weight: ``n - 1``;
* the weight's own error adds ``var(lam) * (mean_u(f) - mean_gold(f))^2``, ``var(lam)`` the
  sandwich (HC1) variance of the slope of ``y`` on ``f`` over the gold items times ``(1 - p)^2``;
* with target ``population`` the gold and unlabelled terms combine with Welch-Satterthwaite
  degrees of freedom (``N_u - 1`` for the unlabelled one).

Measured by ``bench/bench_ppi_coverage.py`` (normal or 0/1 human scores, r = 0 to 0.95,
``N_u`` = 300 or 3,000): at least 0.94 at 30 gold items for both targets. Skewed human scores
(e.g. 0/1 with 20% ones) cover 0.93-0.96 at 30 gold items and 0.93-0.95 at 50 or 80, humans-only
intervals too.
Differences between groups and their p values use the same t family (:func:`group_differences`).

The tuned weight minimises the variance under either target (the same formula):
``lam = (1 - p) * cov(y, f) / var(f)``, the covariance over the gold items and the judge's variance
over all ``N`` items (PPI++ pools both samples for it), i.e. ``cov / ((1 + n / N_u) var)``.
It is 0 where the judge does not vary, there are fewer than 3 gold items or no unlabelled items
(with target ``population``, fewer than 2), where PPI reduces to the humans-only mean.

The effective sample size of an estimate is the number of gold items the humans-only estimate (same
target, same human-score variance) would need for the same standard error:
``s2(y) / se^2`` (population) or ``s2(y) / (se^2 + s2(y) / N)`` (items, at most ``N``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from biaslab.stats.adjust import adjust_pvalues

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

TARGETS = ("items", "population")


@dataclass(frozen=True)
class Interval:
    """A point estimate with its standard error and Student t interval (``df`` degrees of freedom;
    ``inf``: normal)."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    df: float = math.inf

    def as_dict(self) -> dict[str, float]:
        return {"estimate": self.estimate, "se": self.se, "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass(frozen=True)
class PPIEstimate:
    """The prediction-powered mean and, for comparison, the humans-only one from the same gold items."""

    ppi: Interval
    classical: Interval
    lam: float
    n_gold: int
    n_pred: int  # judged items, the gold ones included
    effective_n: float
    target: str
    confidence: float

    @property
    def n_unlabelled(self) -> int:
        return self.n_pred - self.n_gold

    @property
    def width_ratio(self) -> float:
        """PPI interval width / humans-only interval width (below 1: the judge helped)."""
        wc = self.classical.ci_high - self.classical.ci_low
        return (self.ppi.ci_high - self.ppi.ci_low) / wc if wc > 0 else math.nan


@dataclass(frozen=True)
class Difference:
    """``a - b`` between two groups' estimates, with its interval, two-sided p and Holm-adjusted p."""

    a: str
    b: str
    ppi: Interval
    p: float
    p_holm: float
    classical: Interval
    classical_p: float
    classical_p_holm: float


@dataclass(frozen=True)
class PPIBatch:
    """:func:`ppi_batch`'s arrays, one value per dataset: estimate, standard error, degrees of freedom of
    the t quantile, weight."""

    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray
    lam: np.ndarray


def z_value(confidence: float) -> float:
    """The two-sided normal quantile: 1.96 for 0.95."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def t_value(confidence: float, df: ArrayLike = math.inf) -> np.ndarray:
    """The two-sided Student t quantile with ``df`` degrees of freedom (2.045 for 0.95 and 29; the
    normal 1.96 for ``df = inf``); element-wise over an array of ``df``."""
    from scipy.special import stdtrit

    z_value(confidence)  # validates
    return stdtrit(np.asarray(df, dtype=float), 1 - (1 - confidence) / 2)


def t_interval(estimate: float, se: float, df: float = math.inf, confidence: float = 0.95) -> Interval:
    half = float(t_value(confidence, df)) * se
    return Interval(float(estimate), float(se), float(estimate - half), float(estimate + half), float(df))


def two_sided_p(estimate: float, se: float, df: float = math.inf) -> float:
    """The two-sided Student t p value (``df = inf``: normal) of ``estimate`` against 0: below
    ``1 - confidence`` exactly when :func:`t_interval` with the same ``df`` excludes 0."""
    from scipy.special import stdtr

    if se > 0:
        return float(2 * stdtr(df, -abs(estimate) / se))
    return 1.0 if estimate == 0 else 0.0


def welch_df(variances: Sequence[ArrayLike], dfs: Sequence[ArrayLike]) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variance terms,
    ``(sum v)^2 / sum(v^2 / df)``; where every term is 0, the smallest ``df``."""
    v = [np.asarray(x, dtype=float) for x in variances]
    d = [np.asarray(x, dtype=float) for x in dfs]
    num = sum(v) ** 2
    den = sum(vk * vk / dk for vk, dk in zip(v, d))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.minimum.reduce(np.broadcast_arrays(*d)))


def _var(x: np.ndarray, ddof: int = 1) -> np.ndarray:
    if x.shape[-1] <= ddof:
        return np.full(x.shape[:-1], math.nan)
    return np.var(x, axis=-1, ddof=ddof)


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")


def classical_mean(
    y: ArrayLike, *, n_pred: int | None = None, target: str = "items", confidence: float = 0.95
) -> Interval:
    """The humans-only mean of the gold scores ``y`` with its t interval (``n - 1`` degrees of
    freedom); with target ``items`` the finite-population correction ``1 - n / n_pred``
    (``n_pred``: the judged items)."""
    _check_target(target)
    y = np.asarray(y, dtype=float)
    n = y.size
    fpc = _fpc(n, n_pred, target)
    return t_interval(float(np.mean(y)), math.sqrt(fpc * float(_var(y)) / n), n - 1, confidence)


def _fpc(n: int, n_pred: int | None, target: str) -> float:
    if target == "population":
        return 1.0
    if n_pred is None or n_pred < n:
        raise ValueError(f"target 'items' needs n_pred >= n_gold ({n_pred} < {n})")
    return 1.0 - n / n_pred


def _tuned(y: np.ndarray, fg: np.ndarray, fu: np.ndarray, target: str) -> tuple[np.ndarray, np.ndarray]:
    """The tuned weight per dataset and whether it was estimated (False: forced to 0)."""
    n, n_u = y.shape[-1], fu.shape[-1]
    shape = y.shape[:-1]
    if n < 3 or n_u < (2 if target == "population" else 1):
        return np.zeros(shape), np.zeros(shape, dtype=bool)
    var_f = _var(np.concatenate([fg, fu], axis=-1))
    cov = np.mean((y - y.mean(-1, keepdims=True)) * (fg - fg.mean(-1, keepdims=True)), axis=-1) * n / (n - 1)
    estimated = var_f > 1e-300
    lam = np.where(estimated, (n_u / (n + n_u)) * cov / np.where(estimated, var_f, 1.0), 0.0)
    return lam, estimated


def tuned_lambda(y_gold: ArrayLike, f_gold: ArrayLike, f_unlabelled: ArrayLike, *, target: str = "items") -> float:
    """PPI++'s variance-minimising weight ``(1 - p) * cov_gold(y, f) / var_all(f)``; 0 where the judge
    does not vary, there are fewer than 3 gold items or no unlabelled items (fewer than 2 with target
    ``population``)."""
    _check_target(target)
    y, fg, fu = (np.asarray(a, dtype=float) for a in (y_gold, f_gold, f_unlabelled))
    return float(_tuned(y, fg, fu, target)[0])


def ppi_batch(
    y: ArrayLike, fg: ArrayLike, fu: ArrayLike, *, lam: float | None = None, target: str = "items"
) -> PPIBatch:
    """The prediction-powered estimate of many datasets at once (items along the last axis; module
    docstring): ``lam=None`` tunes the weight, with the small-sample terms of a tuned weight."""
    _check_target(target)
    y, fg, fu = (np.asarray(a, dtype=float) for a in (y, fg, fu))
    n, n_u = y.shape[-1], fu.shape[-1]
    p = n / (n + n_u)
    if lam is None:
        w, estimated = _tuned(y, fg, fu, target)
    else:
        forced = n_u == 0 or (target == "population" and n_u < 2)
        w, estimated = np.full(y.shape[:-1], 0.0 if forced else float(lam)), np.zeros(y.shape[:-1], dtype=bool)
    dm = fu.mean(-1) - fg.mean(-1) if n_u else np.zeros(y.shape[:-1])
    estimate = y.mean(-1) + w * dm
    c = (w / (1 - p) if n_u else w)[..., None]
    resid = y - c * fg  # the regression residual on the judge (for lam = 0, y)
    ddof = np.where(estimated, 2, 1)
    s2_items = _var(resid) * (n - 1) / np.maximum(n - ddof, 1)
    df_gold = (n - ddof).astype(float)
    # a tuned weight's own error, (lam_hat - lam) * (mean_u f - mean_gold f): its sandwich variance
    fc = fg - fg.mean(-1, keepdims=True)
    rc = resid - resid.mean(-1, keepdims=True)
    sxx = np.sum(fc * fc, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam_var = (1 - p) ** 2 * np.sum(fc * fc * rc * rc, axis=-1) / (sxx * sxx) * n / np.maximum(n - 2, 1)
    lam_term = np.where(estimated, np.nan_to_num(lam_var) * dm * dm, 0.0)
    if target == "items":
        var = (1 - p) * s2_items / n + lam_term
        df = df_gold
    else:
        s2_pop = _var(y - w[..., None] * fg) * (n - 1) / np.maximum(n - ddof, 1)
        gold_var = s2_pop / n + lam_term
        unl_var = w * w * _var(fu) / n_u if n_u >= 2 else np.zeros(y.shape[:-1])
        var = gold_var + unl_var
        df = welch_df([gold_var, unl_var], [df_gold, np.full(df_gold.shape, max(n_u - 1, 1.0))])
    return PPIBatch(estimate, np.sqrt(np.maximum(var, 0.0)), np.asarray(df, dtype=float), w)


def ppi_mean(
    y_gold: Sequence[float],
    f_gold: Sequence[float],
    f_unlabelled: Sequence[float],
    *,
    lam: float | None = None,
    target: str = "items",
    confidence: float = 0.95,
) -> PPIEstimate:
    """The prediction-powered mean (module docstring): ``lam=None`` tunes the weight (PPI++),
    ``lam=1`` is the original PPI. Needs at least 2 gold items."""
    _check_target(target)
    y, fg, fu = (np.asarray(a, dtype=float) for a in (y_gold, f_gold, f_unlabelled))
    n, n_u = y.size, fu.size
    if n < 2 or fg.size != n:
        raise ValueError(f"need at least 2 gold items with a judge score each (got {n} and {fg.size})")
    if not (np.isfinite(y).all() and np.isfinite(fg).all() and np.isfinite(fu).all()):
        raise ValueError("scores must be finite numbers")
    b = ppi_batch(y, fg, fu, lam=lam, target=target)
    se = float(b.se)
    classical = classical_mean(y, n_pred=n + n_u, target=target, confidence=confidence)
    ppi = t_interval(float(b.estimate), se, float(b.df), confidence)
    eff = effective_sample_size(float(_var(y)), se * se, n + n_u, target)
    return PPIEstimate(ppi, classical, float(b.lam), n, n + n_u, eff, target, confidence)


def effective_sample_size(var_y: float, se2: float, n_pred: int, target: str = "items") -> float:
    """Gold items the humans-only estimate would need for the variance ``se2`` (module docstring)."""
    _check_target(target)
    if target == "items":
        return var_y / (se2 + var_y / n_pred) if var_y > 0 else float(n_pred)
    return var_y / se2 if se2 > 0 else math.inf


def group_differences(estimates: Mapping[str, PPIEstimate], confidence: float = 0.95) -> list[Difference]:
    """Every pairwise difference ``a - b`` (groups in the mapping's order) of independent group
    estimates (disjoint items): ``se = sqrt(se_a^2 + se_b^2)``, a t quantile and p value with the
    Welch-Satterthwaite degrees of freedom of the two terms. Over the ``m`` differences the
    p values are Holm-adjusted and the intervals Bonferroni-adjusted (each at level
    ``1 - (1 - confidence) / m``), so that all ``m`` intervals hold together with at least
    ``confidence``. The same for the humans-only estimates."""
    pairs = list(combinations(estimates, 2))
    if not pairs:
        return []
    level = 1 - (1 - confidence) / len(pairs)

    def diff(a: Interval, b: Interval) -> tuple[Interval, float]:
        est, se = a.estimate - b.estimate, math.hypot(a.se, b.se)
        df = float(welch_df([a.se**2, b.se**2], [a.df, b.df]))
        return t_interval(est, se, df, level), two_sided_p(est, se, df)

    ppi = [diff(estimates[a].ppi, estimates[b].ppi) for a, b in pairs]
    cls = [diff(estimates[a].classical, estimates[b].classical) for a, b in pairs]
    ppi_holm = adjust_pvalues([p for _, p in ppi], "holm", missing="as_one")
    cls_holm = adjust_pvalues([p for _, p in cls], "holm", missing="as_one")
    return [
        Difference(a, b, ppi[k][0], ppi[k][1], ppi_holm[k], cls[k][0], cls[k][1], cls_holm[k])
        for k, (a, b) in enumerate(pairs)
    ]
