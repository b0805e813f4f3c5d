"""One entry point for a mean over clustered units: value, interval and p value from one procedure.

:func:`cluster_inference` takes per-unit values (a bias score: one 0/100 indicator per pair; a
likelihood difference: one number per pair), the cluster of every unit (the predicate a pair was
built from; None when units are independent), optional strata (target groups) and the null, and
returns ``{value, ci_low, ci_high, p, null, n, n_clusters, method, confidence}`` plus ``reason``
(and ``too_small`` / ``degenerate``) whenever there is no interval. :func:`paired_cluster_inference`
does the same for run B minus run A on shared units. The value is always the pooled mean over
units (``sum / n``), and the test's statistic is that value's distance from the null, so the test
is of the number shown.

The procedure, in order (``k`` clusters; a cluster is identified by its stratum and its label):

1. **Independent 0/1 units** (every cluster one unit, every value at one of the two ``bounds``):
   exact binomial test (central, :func:`~biaslab.stats.intervals.binomial_central_p`) and its
   inversion, the Clopper-Pearson interval. Fewer than 2 units: too small.
2. **Too few clusters**: with ``k < min_clusters(confidence)`` (6 at 95%) no test that treats the
   clusters as the units of evidence can give ``p < 1 - confidence`` (its smallest p is
   ``2^(1-k)``), so there is no interval; ``too_small`` with the reason, and the exact sign-flip p.
3. **Every unit at a bound** (e.g. every pair stereotypical): the spread between clusters is 0,
   but a value at a bound has an exact interval treating each *cluster* as one trial (k of k):
   if all of a cluster's units are at the upper bound with probability at most the rescaled mean
   ``q`` (Markov, values in ``[lo, hi]``), all ``k`` clusters are with probability at most
   ``q^k``. Clopper-Pearson for ``k`` of ``k`` (or 0 of ``k``) and the binomial p with ``k``
   trials -- valid (conservative) whatever the correlation within clusters.
4. **Every cluster at the same mean** (not at a bound): no spread to estimate -- no interval
   (``degenerate``), p 1 when the value equals the null, else no p.
5. **Few informative clusters** (fewer than :data:`MIN_ROBUST_CLUSTERS` clusters holding a value
   other than the most common unit value): the cluster sign-flip test, exact over all ``2^k``
   sign patterns up to 16 clusters, Monte Carlo beyond, with its interval by test inversion
   (:mod:`biaslab.stats.signflip`). It needs each cluster's residual to be symmetric under the
   null, not normality; strata are not used (flipping whole clusters is valid across strata and
   conservative when strata differ).
6. **Many informative clusters**: the cluster-robust t test with CR2 variance and Bell-McCaffrey
   degrees of freedom, residuals within strata (:mod:`biaslab.stats.robust`); its p is floored at
   ``2^(1-k)`` (far below any level at these k, so the agreement below is untouched).

Every p value of steps 2, 5 and 6 is at least ``2^(1-k)``. The exact binomial steps (1, 3) give
the binomial's own p, which equals ``2^(1-k)`` for k of k against the scale's midpoint and is
smaller only against an off-centre null.

``method`` forces a procedure: ``"sign-flip"`` or ``"cluster-robust"`` (steps 1-4 still apply).
With ``bounds`` the interval is clipped to them (so it never leaves the scale; for a null inside
the bounds clipping changes nothing about the agreement). Agreement: in every result with an
interval, ``p < 1 - confidence`` exactly when the interval excludes the null, up to floating-point
ties at the interval's ends; in every result without one, p is None or at least ``1 - confidence``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from biaslab.stats.intervals import MIN_UNITS, binomial_central_p, clopper_pearson, units_text
from biaslab.stats.ranges import difference_range, within_range
from biaslab.stats.robust import cr2_inference
from biaslab.stats.signflip import MAX_EXACT_CLUSTERS, N_RANDOM_FLIPS, sign_flip_inference

__all__ = ["cluster_inference", "paired_cluster_inference", "min_clusters", "attainable_min_p", "MIN_ROBUST_CLUSTERS"]

MIN_ROBUST_CLUSTERS = 30  # informative clusters from which the cluster-robust t replaces the sign-flip test
METHODS = ("auto", "sign-flip", "cluster-robust")


def attainable_min_p(k: int) -> float:
    """The smallest two-sided p value a test over ``k`` exchangeable clusters can give: ``2^(1-k)``."""
    return 1.0 if k <= 1 else 2.0 ** (1 - k)


def min_clusters(confidence: float = 0.95) -> int:
    """The fewest clusters for which a two-sided test can reach ``p < 1 - confidence`` (6 at 95%)."""
    k = 1
    while attainable_min_p(k) >= 1 - confidence:
        k += 1
    return k


def _clusters(
    n: int, clusters: Sequence[Any] | np.ndarray | None, strata: Sequence[Any] | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """``(cluster index per unit, stratum code per cluster or None)``; a cluster is (stratum, label)."""
    for name, labels in (("clusters", clusters), ("strata", strata)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{name}: {len(labels)} labels for {n} values; give one per value")
    if n == 0:
        return np.zeros(0, dtype=int), None
    ids = np.arange(n) if clusters is None else _codes(clusters)
    if strata is None:
        return ids, None
    stratum = _codes(strata)
    if clusters is not None:
        ids = _codes(stratum * (int(ids.max()) + 1) + ids)
    per_cluster = np.empty(int(ids.max()) + 1, dtype=np.int64)
    per_cluster[ids] = stratum
    return ids, per_cluster


def _codes(labels: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Integer codes of labels (equal labels, equal codes)."""
    arr = np.asarray(labels)
    if arr.dtype == object or arr.ndim != 1:
        arr = np.array([repr(x) for x in labels], dtype=str)
    return np.unique(arr, return_inverse=True)[1].reshape(-1)


