"""How BBQ runs pair up: an item is a question (category, example id, repetition), matched across runs.
The questions built from one template (category, ``question_index``) move together: they are the
clusters, within their category (the ``subcategory`` the run's metrics use: ``<Category> (names)``
apart).

Every metric, overall and per category, is a mean of one value per question (:meth:`BbqPairing.unit_values`): the
values of :func:`biaslab.probes.bbq.units.score_units`, the same the run report infers its intervals from
(accuracies, unparsed rate and ``bias_score_disambig`` from their one declaration as ``ratio`` estimands,
:func:`biaslab.probes.bbq.units.declared_metrics`; ``bias_score_ambig`` by the delta method's product rule). So
``compare`` and the gate test each metric with the paired cluster inference over templates
(:func:`biaslab.stats.clustered.paired_cluster_inference`: interval and p from one procedure, never below
``2^(1-k)`` over ``k`` templates, no interval under 6).

Where a run's questions with a denominator differ from the other run's (an unparsed reply in generate mode), the
masks differ and ``compare`` falls back to the paired bootstrap over templates for that metric."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.bbq.metrics import COLS, _row_values, _scores
from biaslab.probes.bbq.units import score_units
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues, clusters_of


class BbqPairing(Pairing):
    family = "bbq"
    unit = "questions"
    cluster_unit = "templates (within category)"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        keys: list[Hashable] = [
            (str(r.get("category")), str(r.get("example_id")), int(r.get("repetition") or 0)) for r in rows
        ]
        values = [_row_values(r) for r in rows]
        columns = {c: np.array([v[c] for v in values], dtype=float) for c in COLS}
        group = [str(r.get("subcategory") or r.get("category")) for r in rows]  # as the run's own metrics
        columns["group"] = np.array(group, dtype=object)
        columns["cluster"] = np.array(
            [f"{g}\x1f{r.get('question_index', '')}" for g, r in zip(group, rows)], dtype=object
        )
        return ItemTable(keys, columns)

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        categories = sorted(set(np.asarray(aligned["group"]).tolist()))

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            out = {k: float(v) for k, v in _scores({c: np.asarray(t[c]).sum() for c in COLS}).items()}
            for g in categories:
                m = np.asarray(t["group"]) == g
                out.update(
                    {f"{k}:{g}": float(v) for k, v in _scores({c: np.asarray(t[c])[m].sum() for c in COLS}).items()}
                )
            return out

        return fn

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        group = np.asarray(table["group"])
        out = score_units(table, np.ones(len(group), dtype=bool))
        for g in sorted(set(group.tolist())):
            out.update({f"{k}:{g}": uv for k, uv in score_units(table, group == g).items()})
        return out

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        return clusters_of(aligned["cluster"])
