"""Two runs' attempts as paired per-item tables, through the probe's declared pairing
(:class:`biaslab.probing.pairing.Pairing`): one table per run with a row per *shared* item (same order in
both), the metric function that turns such a table into the probe's metrics, the resampling units of the
bootstrap (clusters within strata, or items) and the tests of the metrics that have a dedicated one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from biaslab.probing.pairing import Pairing, PairTest, Table


@dataclass
class PairedData:
    a: Table
    b: Table
    fn: Callable[[Mapping[str, np.ndarray]], Mapping[str, float]]
    unit: str  # what the bootstrap resamples: "items", "predicates", ...
    units: list[np.ndarray] | None = None
    strata: list[str] | None = None
    tests: dict[str, PairTest] = field(default_factory=dict)
    n_a: int = 0  # items in run A's attempts
    n_b: int = 0

    @property
    def n_shared(self) -> int:
        return len(next(iter(self.a.values()))) if self.a else 0


def _align(keys_a: list[Hashable], keys_b: list[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    pos_b = {k: i for i, k in enumerate(keys_b)}
    ia = [i for i, k in enumerate(keys_a) if k in pos_b]
    return np.array(ia, dtype=int), np.array([pos_b[keys_a[i]] for i in ia], dtype=int)


def _take(table: Mapping[str, np.ndarray], idx: np.ndarray) -> Table:
    return {k: np.asarray(v)[idx] for k, v in table.items()}


def pairing_of(probe: str) -> Pairing | None:
    """The declared pairing of a probe (None: the probe has no paired analysis, or is unknown)."""
    from biaslab.probes import PROBES, get_probe_class

    return get_probe_class(probe).pairing if probe in PROBES else None


def family(probe: str) -> str | None:
    """The pairing family of a probe: runs of probes of one family pair up item by item (None: no paired analysis)."""
    pairing = pairing_of(probe)
    return pairing.family if pairing is not None else None


def paired_data(
    pairing: Pairing, rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], seed: int = 0
) -> PairedData:
    """Runs A and B aligned on their shared items, with the probe's metric function, units and tests."""
    ta, tb = pairing.harmonize(pairing.table(rows_a), pairing.table(rows_b))
    ia, ib = _align(ta.keys, tb.keys)
    a, b = _take(ta.columns, ia), _take(tb.columns, ib)
    clusters = pairing.clusters(a)
    units, strata = clusters if clusters is not None else (None, None)
    unit = pairing.cluster_unit if clusters is not None and pairing.cluster_unit else pairing.unit
    return PairedData(
        a, b, pairing.metric_fn(a), unit, units, strata, pairing.tests(a, seed), len(ta.keys), len(tb.keys)
    )
