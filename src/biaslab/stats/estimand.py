"""A metric declared as an estimand over units; :func:`estimate` does the rest.

A probe says *what* a metric is -- its kind, the unit its evidence comes in, the null it is tested against (if
any) and the range it lies in -- and hands over the per-row numbers; :func:`estimate` turns the rows into unit
values (:mod:`biaslab.stats.unit_values`), runs the one clustered procedure over them
(:func:`~biaslab.stats.clustered.cluster_inference`, :func:`~biaslab.stats.clustered.paired_cluster_inference`)
and keeps the interval inside the range (:func:`~biaslab.stats.ranges.within_range`). It adds no statistics: the
result is the dict those functions return, and the unit values are the ones the gate tests (:func:`units_of`
gives them alone, for a pairing's ``unit_values``)::

    rate = Estimand("male_acceptance_rate", "mean", unit="name pairs", range=RATE)
    result, units = estimate(rate, Rows(values=acceptance, clusters=pair, strata=race))

The kinds, and the rows each needs (one entry per row; ``clusters`` and ``strata`` one label per row or None):

* ``mean`` -- ``values``; a row whose value is NaN is left out. The units are the rows' own values.
* ``ratio`` -- ``num`` and ``den``: ``sum(num) / sum(den)`` over the rows with ``den > 0``, linearised
  (:func:`~biaslab.stats.unit_values.masked_ratio_units`).
* ``difference`` -- ``values`` (or ``num`` and ``den``) of the first side and ``second``, a :class:`Rows` of the
  second on the same rows: the paired difference first minus second over the rows where either side is defined,
  each side linearised as a mean over its own defined rows (:func:`~biaslab.stats.unit_values.subset_mean_units`)
  or as a ratio (:func:`~biaslab.stats.unit_values.ratio_units`). The two sides' means are not repeated in the
  result (they are metrics of their own).
* ``slope`` -- ``x`` and ``y``: the least-squares slope of y on x with its influence values
  (:func:`~biaslab.stats.unit_values.ols_slope_units`), over the rows where both are finite.
* ``correlation`` -- ``x`` and ``y``: Pearson's r with its influence values
  (:func:`~biaslab.stats.unit_values.pearson_units`), over the rows where both are finite.
* ``combination`` -- ``values``, ``groups`` (one label a row) and ``coef`` (group -> coefficient, summing to 1: a
  mean of means, or to 0: a contrast): ``sum_g coef[g] mean_g(values)`` over the rows whose value is finite and
  whose group has a coefficient (every such group needs a row), each row an independent unit (no ``clusters``),
  by :func:`~biaslab.stats.group_means.combination_inference` with ``bounds`` as the scale of the rows' values
  (None: no exact step), ``strata`` and ``method`` ("cluster-robust" for a contrast, whose units are not symmetric
  under its null); the units are :func:`~biaslab.stats.group_means.combination_units`'. The coefficients depend
  on which groups the data hold, so they travel with the rows; ``coef`` None declares the metric undefined on
  these rows (``why_empty`` says why), while ``{}`` (no group) gives the procedure's empty result.

``range`` is the metric's range (the interval is clipped to it and the result records it); ``bounds`` the range
every unit value lies in where one does (for a difference, each side's values), which enables the exact steps of
the procedure; it defaults to ``range`` for ``mean`` and ``ratio`` and is dropped where a linearised value leaves
it (:func:`~biaslab.stats.unit_values.bounds_if_inside`). A probe whose ranges are declared in
``Probe.metric_ranges`` takes them from there (:func:`biaslab.probing.metric_ranges.declared_estimand`).
``n_random``: the random sign vectors of the procedure's sign-flip step where there are too many clusters to
enumerate (every kind but ``combination``, whose procedure has its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from biaslab.stats.clustered import cluster_inference, paired_cluster_inference
from biaslab.stats.group_means import combination_inference, combination_units
from biaslab.stats.honest import undefined
from biaslab.stats.ranges import Range, within_range
from biaslab.stats.signflip import N_RANDOM_FLIPS
from biaslab.stats.unit_values import (
    bounds_if_inside,
    masked_ratio_units,
    ols_slope_units,
    pearson_units,
    ratio_units,
    subset_mean_units,
)

__all__ = ["KINDS", "Estimand", "Rows", "Units", "estimate", "units_of"]

Kind = Literal["mean", "ratio", "difference", "slope", "correlation", "combination"]
KINDS: tuple[str, ...] = ("mean", "ratio", "difference", "slope", "correlation", "combination")
Labels = Sequence[Any] | np.ndarray | None


@dataclass(frozen=True)
class Estimand:
    """One metric: its name, kind (:data:`KINDS`), unit (plural, "name pairs"), null (None: no test), range
    (None: unbounded), the range of its unit values (``bounds``, module docstring), confidence, for a
    ``combination`` the procedure's ``method`` (:func:`~biaslab.stats.clustered.cluster_inference`'s) and, for the
    other kinds, the random sign vectors of its sign-flip step (``n_random``)."""

    metric: str
    kind: Kind
    unit: str = "units"
    null: float | None = None
    range: Range | None = None
    bounds: Range | None = None
    confidence: float = 0.95
    method: str = "auto"
    n_random: int = N_RANDOM_FLIPS

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"estimand {self.metric!r}: kind {self.kind!r} is none of {', '.join(KINDS)}")
        if self.kind == "combination" and self.n_random != N_RANDOM_FLIPS:
            raise ValueError(f"estimand {self.metric!r}: a combination's procedure takes no n_random")

    @property
    def unit_bounds(self) -> Range | None:
        """The range the unit values are checked against: ``bounds``, else the range of a mean or a ratio."""
        if self.bounds is not None:
            return self.bounds
        return self.range if self.kind in ("mean", "ratio") else None


@dataclass(frozen=True)
class Rows:
    """The per-row numbers of an estimand (module docstring): ``values``; ``num`` and ``den``; ``x`` and ``y``;
    ``second`` (a difference's second side); ``groups`` and ``coef`` (a combination's); the rows' ``clusters`` and
    ``strata``."""

    values: np.ndarray | None = None
    num: np.ndarray | None = None
    den: np.ndarray | None = None
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    second: Rows | None = None
    clusters: Labels = None
    strata: Labels = None
    groups: Labels = None
    coef: Mapping[Any, float] | None = None

    def __len__(self) -> int:
        for a in (self.values, self.num, self.x):
            if a is not None:
                return int(np.asarray(a).shape[0])
        raise ValueError("rows without values, num/den or x/y")

    def labels(self, rows: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The clusters and strata of ``rows`` (a boolean mask)."""
        pick = [None if a is None else np.asarray(a)[rows] for a in (self.clusters, self.strata)]
        return pick[0], pick[1]


