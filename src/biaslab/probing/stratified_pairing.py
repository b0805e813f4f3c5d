"""Pairing for probes whose rows cluster or fall into fixed strata (:class:`StratifiedPairing`).

Rows are matched across runs by an id column, as in :class:`~biaslab.probing.pairing.ByItemPairing`; the
paired bootstrap of ``compare`` then resamples the rows' *clusters* (the letters of one name move together)
within their *strata* (the sentences of each GEST stereotype stay a stereotype's), following the design the
probe's own intervals respect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from biaslab.probing.pairing import ByItemPairing, MetricFn, Table, UnitValues


class StratifiedPairing(ByItemPairing):
    """Rows keyed by ``key``; resampled by the ``cluster`` column (default: each row) within the ``stratum``
    column (default: one stratum); ``units``: the probe's unit values, as for
    :class:`~biaslab.probing.pairing.ByItemPairing` (tested over the same clusters and strata); ``folds``: its folded
    metrics (:attr:`~biaslab.probing.pairing.Pairing.folds`)."""

    def __init__(
        self,
        family: str,
        unit: str,
        table_fn: Callable[[list[dict[str, Any]]], Table],
        metrics: MetricFn,
        *,
        stratum: str | None = None,
        cluster: str | None = None,
        cluster_unit: str | None = None,
        key: str = "item_id",
        units: Callable[[Mapping[str, np.ndarray]], Mapping[str, UnitValues | None]] | None = None,
        folds: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(family, unit, table_fn, metrics, key=key, units=units, folds=folds)
        self.stratum, self.cluster = stratum, cluster
        self.cluster_unit = cluster_unit

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]] | None:
        if self.stratum is None and self.cluster is None:
            return None
        n = len(np.asarray(aligned[self.key]))
        ids = np.asarray(aligned[self.cluster], dtype=object) if self.cluster else np.arange(n)
        strata = np.asarray(aligned[self.stratum], dtype=object) if self.stratum else np.full(n, "all", dtype=object)
        members: dict[Any, list[int]] = {}
        stratum_of: dict[Any, str] = {}
        for i, (c, s) in enumerate(zip(ids.tolist(), strata.tolist())):
            members.setdefault(c, []).append(i)
            stratum_of[c] = str(s)
        return [np.array(v, dtype=int) for v in members.values()], [stratum_of[c] for c in members]
