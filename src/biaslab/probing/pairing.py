"""How a probe's attempts pair up across runs, declared by the probe (``Probe.pairing``).

``compare``, ``plan --pilot`` and the release gate turn each run's attempts into an :class:`ItemTable`
(one row per item, keyed so that the same item in another run has the same key) through the probe's
:class:`Pairing`, align two runs on their shared keys, and resample, test and recompute the probe's
metrics from the aligned tables (:mod:`biaslab.compare.paired_data`). Runs of two probes pair up when
their pairings name the same ``family`` (every paired-sentence probe is one family: a pair is the same
pair whichever benchmark built it).
"""

from __future__ import annotations

import abc
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from biaslab.stats.significance import TestResult

Table = dict[str, np.ndarray]
MetricFn = Callable[[Mapping[str, np.ndarray]], Mapping[str, float]]
PairTest = Callable[[Table, Table], "TestResult"]


def clusters_of(
    labels: np.ndarray | list[Any], stratum: Callable[[Any], str] = lambda c: str(c).split("\x1f")[0]
) -> tuple[list[np.ndarray], list[str]]:
    """:meth:`Pairing.clusters` from one cluster label per row: the rows of each label, in order of first appearance,
    and each cluster's stratum read from its label (default: the part before the first ``\\x1f``)."""
    members: dict[Any, list[int]] = defaultdict(list)
    for i, c in enumerate(np.asarray(labels).tolist()):
        members[c].append(i)
    return [np.array(v, dtype=int) for v in members.values()], [stratum(c) for c in members]


@dataclass
class UnitValues:
    """A metric that is a mean of one value per row: ``metric == mean(values[mask])`` on any item table.

    ``compare`` tests such a metric on the rows' paired differences with one procedure for interval and p
    (:func:`biaslab.stats.clustered.paired_cluster_inference`, clustered by the pairing's clusters) where both
    runs' masks are the same rows; ``bounds``: the range of every value (``(0, 100)`` for a percentage
    indicator), None when unbounded. A row outside the mask may hold NaN (a pooled rate's rows without a
    denominator, whose mask then differs between runs).
    """

    values: np.ndarray
    mask: np.ndarray
    bounds: tuple[float, float] | None = None
    # a Pearson correlation's own data, ``(x, y)`` over the rows of the mask (its values are then r's influence
    # values): two runs with the same ``x`` compare their correlations by Zou's interval (biaslab.gate.units)
    pairs: tuple[np.ndarray, np.ndarray] | None = None
    # where the metric is no mean of values in ``bounds`` but one unit's answers still bound its change: that change
    # at most, times the number of units (a linear statistic's, :func:`linear_width`); the gate's bound on runs
    # that agree on every unit (biaslab.gate.units). None: the width of ``bounds``
    agreement_width: float | None = None

    @classmethod
    def ratio(
        cls, num: np.ndarray, den: np.ndarray, rows: np.ndarray | None = None, bounds: tuple[float, float] = (0.0, 1.0)
    ) -> UnitValues | None:
        """A pooled ratio ``sum(num) / sum(den)`` over the rows (of ``rows``) with ``den > 0``: the linearised
        values of :func:`biaslab.stats.unit_values.masked_ratio_units`, the values a run report's interval of
        such a rate is over; ``bounds`` where every value lies inside them. None where no row has a denominator."""
        from biaslab.stats.unit_values import bounds_if_inside, masked_ratio_units

        got = masked_ratio_units(num, den, rows)
        if got is None:
            return None
        values, mask = got
        return cls(values, mask, bounds_if_inside(bounds, values))

    @classmethod
    def ratio_gap(
        cls,
        num_a: np.ndarray,
        den_a: np.ndarray,
        num_b: np.ndarray,
        den_b: np.ndarray,
        rows: np.ndarray | None = None,
        bounds: tuple[float, float] = (0.0, 1.0),
    ) -> UnitValues | None:
        """The gap ``sum(num_a) / sum(den_a) - sum(num_b) / sum(den_b)`` of two pooled ratios on the same rows (of
        ``rows``), over the rows where either has a denominator: each ratio's linearised values over them, a minus b
        (:func:`biaslab.stats.ratio_gaps.masked_gap_units`; the paired differences a run report's gap of two ratios
        is inferred from); bounded where both sides' values stay inside ``bounds``. None where a ratio has no
        denominator there."""
        from biaslab.stats.ratio_gaps import masked_gap_units

        got = masked_gap_units(num_a, den_a, num_b, den_b, rows, bounds)
        return None if got is None else cls(*got)

    @classmethod
    def contrast(
        cls,
        values: np.ndarray,
        rows: np.ndarray,
        groups: np.ndarray,
        first: str,
        second: str,
        scale: tuple[float, float] | None = (0.0, 1.0),
    ) -> UnitValues | None:
        """The difference ``mean_first(values) - mean_second(values)`` of two independent groups' means over the
        rows of ``rows`` (``groups``: one label a row, ``first`` or ``second`` there): the weighted values of
        :func:`biaslab.stats.group_means.combination_units` (coefficients 1 and -1), whose paired differences,
        stratified by group, have Welch's variance of the two means. None where a group has no row."""
        from biaslab.stats.group_means import combination_units

        mask = np.asarray(rows, dtype=bool)
        g = np.asarray(groups, dtype=object).astype(str)
        if not ((mask & (g == first)).any() and (mask & (g == second)).any()):
            return None
        x = np.asarray(values, dtype=float)[mask]
        units, bounds = combination_units(x, g[mask], {first: 1.0, second: -1.0}, null=0.0, scale=scale)
        out = cls.on_rows(mask, units, bounds)
        if scale is not None:  # one unit of the smaller group moves its mean, and the contrast, the most
            smaller = min(int(np.sum(g[mask] == first)), int(np.sum(g[mask] == second)))
            out.agreement_width = (scale[1] - scale[0]) * x.size / smaller
        return out

    @classmethod
    def of(cls, units: Any) -> UnitValues | None:
        """The unit values of a declared metric (:func:`biaslab.stats.estimand.units_of`'s ``Units``, or None)."""
        if units is None:
            return None
        return cls(units.values, units.mask, units.bounds, units.pairs, units.agreement_width)

    @classmethod
    def mean(cls, values: np.ndarray, mask: np.ndarray, bounds: tuple[float, float] | None) -> UnitValues | None:
        """A mean of ``values`` over the rows of ``mask`` (NaN elsewhere); None where the mask holds no row."""
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            return None
        return cls(np.where(mask, np.asarray(values, dtype=float), np.nan), mask, bounds)

    @classmethod
    def on_rows(cls, rows: np.ndarray, values: np.ndarray, bounds: tuple[float, float] | None) -> UnitValues:
        """``values``, one for each row of the mask ``rows`` (NaN elsewhere), as unit values over every row."""
        mask = np.asarray(rows, dtype=bool)
        full = np.full(mask.size, np.nan)
        full[mask] = values
        return cls(full, mask.copy(), bounds)


