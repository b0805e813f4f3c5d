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

``s2`` is the sample variance (``ddof=1``). Intervals are normal: ``estimate +- z * se``.

The tuned weight minimises the variance under either target (the same formula):
``lam = (1 - p) * cov(y, f) / var(f)``, the covariance over the gold items and the judge's variance
over all ``N`` items (PPI++ pools both samples for it), i.e. ``cov / ((1 + n / N_u) var)``.
It is 0 where the judge does not vary or there are no unlabelled items (with target ``population``,
fewer than 2), where PPI reduces to the humans-only mean.

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

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

TARGETS = ("items", "population")


@dataclass(frozen=True)
class Interval:
    """A point estimate with its standard error and normal interval."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float

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


def z_value(confidence: float) -> float:
    """The two-sided normal quantile: 1.96 for 0.95."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def normal_interval(estimate: float, se: float, confidence: float = 0.95) -> Interval:
    half = z_value(confidence) * se
    return Interval(float(estimate), float(se), float(estimate - half), float(estimate + half))


def two_sided_p(estimate: float, se: float) -> float:
    """The normal two-sided p value of ``estimate`` against 0."""
    if se > 0:
        return 2 * NormalDist().cdf(-abs(estimate) / se)
    return 1.0 if estimate == 0 else 0.0


def _var(x: np.ndarray) -> float:
    return float(np.var(x, ddof=1)) if x.size >= 2 else math.nan


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")


def classical_mean(
    y: ArrayLike, *, n_pred: int | None = None, target: str = "items", confidence: float = 0.95
) -> Interval:
    """The humans-only mean of the gold scores ``y`` with its normal interval; with target ``items``
    the finite-population correction ``1 - n / n_pred`` (``n_pred``: the judged items)."""
    _check_target(target)
    y = np.asarray(y, dtype=float)
    n = y.size
    fpc = _fpc(n, n_pred, target)
    return normal_interval(float(np.mean(y)), math.sqrt(fpc * _var(y) / n), confidence)


def _fpc(n: int, n_pred: int | None, target: str) -> float:
    if target == "population":
        return 1.0
    if n_pred is None or n_pred < n:
        raise ValueError(f"target 'items' needs n_pred >= n_gold ({n_pred} < {n})")
    return 1.0 - n / n_pred


def tuned_lambda(y_gold: ArrayLike, f_gold: ArrayLike, f_unlabelled: ArrayLike, *, target: str = "items") -> float:
    """PPI++'s variance-minimising weight ``(1 - p) * cov_gold(y, f) / var_all(f)``; 0 where the judge
    does not vary or there are no unlabelled items (fewer than 2 with target ``population``)."""
    _check_target(target)
    y, fg, fu = (np.asarray(a, dtype=float) for a in (y_gold, f_gold, f_unlabelled))
    n, n_u = y.size, fu.size
    if n < 2 or n_u < (2 if target == "population" else 1):
        return 0.0
    var_f = _var(np.concatenate([fg, fu]))
    if not var_f > 1e-300:
        return 0.0
    cov = float(np.cov(y, fg, ddof=1)[0, 1])
    return (n_u / (n + n_u)) * cov / var_f


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
    n_pred = n + n_u
    if lam is None:
        lam = tuned_lambda(y, fg, fu, target=target)
    elif n_u == 0 or (target == "population" and n_u < 2):
        lam = 0.0  # nothing unlabelled to borrow strength from
    lam = float(lam)
    estimate = float(np.mean(y) + (lam * (np.mean(fu) - np.mean(fg)) if n_u else 0.0))
    if target == "items":
        p = n / n_pred
        resid = y - (lam / (1 - p)) * fg if lam else y
        var = (1 - p) * _var(resid) / n
    else:
        var = _var(y - lam * fg) / n + (lam * lam * _var(fu) / n_u if lam else 0.0)
    classical = classical_mean(y, n_pred=n_pred, target=target, confidence=confidence)
    ppi = normal_interval(estimate, math.sqrt(max(var, 0.0)), confidence)
    return PPIEstimate(
        ppi, classical, lam, n, n_pred, effective_sample_size(_var(y), var, n_pred, target), target, confidence
    )


def effective_sample_size(var_y: float, se2: float, n_pred: int, target: str = "items") -> float:
    """Gold items the humans-only estimate would need for the variance ``se2`` (module docstring)."""
    _check_target(target)
    if target == "items":
        return var_y / (se2 + var_y / n_pred) if var_y > 0 else float(n_pred)
    return var_y / se2 if se2 > 0 else math.inf


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p values: ``max_{j <= i} min(1, (m - j + 1) * p_(j))`` in sorted order."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    out = np.empty(m)
    if m == 0:
        return out
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, p[order] * (m - np.arange(m)))
    out[order] = np.maximum.accumulate(scaled)
    return out


def group_differences(estimates: Mapping[str, PPIEstimate], confidence: float = 0.95) -> list[Difference]:
    """Every pairwise difference ``a - b`` (groups in the mapping's order) of independent group
    estimates (disjoint items): ``se = sqrt(se_a^2 + se_b^2)``. Over the ``m`` differences the
    p values are Holm-adjusted and the intervals Bonferroni-adjusted (each at level
    ``1 - (1 - confidence) / m``), so that all ``m`` intervals hold together with at least
    ``confidence``. The same for the humans-only estimates."""
    pairs = list(combinations(estimates, 2))
    if not pairs:
        return []
    level = 1 - (1 - confidence) / len(pairs)

    def diff(a: Interval, b: Interval) -> tuple[Interval, float]:
        est, se = a.estimate - b.estimate, math.hypot(a.se, b.se)
        return normal_interval(est, se, level), two_sided_p(est, se)

    ppi = [diff(estimates[a].ppi, estimates[b].ppi) for a, b in pairs]
    cls = [diff(estimates[a].classical, estimates[b].classical) for a, b in pairs]
    ppi_holm, cls_holm = holm([p for _, p in ppi]), holm([p for _, p in cls])
    return [
        Difference(a, b, ppi[k][0], ppi[k][1], float(ppi_holm[k]), cls[k][0], cls[k][1], float(cls_holm[k]))
        for k, (a, b) in enumerate(pairs)
    ]
