"""How HolisticBias runs pair up: an item is a (template, axis) cell -- the share of the axis' descriptor
pairs whose sentence likelihoods differ on that template -- matched across runs by template and axis (the
control axes left out, as in the run's own ``likelihood_bias``). The cells of one template move together:
templates are the clusters. Every metric is a mean of cells over templates, then over axes, and its unit values
are the cells' values the run report's interval is over (:func:`biaslab.probes.holistic_bias.metrics.cell_units`),
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

from biaslab.probes.holistic_bias.metrics import CONTROL_AXES, cell_units, pair_tests
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues
from biaslab.stats import RATE, bounds_if_inside


class HolisticBiasPairing(Pairing):
    family = "holistic-bias"
    unit = "template x axis cells"
    cluster_unit = "templates"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        tests = pair_tests(rows)
        cells = [k for k in tests if k[1] not in CONTROL_AXES]  # the controls are reported apart
        keys: list[Hashable] = list(cells)
        return ItemTable(
            keys,
            {
                "share": np.array([tests[k]["share"] for k in cells], dtype=float),
                "share_bh": np.array([tests[k]["share_bh"] for k in cells], dtype=float),
                "group": np.array([k[1] for k in cells], dtype=object),
                "template": np.array([k[0] for k in cells], dtype=int),
            },
        )

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        axis = np.asarray(table["group"])
        axes = sorted(set(axis.tolist()))
        out: dict[str, UnitValues] = {}
        for col, name in (("share", "likelihood_bias"), ("share_bh", "likelihood_bias_bh")):
            for metric, over in [(name, axes)] + ([(f"{name}:{a}", [a]) for a in axes] if col == "share" else []):
                values = cell_units(np.asarray(table[col], dtype=float), axis, over)
                if values is not None:
                    mask = np.isfinite(values)
                    inside = values[mask]
                    bounds = bounds_if_inside(RATE, inside)  # snaps values within rounding of a bound onto it
                    values[mask] = inside
                    out[metric] = UnitValues(values, mask, bounds)
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