def _base(value: float | None, null: float | None, n: int, k: int, confidence: float) -> dict[str, Any]:
    return {
        "value": value,
        "ci_low": None,
        "ci_high": None,
        "p": None,
        "null": null,
        "n": int(n),
        "n_clusters": int(k),
        "method": "",
        "confidence": confidence,
    }


def _scaled_binomial(
    out: dict[str, Any], hits: int, trials: int, lo: float, hi: float, null: float | None, confidence: float
) -> dict[str, Any]:
    """Clopper-Pearson interval and central binomial p for ``hits`` of ``trials``, on the scale [lo, hi]."""
    c_lo, c_hi = clopper_pearson(hits, trials, confidence)
    out.update(ci_low=lo + (hi - lo) * c_lo, ci_high=lo + (hi - lo) * c_hi, interval="clopper-pearson")
    if null is not None:
        out["p"] = binomial_central_p(hits, trials, min(1.0, max(0.0, (null - lo) / (hi - lo))))
    return out


def _informative(values: np.ndarray, ids: np.ndarray) -> int:
    """Clusters holding at least one value other than the most common unit value."""
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    other = inverse != int(np.argmax(counts))
    return int(np.unique(ids[other]).size)


def cluster_inference(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray | None = None,
    strata: Sequence[Any] | np.ndarray | None = None,
    *,
    null: float | None,
    bounds: tuple[float, float] | None = None,
    value_range: tuple[float, float] | None = None,
    confidence: float = 0.95,
    method: str = "auto",
    label: str = "clusters",
    seed: int = 0,
    n_random: int = N_RANDOM_FLIPS,
) -> dict[str, Any]:
    """Value (pooled mean of ``values``), interval and p value of ``H0: mean = null`` from one procedure.

    ``clusters``: one label per value (None: every unit independent); ``strata``: one label per
    value, constant within a cluster (a cluster label may recur in another stratum: it is another
    cluster). ``bounds``: the range every value lies in (``(0, 100)`` for a percentage indicator),
    which enables the exact steps; ``value_range``: the range the mean lies in even where the unit values
    leave it (a rate over linearised units, :mod:`biaslab.stats.unit_values`): the interval is clipped to
    it and the result records it as ``range``; ``null`` None: no test, the interval only. ``label`` names
    the clusters in reasons ("predicates"). See the module docstring for the procedure; the result's
    ``method`` names the step used.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    y = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(y).all():
        raise ValueError("cluster_inference: values must be finite (drop undefined units first)")
    n = y.size
    ids, cluster_strata = _clusters(n, clusters, strata)
    if n == 0:
        return {**_base(None, null, 0, 0, confidence), "reason": "no units"}
    k = int(ids.max()) + 1
    totals = np.bincount(ids, weights=y, minlength=k)
    sizes = np.bincount(ids, minlength=k).astype(float)
    label = "units" if clusters is None and label == "clusters" else label
    if bounds is not None and not (bounds[0] < bounds[1]):
        raise ValueError(f"bounds must be (low, high) with low < high, got {bounds}")
    if bounds is not None and ((y < bounds[0]).any() or (y > bounds[1]).any()):
        raise ValueError(f"cluster_inference: values outside the bounds {bounds}")
    out = _infer(
        y,
        ids,
        totals,
        sizes,
        cluster_strata,
        null=null,
        bounds=bounds,
        confidence=confidence,
        method=method,
        label=label,
        seed=seed,
        n_random=n_random,
    )
    return out if value_range is None else within_range(out, value_range)


def _infer(
    y: np.ndarray,
    ids: np.ndarray,
    totals: np.ndarray,
    sizes: np.ndarray,
    cluster_strata: np.ndarray | None,
    *,
    null: float | None,
    bounds: tuple[float, float] | None,
    confidence: float,
    method: str,
    label: str,
    seed: int,
    n_random: int,
) -> dict[str, Any]:
    n, k = y.size, totals.size
    value = float(totals.sum() / sizes.sum())
    out = _base(value, null, n, k, confidence)
    alpha = 1 - confidence
    test_at = value if null is None else float(null)
    independent = bool((sizes == 1).all())
    if bounds is not None and independent and np.isin(y, bounds).all():  # step 1: Bernoulli trials
        if n < MIN_UNITS:
            out.update(
                too_small=True,
                method="exact binomial (Clopper-Pearson)",
                reason=f"{units_text(n, label)}: too few to estimate spread",
            )
            return out
        out["method"] = "exact binomial test, Clopper-Pearson interval (independent units)"
        return _scaled_binomial(out, int(np.count_nonzero(y == bounds[1])), n, *bounds, null, confidence)
    if k < min_clusters(confidence):  # step 2
        flip = sign_flip_inference(totals, sizes, null=test_at, confidence=confidence)
        out.update(
            too_small=True,
            method="cluster " + flip.method if not independent else flip.method,
            reason=f"{units_text(k, label)}: too few to estimate spread (the smallest p any test on "
            f"{units_text(k, label)} can give is {attainable_min_p(k):.3g})",
        )
        if null is not None:
            out["p"] = flip.p
        return out
    if bounds is not None and (np.all(y == bounds[0]) or np.all(y == bounds[1])):  # step 3
        at_top = bool(y[0] == bounds[1])
        edge = f"{bounds[1] if at_top else bounds[0]:g}"
        out["method"] = f"exact binomial over {units_text(k, label)} as trials (every unit at {edge})"
        return _scaled_binomial(out, k if at_top else 0, k, *bounds, null, confidence)
    scale = max(1.0, float(np.max(np.abs(totals / sizes))))
    if np.all(np.abs(totals - value * sizes) <= 1e-12 * scale * sizes):  # step 4
        out.update(
            degenerate=True,
            method="none (no spread between clusters)",
            reason=f"all {units_text(k, label)} have the same mean ({value:.6g}): no spread to estimate",
        )
        if null is not None and math.isclose(value, test_at, rel_tol=1e-12, abs_tol=1e-12 * scale):
            out["p"] = 1.0
        return out
    robust = method == "cluster-robust" or (method == "auto" and _informative(y, ids) >= MIN_ROBUST_CLUSTERS)
    where = "" if independent else "cluster "
    if robust:
        res = cr2_inference(totals, sizes, cluster_strata, null=test_at, confidence=confidence)
        if res.se == 0:
            out.update(
                degenerate=True,
                method=res.method,
                reason=f"every one of the {units_text(k, label)} equals its stratum's mean: no spread",
            )
            return out
        # never below what k exchangeable clusters allow (2^(1-k) < alpha here, so agreement holds)
        lo, hi, p, out["method"] = res.ci_low, res.ci_high, max(res.p, attainable_min_p(k)), res.method
        out.update(se=res.se, df=res.df)
    else:
        flip = sign_flip_inference(
            totals,
            sizes,
            null=test_at,
            confidence=confidence,
            max_exact=MAX_EXACT_CLUSTERS,
            n_random=n_random,
            seed=seed,
        )
        lo, hi, p, out["method"] = flip.ci_low, flip.ci_high, flip.p, where + flip.method
    if not (math.isfinite(lo) and math.isfinite(hi)):
        out.update(too_small=True, reason=f"{units_text(k, label)}: too few to bound a {100 * confidence:g}% interval")
    elif hi - lo <= 1e-12 * scale:
        out.update(degenerate=True, reason=f"the {units_text(k, label)} show no spread: zero-width interval")
    else:
        if bounds is not None:
            lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
        out.update(ci_low=float(lo), ci_high=float(hi))
    if null is not None:
        out["p"] = float(p)
        if out["ci_low"] is None and out["p"] < alpha:  # never a significant p without its interval
            out["p"] = None
    return out


def paired_cluster_inference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray | None = None,
    strata: Sequence[Any] | np.ndarray | None = None,
    *,
    null: float | None = 0.0,
    bounds: tuple[float, float] | None = None,
    value_range: tuple[float, float] | None = None,
    confidence: float = 0.95,
    method: str = "auto",
    label: str = "clusters",
    seed: int = 0,
    n_random: int = N_RANDOM_FLIPS,
) -> dict[str, Any]:
    """Run B minus run A on shared units: :func:`cluster_inference` of ``d = b - a`` (unit ``i`` of
    ``a`` and of ``b`` is the same item), plus ``a`` and ``b``, the two runs' means.

    ``bounds``: the range of the runs' unit values (``(0, 100)`` for a bias-score indicator); the
    differences then lie in ``[-(hi - lo), hi - lo]``. One more exact step than the one-sample
    case: when no unit changed (every difference 0) over ``k >= min_clusters`` clusters, a cluster
    is unchanged with probability at most ``1 - |mean difference| / (hi - lo)``, so the interval
    is ``+-(hi - lo) * (1 - (alpha/2)^(1/k))`` and ``p = min(1, 2 * (1 - |null| / (hi - lo))^k)``.
    ``value_range``: the range of each run's mean (``(0, 1)`` for a rate, whatever its unit values); the
    difference's interval is clipped to the range of a difference, :func:`~biaslab.stats.ranges.difference_range`.
    """
    xa = np.asarray(a, dtype=float).ravel()
    xb = np.asarray(b, dtype=float).ravel()
    if xa.shape != xb.shape:
        raise ValueError(f"paired_cluster_inference: a has {xa.size} values and b {xb.size}; they must be paired")
    width = None if bounds is None else float(bounds[1] - bounds[0])
    d_bounds = None if width is None else (-width, width)
    out = cluster_inference(
        xb - xa,
        clusters,
        strata,
        null=null,
        bounds=d_bounds,
        confidence=confidence,
        method=method,
        label=label,
        seed=seed,
        n_random=n_random,
    )
    out = {"a": float(xa.mean()) if xa.size else None, "b": float(xb.mean()) if xb.size else None, **out}
    k = out["n_clusters"]
    if width is not None and xa.size and np.all(xa == xb) and not out.get("too_small"):
        alpha = 1 - confidence
        half = width * (1 - (alpha / 2) ** (1 / k))
        out.pop("degenerate", None)
        out.pop("reason", None)
        out.update(ci_low=-half, ci_high=half, method=f"exact bound over {units_text(k, label)} (no unit changed)")
        if null is not None:
            out["p"] = min(1.0, 2 * max(0.0, 1 - abs(float(null)) / width) ** k)
    return out if value_range is None else within_range(out, difference_range(value_range))
