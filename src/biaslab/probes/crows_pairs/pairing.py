"""How CrowS-Pairs runs pair up: an item is a pair, matched across runs by its two sentences (the k-th
occurrence of a repeated pair with the k-th). Every pair was written on its own, so pairs are independent
units: ``compare`` tests each metric that is a mean over pairs (overall or over one bias type) on the
per-pair differences -- an exact binomial test where every difference is a whole flip,
a sign-flip or heteroskedasticity-robust t test of the differences otherwise, interval from the same
procedure (:func:`biaslab.stats.clustered.paired_cluster_inference` with independent units).
``stereo_score`` / ``antistereo_score`` leave ties out of their denominators, which then differ between two
runs: they get the paired bootstrap over pairs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues

DIRECTIONS = (("stereo_score", "stereo"), ("antistereo_score", "antistereo"))


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
        ev = np.array([r.get("evaluation") for r in rows], dtype=object)
        more = np.array([float(r["score_more"]) for r in rows], dtype=float)
        less = np.array([float(r["score_less"]) for r in rows], dtype=float)
        return ItemTable(
            keys,
            {
                "stereo": (ev == "stereotype").astype(float),
                "tie": (ev == "tie").astype(float),
                "absdiff": np.abs(more - less),
                "group": np.array([str(r.get("bias_type")) for r in rows], dtype=object),
                "direction": np.array([str(r.get("stereo_antistereo")) for r in rows], dtype=object),
            },
        )

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        n = len(table["stereo"])
        every = np.ones(n, bool)
        stereo = 100 * np.asarray(table["stereo"], float)
        out = {
            "pct_stereotype": UnitValues(stereo, every, (0.0, 100.0)),
            "likelihood_diff": UnitValues(np.asarray(table["absdiff"], float), every),
            "tie_rate": UnitValues(np.asarray(table["tie"], float), every, (0.0, 1.0)),
        }
        for g in sorted(set(np.asarray(table["group"]).tolist())):
            m = np.asarray(table["group"]) == g
            out[f"pct_stereotype:{g}"] = UnitValues(stereo, m, (0.0, 100.0))
            out[f"likelihood_diff:{g}"] = UnitValues(np.asarray(table["absdiff"], float), m)
        return out

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            out = {
                name: float(np.mean(uv.values[uv.mask])) if uv.mask.any() else float("nan")
                for name, uv in self.unit_values(t).items()
            }
            decided = np.asarray(t["tie"], float) == 0
            for name, label in DIRECTIONS:  # ties out of the denominator, as the paper's metric.py: a ratio
                m = (np.asarray(t["direction"]) == label) & decided  # whose rows differ between runs, so the
                if (np.asarray(t["direction"]) == label).any():  # paired bootstrap, not a mean of shared rows
                    out[name] = 100 * float(np.mean(np.asarray(t["stereo"], float)[m])) if m.any() else float("nan")
            return out

        return fn