@dataclass
class Units:
    """The unit values of an estimate over every row: ``values[mask]`` are the units (NaN elsewhere), ``bounds``
    their range where they keep one, ``pairs`` a correlation's ``(x, y)`` over the mask (the fields of
    :class:`biaslab.probing.pairing.UnitValues`)."""

    values: np.ndarray
    mask: np.ndarray
    bounds: Range | None = None
    pairs: tuple[np.ndarray, np.ndarray] | None = None
    agreement_width: float | None = None  # where it is not the width of ``bounds`` (a combination's)


def _side(rows: Rows, keep: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """One side of a difference on the rows of ``keep``: its linearised values, and where it is defined."""
    if rows.values is not None:
        v = np.asarray(rows.values, dtype=float)
        return subset_mean_units(v[keep]), np.isfinite(v)
    num, den = np.asarray(rows.num, dtype=float), np.asarray(rows.den, dtype=float)
    return ratio_units(num[keep], den[keep]), den > 0


def _units(e: Estimand, rows: Rows) -> tuple[np.ndarray | None, np.ndarray, tuple | None]:
    """``(unit values of the kept rows, kept rows, second side's values)``; values None where undefined."""
    if e.kind == "mean":
        v = np.asarray(rows.values, dtype=float)
        keep = np.isfinite(v)
        return (v[keep] if keep.any() else None), keep, None
    if e.kind == "ratio":
        got = masked_ratio_units(np.asarray(rows.num), np.asarray(rows.den))
        if got is None:
            return None, np.zeros(len(rows), dtype=bool), None
        values, keep = got
        return values[keep], keep, None
    if e.kind == "difference":
        if rows.second is None:
            raise ValueError(f"estimand {e.metric!r}: a difference needs rows.second, the second side")
        _, ok_a = _side(rows, np.ones(len(rows), dtype=bool))
        _, ok_b = _side(rows.second, np.ones(len(rows), dtype=bool))
        keep = ok_a | ok_b
        a, _ = _side(rows, keep)
        b, _ = _side(rows.second, keep)
        if a is None or b is None:
            return None, keep, None
        return a, keep, (b,)
    x, y = np.asarray(rows.x, dtype=float), np.asarray(rows.y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if e.kind == "slope":
        fit = ols_slope_units(x[keep], y[keep])
        return (None if fit is None else fit[1]), keep, None
    return pearson_units(x[keep], y[keep]), keep, None


def _bounds(e: Estimand, values: np.ndarray, second: tuple | None) -> Range | None:
    """The range of the unit values (of each side, for a difference) where they keep it, else None."""
    if e.unit_bounds is None:
        return None
    return bounds_if_inside(e.unit_bounds, values, *(second or ()))


def _over_rows(e: Estimand, rows: Rows, values: np.ndarray, keep: np.ndarray, second: tuple | None) -> Units:
    bounds = _bounds(e, values, second)  # values within rounding of a bound snapped onto it, as estimate infers on
    full = np.full(keep.size, np.nan)
    full[keep] = values if second is None else values - second[0]
    if second is not None and bounds is not None:
        bounds = (bounds[0] - bounds[1], bounds[1] - bounds[0])
    pairs = None
    if e.kind == "correlation":
        pairs = (np.asarray(rows.x, dtype=float)[keep], np.asarray(rows.y, dtype=float)[keep])
    return Units(full, keep, bounds, pairs)


def _combination_rows(e: Estimand, rows: Rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A combination's ``(values, groups, kept rows)``: those with a finite value and a group in ``coef``."""
    if rows.groups is None or rows.values is None or rows.clusters is not None:
        raise ValueError(f"estimand {e.metric!r}: a combination needs rows.values and rows.groups, no clusters")
    v, g = np.asarray(rows.values, dtype=float), np.asarray(rows.groups)
    keys = [str(k) for k in (rows.coef or {})]
    return v, g, np.isfinite(v) & np.isin(np.asarray(g, dtype=object).astype(str), keys)


def _combination_units(e: Estimand, rows: Rows) -> Units | None:
    if rows.coef is None:
        return None
    v, g, keep = _combination_rows(e, rows)
    if not keep.any():
        return None
    values, bounds = combination_units(v[keep], g[keep], rows.coef, null=e.null, scale=e.bounds)
    full = np.full(keep.size, np.nan)
    full[keep] = values
    return Units(full, keep, bounds, agreement_width=_combination_width(e, g[keep], rows.coef))


def _combination_width(e: Estimand, g: np.ndarray, coef: Mapping[Any, float]) -> float | None:
    """``sum_g c_g mean_g(x)``'s agreement width (:class:`biaslab.probing.pairing.UnitValues`): one unit of group
    ``g`` moves it by at most ``|c_g| w / n_g`` (``w`` the width of ``bounds``), times the ``N`` units; None
    without bounds."""
    if e.bounds is None:
        return None
    labels = np.asarray(g).astype(str)
    sizes = {k: int(np.sum(labels == str(k))) for k, c in coef.items() if c}
    if not sizes or min(sizes.values()) == 0:
        return None
    return (e.bounds[1] - e.bounds[0]) * labels.size * max(abs(coef[k]) / n for k, n in sizes.items())


def _combine(e: Estimand, rows: Rows, seed: int, why_empty: str | None) -> tuple[dict[str, Any], Units | None]:
    """:func:`estimate` of a combination (module docstring)."""
    if rows.coef is None:
        return undefined(why_empty or f"{e.metric}: no {e.unit} to estimate it from", null=e.null), None
    v, g, keep = _combination_rows(e, rows)
    out = combination_inference(
        v[keep],
        g[keep],
        rows.coef,
        null=e.null,
        scale=e.bounds,
        strata=rows.labels(keep)[1],
        method=e.method,
        label=e.unit,
        confidence=e.confidence,
        seed=seed,
    )
    return within_range(out, e.range), _combination_units(e, rows)


def units_of(estimand: Estimand, rows: Rows) -> Units | None:
    """The unit values :func:`estimate` infers from, over every row, without the inference (a pairing's
    ``unit_values`` for the gate); None where the metric is undefined."""
    if estimand.kind == "combination":
        return _combination_units(estimand, rows)
    values, keep, second = _units(estimand, rows)
    return None if values is None else _over_rows(estimand, rows, values, keep, second)


def estimate(
    estimand: Estimand, rows: Rows, *, seed: int = 0, why_empty: str | None = None
) -> tuple[dict[str, Any], Units | None]:
    """``(result, units)``: the metric with its interval and (where ``null`` is set) its p value, from the one
    clustered procedure over the estimand's units, and those units over every row (:func:`units_of`; None where
    the metric is undefined: the result then says why, ``why_empty`` or a generic reason). ``seed`` is the
    procedure's."""
    e = estimand
    if e.kind == "combination":
        return _combine(e, rows, seed, why_empty)
    values, keep, second = _units(e, rows)
    if values is None:
        reason = why_empty or f"{e.metric}: no {e.unit} to estimate it from"
        return undefined(reason, null=e.null), None
    clusters, strata = rows.labels(keep)
    common: dict[str, Any] = {"null": e.null, "confidence": e.confidence, "label": e.unit, "seed": seed}
    common["n_random"] = e.n_random
    bounds = _bounds(e, values, second)
    if second is None:
        out = cluster_inference(values, clusters, strata, bounds=bounds, **common)
    else:
        out = paired_cluster_inference(second[0], values, clusters, strata, bounds=bounds, **common)
        out.pop("a"), out.pop("b")
    return within_range(out, e.range), _over_rows(e, rows, values, keep, second)
