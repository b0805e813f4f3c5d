"""How Winogender runs pair up: an item is a sentence set (its id and repetition), matched across runs.
The sets about one occupation move together: the occupations are the clusters, within their majority
gender in the labour statistics. Every metric is a mean of one value per set
(:meth:`WinogenderPairing.unit_values`), so ``compare`` tests each on the per-set differences clustered by
occupation, interval and p from one procedure (never a p below ``2^(1-k)`` over ``k`` occupations; no interval
under 6): ``female_share``, ``neutral_probability`` and ``majority_gender_agreement`` (overall, and the share per
majority group) are the sets' own values, declared once with the run report's intervals
(:func:`~biaslab.probes.winogender.metrics.declared_means`); the gaps and the correlations are statistics of the
occupations' mean shares, as the run report computes them, declared over occupations
(:func:`~biaslab.probes.winogender.metrics.declared_over_occupations`: a gap as the paired difference of two means
over occupations, each side linearised as a mean over its own; a correlation as r plus its influence values) and
carried by the occupation's sets (:func:`over_occupations`). The metric function counts an occupation as often as a
resample draws it (the release gate's paired replicates resample occupations): two copies of its sets are two
occupations, not one."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.winogender.metrics import MAJORITY, declared_means, declared_over_occupations, set_table
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues, clusters_of
from biaslab.stats import units_of

TARGET_SUFFIX = {"0": ":occupation", "1": ":participant"}


def _pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> float:
    """Pearson's r of the occupations' ``x`` and ``y``, each counted ``w`` times (a resample's copies of it)."""
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    w = np.ones(x.size) if w is None else np.asarray(w, dtype=float)
    dx, dy = x - np.average(x, weights=w), y - np.average(y, weights=w)
    return float(np.sum(w * dx * dy) / math.sqrt(np.sum(w * dx * dx) * np.sum(w * dy * dy)))


class Occupations:
    """The occupations of an item table, sorted by name, with each one's ``group`` (majority gender), ``bls`` and
    ``bergsma`` statistics; :meth:`of` gives their mean shares over some of a table's rows (the same table, or a
    resample of it)."""

    def __init__(self, t: Mapping[str, np.ndarray]) -> None:
        occ = np.asarray(t["cluster"]).tolist()
        self.names = np.array(sorted(set(occ)), dtype=object)
        self.lookup = {o: i for i, o in enumerate(self.names.tolist())}
        first: dict[str, int] = {}
        for i, o in enumerate(occ):
            first.setdefault(o, i)
        at = [first[o] for o in self.names.tolist()]
        self.columns = {k: np.asarray(t[k])[at] for k in ("group", "bls", "bergsma")}

    def positions(self, t: Mapping[str, np.ndarray]) -> np.ndarray:
        """Each row's occupation (its position in :attr:`names`)."""
        occ = np.asarray(t["cluster"]).tolist()
        return np.fromiter((self.lookup[o] for o in occ), dtype=int, count=len(occ))

    def of(
        self, t: Mapping[str, np.ndarray], rows: np.ndarray, pos: np.ndarray | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(index, columns)`` of the occupations with a set among ``rows`` (``pos``: :meth:`positions`): each
        row's occupation (its position among them; -1 outside ``rows``), and per occupation its position in
        :attr:`names` (``at``), its number of those rows (``n``), its mean ``share`` over them, its ``group``,
        ``bls`` and ``bergsma``."""
        pos = self.positions(t) if pos is None else pos
        k = self.names.size
        n = np.bincount(pos[rows], minlength=k)
        share = np.bincount(pos[rows], np.asarray(t["share"], float)[rows], k)
        present = n > 0
        index = np.where(rows, (np.cumsum(present) - 1)[pos], -1)
        cols = {"at": np.flatnonzero(present), "n": n[present], "share": share[present] / n[present]}
        return index, {**cols, **{c: v[present] for c, v in self.columns.items()}}


def _declared_units(name: str, cols: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The occupations' values of a gap or a correlation (mean: the metric) from its declaration
    (:func:`~biaslab.probes.winogender.metrics.declared_over_occupations`); None where a gap's side has no
    occupation or the correlation is undefined (:func:`_pearson`: fewer than 3 occupations, or a constant side)."""
    e, rows = declared_over_occupations(name, cols)
    if e.kind == "correlation" and not np.isfinite(_pearson(np.asarray(rows.x, dtype=float), np.asarray(rows.y))):
        return None
    units = units_of(e, rows)
    return None if units is None else units.values[units.mask]


def over_occupations(units: np.ndarray | None, index: np.ndarray) -> UnitValues | None:
    """Values per occupation (``units``, mean the metric) as values over the sets (``index``: each set's occupation,
    -1 for a set left out): a set of occupation ``o`` carries ``m + (units[o] - m) n / (k n_o)`` (``m`` their mean,
    ``n`` sets of ``k`` occupations, ``n_o`` of ``o``), so that the sets' mean is the occupations' and each
    occupation's sets sum to ``n / k`` times its value -- what a test clustered by occupation sees, the run report's
    unit. Unbounded (linearised values); None without values."""
    if units is None:
        return None
    rows = index >= 0
    n, k = int(rows.sum()), units.size
    counts = np.bincount(index[rows], minlength=k)
    m = float(units.mean())
    values = np.full(index.size, np.nan)
    values[rows] = m + (units[index[rows]] - m) * n / (k * counts[index[rows]])
    return UnitValues(values, rows)


def _selections(t: Mapping[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """``[(suffix, rows)]`` of the gaps: every set, then the sets of each coreference target."""
    target = np.asarray(t["target"])
    return [("", np.ones(target.size, bool)), *((s, target == k) for k, s in TARGET_SUFFIX.items())]


class WinogenderPairing(Pairing):
    family = "winogender"
    unit = "sentence sets"
    cluster_unit = "occupations (within majority gender)"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        keys: list[Hashable] = [(str(r.get("item_id")), int(r.get("repetition") or 0)) for r in rows]
        return ItemTable(keys, set_table(rows))

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        occupations = Occupations(aligned)
        # the sets of each occupation in the shared table: a resample that draws an occupation twice holds twice
        # its sets, and the occupation counts twice in the statistics over occupations
        pos = occupations.positions(aligned)
        sets = {
            suffix: np.bincount(pos[rows], minlength=occupations.names.size) for suffix, rows in _selections(aligned)
        }

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            share, grp, pos = np.asarray(t["share"], float), np.asarray(t["group"]), occupations.positions(t)
            out = {
                "female_share": float(share.mean()),
                "neutral_probability": float(np.mean(t["neutral"])),
                "majority_gender_agreement": float(np.mean(t["agree"])),
            }
            for g in MAJORITY:
                m = grp == g
                out[f"female_share:{g}"] = float(share[m].mean()) if m.any() else math.nan
            for suffix, rows in _selections(t):
                cols = occupations.of(t, rows, pos)[1]
                w, side = cols["n"] / sets[suffix][cols["at"]], [cols["group"] == g for g in MAJORITY]
                out[f"majority_gap{suffix}"] = (
                    float(np.average(cols["share"][side[0]], weights=w[side[0]]))
                    - float(np.average(cols["share"][side[1]], weights=w[side[1]]))
                    if side[0].any() and side[1].any()
                    else math.nan
                )
            cols = occupations.of(t, np.ones(share.size, bool), pos)[1]
            w, bergsma = cols["n"] / sets[""][cols["at"]], np.asarray(cols["bergsma"], float)
            out["gender_occupation_correlation"] = _pearson(np.asarray(cols["bls"], float), cols["share"], w)
            out["gender_occupation_correlation_bergsma"] = (
                _pearson(bergsma, cols["share"], w) if np.isfinite(bergsma).all() else math.nan
            )
            return out

        return fn

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        group = dict(zip(np.asarray(aligned["cluster"]).tolist(), np.asarray(aligned["group"]).tolist()))
        return clusters_of(aligned["cluster"], lambda c: str(group[c]))

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        out = {name: UnitValues.of(units_of(e, rows)) for name, (e, rows) in declared_means(table).items()}
        occupations = Occupations(table)
        for suffix, rows in _selections(table):
            index, cols = occupations.of(table, rows)
            out[f"majority_gap{suffix}"] = over_occupations(_declared_units(f"majority_gap{suffix}", cols), index)
        index, cols = occupations.of(table, np.ones(len(table["share"]), bool))
        out["gender_occupation_correlation"] = over_occupations(
            _declared_units("gender_occupation_correlation", cols), index
        )
        if np.isfinite(np.asarray(cols["bergsma"], float)).all():
            out["gender_occupation_correlation_bergsma"] = over_occupations(
                _declared_units("gender_occupation_correlation_bergsma", cols), index
            )
        return {name: uv for name, uv in out.items() if uv is not None}
