"""Intervals and tests over a design's real unit, kept inside its strata.

The rows of a probe's table are not always its unit of variation. The three letters written for one name are
one unit (the name), not three; the sentences of one GEST stereotype belong to a category the design fixes
(every resample should keep some of each). Two tools for such designs:

* :func:`stratified_bootstrap_metrics` resamples *clusters* of rows (default: each row its own cluster) with
  replacement *within each stratum* (default: one stratum), so every resample keeps the design -- how many
  units each stratum has -- and returns what :func:`biaslab.stats.bootstrap.bootstrap_metrics` returns
  (percentile intervals, made honest by :func:`biaslab.stats.intervals.honest_interval`; ``n`` = clusters).
* :func:`label_permutation_test` tests a statistic that compares rows by a label (a name's gender, a prompt's
  gender, a sentence's stereotype): the labels are shuffled among the clusters of each stratum (a cluster keeps
  one label), and the two-sided Monte Carlo p-value is ``(1 + #{|T*| >= |T|}) / (1 + R)``. Under the null the
  label does not matter to what the model wrote, so every such relabelling is as likely as the observed one.

All randomness comes from a local generator seeded by ``seed``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from biaslab.stats.intervals import honest_interval
from biaslab.stats.significance import TestResult

Table = Mapping[str, np.ndarray]


def _codes(values: np.ndarray | None, n: int) -> np.ndarray:
    """Integer codes (first-appearance order) of a label column; all zero when there is none."""
    if values is None:
        return np.zeros(n, dtype=np.intp)
    index: dict = {}
    return np.array([index.setdefault(v, len(index)) for v in np.asarray(values, dtype=object).tolist()], dtype=np.intp)


def _clusters(
    n: int, strata: np.ndarray | None, clusters: np.ndarray | None
) -> tuple[list[list[np.ndarray]], np.ndarray, np.ndarray]:
    """Per stratum, the row indices of each of its clusters; and each cluster's code and stratum code."""
    cluster_code = _codes(clusters, n) if clusters is not None else np.arange(n, dtype=np.intp)
    stratum_code = _codes(strata, n)
    k = int(cluster_code.max()) + 1 if n else 0
    rows: list[list[int]] = [[] for _ in range(k)]
    cluster_stratum = np.full(k, -1, dtype=np.intp)
    for i, (c, s) in enumerate(zip(cluster_code.tolist(), stratum_code.tolist())):
        rows[c].append(i)
        if cluster_stratum[c] not in (-1, s):
            raise ValueError("a cluster spans two strata: give clusters nested in the strata")
        cluster_stratum[c] = s
    per_stratum: list[list[np.ndarray]] = [[] for _ in range(int(stratum_code.max()) + 1 if n else 0)]
    for c in range(k):
        per_stratum[cluster_stratum[c]].append(np.array(rows[c], dtype=np.intp))
    return per_stratum, cluster_code, cluster_stratum


