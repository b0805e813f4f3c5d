"""How paired-sentence runs pair up: an item is a pair, matched across runs by its two sentences (the k-th
occurrence of a repeated pair with the k-th), so runs of any paired-sentence probe built the same way pair
up. The pairs built from one predicate move together: ``bias_score``, ``tie_rate`` and ``mean_ll_diff``
(overall and per group) are means over pairs, declared once
(:func:`biaslab.probes.paired_sentences.metrics.declared`): the unit values are the ones the run report's
intervals are over (:meth:`PairedSentencePairing.unit_values`), so ``compare`` tests them on the per-pair
differences clustered by predicate within target group (never a p below ``2^(1-k)`` over ``k`` predicates; no
interval over fewer than 6)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.paired_sentences.metrics import columns, declared
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues, clusters_of
from biaslab.stats import units_of


class PairedSentencePairing(Pairing):
    family = "paired-sentences"
    unit = "pairs"
    cluster_unit = "predicates (within target group)"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        seen: dict[tuple[str, str], int] = defaultdict(int)
        keys: list[Hashable] = []
        for r in rows:
            k = (str(r.get("sent_more") or r.get("prompt")), str(r.get("sent_less") or r.get("text")))
            keys.append((*k, seen[k]))  # the k-th occurrence of a repeated pair
            seen[k] += 1
        return ItemTable(keys, columns(rows))

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        groups = list(dict.fromkeys(np.asarray(aligned["group"]).tolist()))

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            n = len(t["stereo"])
            out = {
                "bias_score": 100 * float(np.mean(t["stereo"])) if n else np.nan,
                "tie_rate": float(np.mean(t["tie"])) if n else np.nan,
                "mean_ll_diff": float(np.mean(t["diff"])) if n else np.nan,
            }
            for g in groups:
                m = t["group"] == g
                k = int(m.sum())
                out[f"bias_score:{g}"] = 100 * float(t["stereo"][m].mean()) if k else np.nan
                out[f"mean_ll_diff:{g}"] = float(t["diff"][m].mean()) if k else np.nan
            return out

        return fn

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        return clusters_of(aligned["cluster"])

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        out = {name: UnitValues.of(units_of(e, rows)) for name, (e, rows) in declared(table).items()}
        return {name: uv for name, uv in out.items() if uv is not None}
