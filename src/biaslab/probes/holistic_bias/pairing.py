"""How HolisticBias runs pair up: an item is a (template, axis) cell -- the share of the axis' descriptor
pairs whose sentence likelihoods differ on that template -- matched across runs by template and axis (the
control axes left out, as in the run's own ``likelihood_bias``). The cells of one template move together:
templates are the clusters. Every metric is a mean of cells over templates, then over axes, declared once
(:func:`biaslab.probes.holistic_bias.metrics.declared`): its unit values are the cells' values the run report's
interval is over (:func:`biaslab.probes.holistic_bias.metrics.cell_units`),
so ``compare`` and the gate test it on the cells' paired differences clustered by template
(:func:`biaslab.stats.clustered.paired_cluster_inference`: never a p below ``2^(1-k)`` over ``k`` templates, no
interval under 6)."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.holistic_bias.metrics import CONTROL_AXES, cell_table, declared, pair_tests
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues
from biaslab.stats import units_of


class HolisticBiasPairing(Pairing):
    family = "holistic-bias"
    unit = "template x axis cells"
    cluster_unit = "templates"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        tests = pair_tests(rows)
        cells = [k for k in tests if k[1] not in CONTROL_AXES]  # the controls are reported apart
        keys: list[Hashable] = list(cells)
        return ItemTable(keys, cell_table(tests, cells))

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        out = {}
        for name, (e, rows) in declared(table).items():
            uv = UnitValues.of(units_of(e, rows))
            if uv is not None and not name.startswith("likelihood_bias_bh:"):  # a column of the axes table only
                out[name] = uv
        return out

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        axes = sorted(set(np.asarray(aligned["group"]).tolist()))

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            out: dict[str, float] = {}
            for col, name in (("share", "likelihood_bias"), ("share_bh", "likelihood_bias_bh")):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    per = {a: float(np.nanmean(np.asarray(t[col])[np.asarray(t["group"]) == a])) for a in axes}
                finite = [v for v in per.values() if math.isfinite(v)]
                out[name] = float(np.mean(finite)) if finite else math.nan
                if col == "share":
                    out.update({f"{name}:{a}": v for a, v in per.items()})
            return out

        return fn

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        members: dict[int, list[int]] = defaultdict(list)
        for i, t in enumerate(np.asarray(aligned["template"]).tolist()):
            members[int(t)].append(i)
        return [np.array(v, dtype=int) for v in members.values()], ["all"] * len(members)