def stratified_bootstrap_metrics(
    table: Table,
    fn: Callable[[Table], Mapping[str, float]],
    *,
    strata: np.ndarray | None = None,
    clusters: np.ndarray | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    proportions: Collection[str] = (),
    units: Mapping[str, int] | None = None,
) -> dict[str, dict[str, Any]]:
    """Point estimate and percentile interval of every metric ``fn`` returns, resampling the clusters of each
    stratum with replacement (rows of a cluster move together).

    ``strata`` and ``clusters`` hold one label per row of ``table`` (clusters nested in strata). Output as
    :func:`biaslab.stats.bootstrap.bootstrap_metrics`: ``{name: {"value", "ci_low", "ci_high", "n", ...}}``
    with ``n`` the number of clusters, or ``units[name]`` for a metric over fewer (one stratum's);
    ``proportions`` names the rates in [0, 1] (exact interval when every resample gives 0 or 1).
    """
    n = len(next(iter(table.values()))) if table else 0
    per_stratum, _, _ = _clusters(n, strata, clusters)
    n_units = sum(len(s) for s in per_stratum)
    layouts = [_layout(m) for m in per_stratum]
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = {k: _finite(v) for k, v in fn(table).items()}
        samples: dict[str, list[float]] = {k: [] for k in point}
        for _ in range(n_resamples if n else 0):
            idx = np.concatenate([_draw(layout, rng) for layout in layouts])
            for k, v in fn({c: np.asarray(col)[idx] for c, col in table.items()}).items():
                if k in samples:
                    samples[k].append(float(v) if v is not None else math.nan)
    alpha = (1 - confidence) / 2
    out: dict[str, dict[str, Any]] = {}
    for name, value in point.items():
        arr = np.asarray(samples[name], dtype=float)
        arr = arr[np.isfinite(arr)]
        ok = value is not None and arr.size >= max(10, n_resamples // 2)
        out[name] = honest_interval(
            value,
            float(np.quantile(arr, alpha)) if ok else None,
            float(np.quantile(arr, 1 - alpha)) if ok else None,
            n=int((units or {}).get(name, n_units)),
            scale=1.0 if name in proportions else None,
            confidence=confidence,
        )
    return out


def label_permutation_test(
    statistic: Callable[[np.ndarray], np.ndarray | float],
    labels: np.ndarray,
    *,
    strata: np.ndarray | None = None,
    clusters: np.ndarray | None = None,
    n_permutations: int = 10_000,
    seed: int = 0,
    method: str = "permutation of labels",
) -> list[TestResult]:
    """Two-sided Monte Carlo tests of the components of ``statistic(labels)`` (a number or a vector), by
    shuffling ``labels`` (one per row, the same for every row of a cluster) among the clusters of each stratum.

    Returns one :class:`TestResult` per component (``p`` NaN where the observed component is undefined).
    """
    labels = np.asarray(labels)
    n = labels.size
    _, cluster_code, cluster_stratum = _clusters(n, strata, clusters)
    k = cluster_stratum.size
    cluster_label = np.empty(k, dtype=labels.dtype)
    cluster_label[cluster_code] = labels
    if not np.array_equal(cluster_label[cluster_code], labels):
        raise ValueError("rows of one cluster carry different labels")
    observed = np.atleast_1d(np.asarray(statistic(labels), dtype=float))
    tol = 1e-10 * np.maximum(1.0, np.abs(observed))
    order = np.argsort(cluster_stratum, kind="stable")  # clusters grouped by stratum
    one_stratum = bool(k) and bool(np.all(cluster_stratum == cluster_stratum[0]))
    rng = np.random.default_rng(seed)
    exceed = np.zeros(observed.size)
    valid = np.zeros(observed.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(n_permutations):
            shuffled = (
                rng.permutation(k)
                if one_stratum  # grouped by stratum, random within
                else np.lexsort((rng.random(k), cluster_stratum))
            )
            relabelled = np.empty_like(cluster_label)
            relabelled[order] = cluster_label[shuffled]
            t = np.atleast_1d(
                np.asarray(statistic(relabelled if clusters is None else relabelled[cluster_code]), dtype=float)
            )
            ok = np.isfinite(t)
            valid += ok
            exceed += ok & (np.abs(t) >= np.abs(observed) - tol)
    out = []
    for i, obs in enumerate(observed.tolist()):
        if not math.isfinite(obs) or valid[i] == 0:
            out.append(TestResult(obs, math.nan, k, f"{method} (undefined)"))
        else:
            out.append(
                TestResult(obs, float((exceed[i] + 1) / (valid[i] + 1)), k, f"{method}, {n_permutations} random")
            )
    return out


def _layout(members: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A stratum's clusters as one array of rows, each cluster's start in it and its size."""
    sizes = np.array([m.size for m in members], dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp) if members else sizes
    return (np.concatenate(members) if members else np.zeros(0, dtype=np.intp)), starts, sizes


def _draw(layout: tuple[np.ndarray, np.ndarray, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """The rows of as many clusters as the stratum has, drawn with replacement."""
    rows, starts, sizes = layout
    k = sizes.size
    if k == 0:
        return rows
    picks = rng.integers(0, k, size=k)
    if rows.size == k:  # every cluster one row
        return rows[picks]
    lengths = sizes[picks]
    ends = np.cumsum(lengths)
    offsets = np.arange(ends[-1]) - np.repeat(ends - lengths, lengths)  # position inside each drawn cluster
    return rows[np.repeat(starts[picks], lengths) + offsets]


def _finite(v: float | None) -> float | None:
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None
