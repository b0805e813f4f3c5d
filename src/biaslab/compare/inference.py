"""The test of one metric's difference between two paired runs, interval and p value from one procedure.

* A metric the probe's pairing declares as a mean of one value per row (:meth:`Pairing.unit_values`:
  bias scores, tie rates, mean differences) gets :func:`biaslab.stats.clustered.paired_cluster_inference`
  on the rows' differences B - A, clustered by the pairing's clusters (predicates, templates, ...): an exact
  binomial test where the rows are independent 0/1 units, none below ``2^(1-k)`` over ``k`` clusters, no
  interval ("too small", with the reason) over fewer than 6 clusters.
* Any other metric (a correlation, a ratio of sums) gets the paired bootstrap over the same units (the
  same draw for both runs) and the p value of the same resamples: ``p = 2 min(#{d* <= 0}, #{d* >= 0}) / B``,
  whose inversion is the percentile interval taken at order statistics, so ``p < 0.05`` exactly when the
  interval excludes 0. The p value is floored at ``2^(1-k)`` over ``k`` clusters, or ``k`` independent units
  (:func:`floor_p`: no exact test of ``k`` units gives less), and fewer than 6 get no interval
  (:func:`biaslab.stats.honest.honest_metric`, which also replaces zero-width intervals). A dedicated test
  of the pairing keeps the same floor.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from biaslab.probing.pairing import UnitValues
from biaslab.stats.clustered import attainable_min_p, paired_cluster_inference
from biaslab.stats.honest import honest_metric

Table = Mapping[str, np.ndarray]
ALPHA = 0.05


def row_clusters(
    n: int, units: Sequence[np.ndarray] | None, strata: Sequence[str] | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """One cluster label and one stratum label per row (None, None when every row is its own unit)."""
    if units is None:
        return None, None
    labels = np.full(n, -1, dtype=int)
    stratum = np.empty(n, dtype=object)
    for u, idx in enumerate(units):
        labels[np.asarray(idx, dtype=int)] = u
        stratum[np.asarray(idx, dtype=int)] = strata[u] if strata is not None else "all"
    return labels, stratum


def unit_test(
    uv_a: UnitValues, uv_b: UnitValues, clusters: np.ndarray | None, strata: np.ndarray | None, label: str, seed: int
) -> dict[str, Any]:
    """Paired cluster inference of a mean-of-rows metric; keys ``diff ci_low ci_high p test n_clusters ...``."""
    m = np.asarray(uv_a.mask, dtype=bool)
    res = paired_cluster_inference(
        np.asarray(uv_a.values, float)[m],
        np.asarray(uv_b.values, float)[m],
        None if clusters is None else clusters[m],
        None if strata is None else strata[m],
        null=0.0,
        bounds=uv_a.bounds if uv_a.bounds == uv_b.bounds else None,  # linearised values may leave them in one run
        label=label,
        seed=seed,
    )
    out = {
        "diff": res["value"],
        "ci_low": res["ci_low"],
        "ci_high": res["ci_high"],
        "p": res["p"],
        "test": res["method"],
        "n_shared": int(m.sum()),
        "n_clusters": res["n_clusters"],
    }
    for key in ("reason", "too_small", "degenerate"):
        if res.get(key):
            out[key] = res[key]
    return out


def bootstrap_samples(
    a: Table,
    b: Table,
    fn: Callable[[Table], Mapping[str, float]],
    names: Sequence[str],
    *,
    units: Sequence[np.ndarray] | None,
    strata: Sequence[str] | None,
    n_resamples: int,
    seed: int,
) -> np.ndarray:
    """``(n_resamples, len(names))`` paired bootstrap differences (units resampled within strata)."""
    n = len(next(iter(a.values())))
    units = units if units is not None else [np.array([i]) for i in range(n)]
    strata = list(strata) if strata is not None else ["all"] * len(units)
    by: dict[str, list[int]] = {}
    for u, s in enumerate(strata):
        by.setdefault(str(s), []).append(u)
    rng = np.random.default_rng(seed)
    out = np.full((n_resamples, len(names)), np.nan)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for r in range(n_resamples):
            picked = [units[u] for members in by.values() for u in rng.choice(members, size=len(members))]
            idx = np.concatenate(picked) if picked else np.array([], dtype=int)
            fa = fn({k: np.asarray(v)[idx] for k, v in a.items()})
            fb = fn({k: np.asarray(v)[idx] for k, v in b.items()})
            out[r] = [_f(fb.get(x)) - _f(fa.get(x)) for x in names]
    return out


def _f(v: Any) -> float:
    return float(v) if isinstance(v, (int, float, np.floating, np.integer)) else math.nan


def floor_p(p: float | None, units: int) -> float | None:
    """``p`` raised to the smallest p an exact test over ``units`` independent units or clusters can give
    (:func:`~biaslab.stats.clustered.attainable_min_p`): a resampling p of 0 over 8 units is 2^(1-8)."""
    return None if p is None else max(float(p), attainable_min_p(units))


def bootstrap_test(
    samples: np.ndarray, diff: float, *, k: int | None, n_units: int, label: str, n_resamples: int
) -> dict[str, Any]:
    """Percentile interval and the p value of the same resamples (module docstring); ``k``: clusters or None."""
    col = samples[np.isfinite(samples)]
    method = f"paired bootstrap over {label} ({n_resamples} resamples), p from the same resamples"
    out: dict[str, Any] = {"diff": diff, "ci_low": None, "ci_high": None, "p": None, "test": method, "n_clusters": k}
    if col.size < max(10, n_resamples // 2):
        out["reason"] = "the metric is undefined in most resamples"
        return out
    col = np.sort(col)
    big_b = col.size
    m = max(1, math.ceil(ALPHA / 2 * big_b))
    lo, hi = float(col[m - 1]), float(col[big_b - m])
    below, above = int(np.count_nonzero(col <= 0)), int(np.count_nonzero(col >= 0))
    units = k if k is not None else n_units  # independent units are clusters of one
    p = floor_p(min(1.0, 2 * min(below, above) / big_b), units)
    out.update(ci_low=lo, ci_high=hi, p=p)
    metric = {"value": diff, "ci_low": lo, "ci_high": hi, "p": p, "n": n_units}
    honest = honest_metric(metric, independent=False, n_clusters=units, label=label)
    out.update(ci_low=honest.get("ci_low"), ci_high=honest.get("ci_high"), p=honest.get("p"))
    for key in ("reason", "too_small", "degenerate"):
        if honest.get(key) and out["ci_low"] is None:
            out[key] = honest[key]
    if out["ci_low"] is None and out["p"] is not None and out["p"] < ALPHA:
        out["p"] = None  # never a significant p without its interval
    return out


def agrees(row: Mapping[str, Any], alpha: float = ALPHA) -> bool:
    """Whether a row's interval and p value tell the same story (excludes 0 exactly when p < alpha)."""
    lo, hi, p = row.get("ci_low"), row.get("ci_high"), row.get("p")
    if p is None:
        return True
    if lo is None or hi is None:
        return p >= alpha
    null = float(row.get("null", 0.0) or 0.0)
    excludes = lo > null or hi < null
    scale = max(1.0, abs(lo), abs(hi))
    if abs(lo - null) <= 1e-9 * scale or abs(hi - null) <= 1e-9 * scale:
        return True  # a tie at the interval's end
    return excludes == (p < alpha)
