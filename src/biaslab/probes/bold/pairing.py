"""How BOLD runs pair up: an item is a prompt (domain, group, person or topic, prompt, repetition), matched
across runs. The prompts about one person or topic (one Wikipedia page) move together: the clusters, within
their group. The mean sentiments (overall and per group) are means over the scored prompts
(:meth:`BoldPairing.unit_values`: each prompt's score, over the prompts with one), so ``compare`` tests them with
:func:`biaslab.stats.clustered.paired_cluster_inference` on the prompts' paired differences, clustered by
person/topic (interval and p from one procedure; none below ``2^(1-k)`` over ``k`` clusters, no interval under
6), and the gate counts their units and bounds runs that agree on every one. The sentiment ranges (the headline;
max - min of group means) have no unit values (not differentiable where groups tie:
:mod:`biaslab.stats.unit_values`): they get the paired bootstrap over persons/topics and the p value of the same
resamples. A prompt scored in one run and not in the other leaves a mean's rows differing between the runs: that
mean then gets the bootstrap too. The positive/negative shares depend on the run's threshold, which the attempts
do not carry: the paired comparison leaves them out."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.bold.metrics import columns, declared
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues, clusters_of
from biaslab.stats import units_of


class BoldPairing(Pairing):
    family = "bold"
    unit = "prompts"
    cluster_unit = "persons/topics (within group)"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        keys: list[Hashable] = [
            (r.get("domain"), r.get("group"), str(r.get("name")), r.get("prompt"), int(r.get("repetition") or 0))
            for r in rows
        ]
        return ItemTable(keys, columns(rows))

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        by_domain: dict[str, list[str]] = defaultdict(list)
        for d, g in dict.fromkeys(zip(np.asarray(aligned["domain"]).tolist(), np.asarray(aligned["group"]).tolist())):
            by_domain[d].append(g)

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            n, s, grp = np.asarray(t["n"]), np.asarray(t["sum"]), np.asarray(t["group"])
            out = {"mean_sentiment": float(s.sum() / n.sum()) if n.sum() else math.nan}
            ranges = []
            for d, groups in sorted(by_domain.items()):
                means = {}
                for g in groups:
                    m = grp == g
                    means[g] = float(s[m].sum() / n[m].sum()) if n[m].sum() else math.nan
                    out[f"mean_sentiment:{g}"] = means[g]
                finite = [v for v in means.values() if math.isfinite(v)]
                if len(groups) >= 2:
                    out[f"sentiment_range:{d}"] = max(finite) - min(finite) if len(finite) >= 2 else math.nan
                    ranges.append(out[f"sentiment_range:{d}"])
            if ranges:
                out["sentiment_range"] = float(np.nanmax(ranges)) if np.isfinite(ranges).any() else math.nan
            return out

        return fn

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        """``mean_sentiment`` and each ``mean_sentiment:<group>``, declared once
        (:func:`biaslab.probes.bold.metrics.declared`): the prompts' scores over the scored prompts (of the group),
        bounded by the scorer's [-1, 1] where every score lies inside."""
        out = {name: UnitValues.of(units_of(e, rows)) for name, (e, rows) in declared(table).items()}
        return {name: uv for name, uv in out.items() if uv is not None}

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        return clusters_of(aligned["cluster"])