def linear_width(coef: np.ndarray, y_width: float) -> float | None:
    """The agreement width (:attr:`UnitValues.agreement_width`) of a linear statistic ``sum_i coef_i y_i`` over
    ``N`` units, each ``y_i`` in a range of width ``y_width``: ``N max_i |coef_i| y_width`` (one unit moves it by at
    most ``|coef_i| y_width``); a least-squares slope on a fixed ``x`` has ``coef_i = (x_i - xbar) / Sxx``. None
    without units or where a coefficient is not finite."""
    c = np.abs(np.asarray(coef, dtype=float))
    if c.size == 0 or not np.all(np.isfinite(c)):
        return None
    return float(c.size * c.max() * y_width)


@dataclass
class ItemTable:
    """One run's attempts as one row per item: ``keys[i]`` identifies row i across runs."""

    keys: list[Hashable]
    columns: Table


class Pairing(abc.ABC):
    """How one probe's attempts become paired item tables, and the probe's metrics on such a table."""

    family: str  # runs whose pairings share a family are compared item by item
    unit: str  # what a row is, plural: "pairs", "occupations"
    cluster_unit: str | None = None  # what the bootstrap resamples when rows cluster, e.g. "predicates"
    # folded metrics, ``|x - c|`` of a metric ``x`` with unit values (metric -> ``x``): the gate bounds runs that
    # agree on every unit by ``x``'s units (biaslab.gate.units); no mean, they are otherwise bootstrapped
    folds: Mapping[str, str] = MappingProxyType({})

    @abc.abstractmethod
    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        """The run's attempts (rows of attempts.jsonl) as an item table."""

    @abc.abstractmethod
    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        """The probe's metrics from an item table (``aligned``: run A's table on the shared items, for
        anything the function needs fixed across resamples, such as the list of groups)."""

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]] | None:
        """``(row indices of each cluster, each cluster's stratum)`` when rows are not independent; None
        when every row is its own unit."""
        return None

    def tests(self, aligned: Mapping[str, np.ndarray], seed: int) -> dict[str, PairTest]:
        """Dedicated paired tests of some metrics (metric -> test of run A's against run B's table); the
        others get the paired sign-flip permutation test."""
        return {}

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        """The metrics that are means of one value per row (metric -> its per-row values on ``table``); these
        get a cluster-aware paired test whose interval and p value come from one procedure. The others get the
        paired bootstrap, with its p value from the same resamples."""
        return {}

    def harmonize(self, a: ItemTable, b: ItemTable) -> tuple[ItemTable, ItemTable]:
        """Make two runs' tables swappable row for row (e.g. the same number of repetition columns)."""
        return a, b


class ByItemPairing(Pairing):
    """Rows matched across runs by an id column of the table (``key``); every row is its own unit. ``units``: the
    probe's :meth:`Pairing.unit_values` (metric -> its values, None where undefined on the table); ``stratum``: a
    column of the table whose values are the strata of the design (a sentence's stereotype, a ranking's role and
    race), which the run report's intervals are stratified by and compare's are then too; ``folds``: the probe's
    folded metrics (:attr:`Pairing.folds`)."""

    def __init__(
        self,
        family: str,
        unit: str,
        table_fn: Callable[[list[dict[str, Any]]], Table],
        metrics: MetricFn,
        key: str = "item_id",
        units: Callable[[Mapping[str, np.ndarray]], Mapping[str, UnitValues | None]] | None = None,
        stratum: str | None = None,
        folds: Mapping[str, str] | None = None,
    ) -> None:
        self.family, self.unit, self.key, self.stratum = family, unit, key, stratum
        self.folds = MappingProxyType(dict(folds or {}))
        self._table_fn, self._metrics, self._units = table_fn, metrics, units

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]] | None:
        if self.stratum is None:
            return None
        labels = [str(s) for s in np.asarray(aligned[self.stratum]).tolist()]
        return [np.array([i]) for i in range(len(labels))], labels

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        columns = self._table_fn(rows)
        return ItemTable(list(np.asarray(columns[self.key]).tolist()), columns)

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        return self._metrics

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        if self._units is None:
            return {}
        return {name: uv for name, uv in self._units(table).items() if uv is not None}
