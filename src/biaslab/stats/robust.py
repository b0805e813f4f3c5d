"""Cluster-robust t test and interval of a pooled mean: CR2 variance, Bell-McCaffrey degrees of freedom.

Data as in :mod:`biaslab.stats.signflip`: cluster ``c`` holds ``n_c`` units whose values sum to
``Y_c``; the estimate is ``theta_hat = sum(Y) / N`` with ``N = sum(n)``. It is the least-squares
fit of the units' values on an intercept -- or, with strata, on one indicator per stratum, the
estimate being the stratum means weighted by their units (which is again ``sum(Y) / N``).

* Residuals per cluster: ``u_c = Y_c - m_c * n_c``, ``m_c`` the mean of the cluster's stratum
  (the overall mean without strata).
* CR2 (Bell & McCaffrey 2002): each cluster's residuals are scaled by ``(I - H_cc)^(-1/2)``; for
  this design ``H_cc = J / N_s`` (``N_s`` the units of the cluster's stratum), which gives the
  closed form ``V = sum_c u_c^2 / (1 - n_c / N_s) / N^2`` and ``se = sqrt(V)``. With equal cluster
  sizes and no strata it is the textbook ``s^2 / k`` of the cluster means.
* Degrees of freedom (Bell-McCaffrey, working model: independent units of equal variance):
  ``df = (tr M)^2 / tr(M^2)`` with ``M = G'G`` for the CR2 weights; in closed form
  ``df = N^2 / sum_s [sum a_c^2 - 2 sum a_c b_c / N_s + (sum b_c)^2 / N_s^2]`` with
  ``a_c = n_c / (1 - n_c / N_s)`` and ``b_c = n_c^2 / (1 - n_c / N_s)``. It is ``k - 1`` for equal
  sizes without strata and smaller when sizes are unequal (never more than ``k`` minus the strata).
* ``p = 2 * P(t_df > |theta_hat - theta0| / se)``; the interval ``theta_hat -+ t_df(1 - alpha/2) * se``
  is the set of nulls with ``p >= alpha``: the two agree by construction (equality at the ends).

Strata with a single cluster have no within-stratum spread (``1 - n_c / N_s = 0``): the strata
are then ignored (residuals from the overall mean), which is conservative when strata differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RobustResult", "cr2_inference"]


@dataclass(frozen=True)
class RobustResult:
    estimate: float
    p: float
    ci_low: float
    ci_high: float
    se: float
    df: float
    stratified: bool

    @property
    def method(self) -> str:
        within = ", within strata" if self.stratified else ""
        return f"cluster-robust t (CR2 variance, Bell-McCaffrey {self.df:.1f} df{within})"


def cr2_inference(
    totals: np.ndarray, sizes: np.ndarray, strata: np.ndarray | None = None, *, null: float, confidence: float = 0.95
) -> RobustResult:
    """CR2 t test of ``H0: theta = null`` and the matching interval. ``se`` is 0 (and ``p`` NaN)
    when every cluster sits at its stratum's mean: there is no spread to estimate."""
    from scipy.stats import t as student_t

    y = np.asarray(totals, dtype=float).ravel()
    n = np.asarray(sizes, dtype=float).ravel()
    if y.shape != n.shape or y.size < 2:
        raise ValueError(f"cr2_inference: {y.size} totals and {n.size} sizes; need as many, at least two")
    big_n = float(n.sum())
    est = float(y.sum() / big_n)
    labels = np.zeros(y.size, dtype=int)
    stratified = False
    if strata is not None:
        _, labels = np.unique(np.asarray(strata, dtype=str), return_inverse=True)
        counts = np.bincount(labels)
        stratified = counts.size > 1 and bool((counts >= 2).all())
        if not stratified:
            labels = np.zeros(y.size, dtype=int)
    n_s = np.bincount(labels, weights=n)
    mean_s = np.bincount(labels, weights=y) / n_s
    u = y - mean_s[labels] * n
    keep = 1.0 - n / n_s[labels]
    variance = float(np.sum(u * u / keep)) / big_n**2
    a = n / keep
    b = n * n / keep
    denom = float(
        np.sum(a * a)
        - 2 * np.sum(np.bincount(labels, weights=a * b) / n_s)
        + np.sum(np.bincount(labels, weights=b) ** 2 / n_s**2)
    )
    df = big_n**2 / denom
    se = math.sqrt(max(variance, 0.0))
    if se <= 1e-12 * max(1.0, float(np.max(np.abs(y / n)))):
        return RobustResult(est, math.nan, est, est, 0.0, df, stratified)
    crit = float(student_t.ppf(1 - (1 - confidence) / 2, df))
    stat = abs(est - float(null)) / se
    p = float(2 * student_t.sf(stat, df))
    return RobustResult(est, min(1.0, p), est - crit * se, est + crit * se, se, df, stratified)
