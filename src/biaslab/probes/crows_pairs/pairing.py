"""How CrowS-Pairs runs pair up: an item is a pair, matched across runs by its two sentences (the k-th
occurrence of a repeated pair with the k-th). Every pair was written on its own, so pairs are independent
units. Every metric is declared over pairs once (:func:`biaslab.probes.crows_pairs.metrics.declared`): the
pairing's unit values are the values the run report's intervals are over, so ``compare`` and the gate test each
metric on the per-pair differences with one procedure for interval and p
(:func:`biaslab.stats.clustered.paired_cluster_inference` with independent units: an exact binomial test where
every difference is a whole flip, a sign-flip or heteroskedasticity-robust t test of the differences otherwise).
``stereo_score`` / ``antistereo_score`` leave ties out of their denominators: a ratio, whose values are 0 or 100
on the decided pairs of its direction. Where both runs decide the same pairs it is tested as the others; where
their ties differ the rows differ between the runs, and ``compare`` gives it the paired bootstrap over pairs
(the gate counts the pairs either run decides as its units)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.crows_pairs.metrics import columns, declared
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues
from biaslab.stats import units_of


class CrowsPairing(Pairing):
    family = "crows-pairs"
    unit = "pairs"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        seen: dict[tuple[str, str], int] = defaultdict(int)
        keys: list[Hashable] = []
        for r in rows:
            k = (str(r.get("sent_more") or r.get("prompt")), str(r.get("sent_less") or r.get("text")))
            keys.append((*k, seen[k]))
            seen[k] += 1
        return ItemTable(keys, columns(rows))

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        out = {name: UnitValues.of(units_of(e, rows)) for name, (e, rows) in declared(table).items()}
        return {name: uv for name, uv in out.items() if uv is not None}

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        return _metric_values


def _metric_values(t: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Every declared metric's value on an item table (NaN where undefined): the mean of its defined rows, or its
    ratio of sums (the mean of its unit values, :meth:`CrowsPairing.unit_values`)."""
    out = {}
    for name, (_, rows) in declared(t).items():
        if rows.values is not None:
            v = np.asarray(rows.values, dtype=float)
            v = v[np.isfinite(v)]
            out[name] = float(np.mean(v)) if v.size else float("nan")
        else:
            num, den = np.asarray(rows.num, dtype=float), np.asarray(rows.den, dtype=float)
            out[name] = float(num.sum() / den.sum()) if den.sum() > 0 else float("nan")
    return out
