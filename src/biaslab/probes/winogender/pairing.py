"""How Winogender runs pair up: an item is a sentence set (its id and repetition), matched across runs.
The sets about one occupation move together: the occupations are the clusters, within their majority
gender in the labour statistics. ``female_share``, ``neutral_probability`` and
``majority_gender_agreement`` (overall, and the share per majority group) are means of one value per
set (:meth:`WinogenderPairing.unit_values`), so ``compare`` tests them on the per-set differences
clustered by occupation, interval and p from one procedure (never a p below ``2^(1-k)`` over ``k``
occupations; no interval under 6). The gaps and the correlations are recomputed per occupation and get
the paired bootstrap over occupations."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues

MAJORITY = ("female-majority", "male-majority")
TARGET_SUFFIX = {"0": ":occupation", "1": ":participant"}


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


class WinogenderPairing(Pairing):
    family = "winogender"
    unit = "sentence sets"
    cluster_unit = "occupations (within majority gender)"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        keys: list[Hashable] = [(str(r.get("item_id")), int(r.get("repetition") or 0)) for r in rows]
        bls = np.array([float(r["bls_pct_female"]) for r in rows], dtype=float)
        bergsma = [r.get("bergsma_pct_female") for r in rows]
        return ItemTable(
            keys,
            {
                "share": np.array([float(r["female_share"]) for r in rows], dtype=float),
                "neutral": np.array([float(r["p_neutral"]) for r in rows], dtype=float),
                "agree": np.array([float(r["prefers_majority"]) for r in rows], dtype=float),
                "target": np.array([str(r.get("answer")) for r in rows], dtype=object),
                "bls": bls,
                "bergsma": np.array([math.nan if b is None else float(b) for b in bergsma], dtype=float),
                "group": np.where(bls > 50, MAJORITY[0], MAJORITY[1]).astype(object),
                "cluster": np.array([str(r["occupation"]) for r in rows], dtype=object),
            },
        )

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            share, occ, grp = np.asarray(t["share"], float), np.asarray(t["cluster"]), np.asarray(t["group"])
            out = {
                "female_share": float(share.mean()),
                "neutral_probability": float(np.mean(t["neutral"])),
                "majority_gender_agreement": float(np.mean(t["agree"])),
            }
            for g in MAJORITY:
                m = grp == g
                out[f"female_share:{g}"] = float(share[m].mean()) if m.any() else math.nan
            for suffix, keep in (("", None), *((s, k) for k, s in TARGET_SUFFIX.items())):
                sel = np.ones(share.size, bool) if keep is None else np.asarray(t["target"]) == keep
                per_occ: dict[str, list[float]] = defaultdict(list)
                for o, v in zip(occ[sel].tolist(), share[sel].tolist()):
                    per_occ[o].append(v)
                majority = dict(zip(occ.tolist(), grp.tolist()))
                fem = [float(np.mean(v)) for o, v in per_occ.items() if majority[o] == MAJORITY[0]]
                mal = [float(np.mean(v)) for o, v in per_occ.items() if majority[o] == MAJORITY[1]]
                out[f"majority_gap{suffix}"] = float(np.mean(fem) - np.mean(mal)) if fem and mal else math.nan
            names = sorted(set(occ.tolist()))
            means = np.array([share[occ == o].mean() for o in names])
            first = {o: i for i, o in reversed(list(enumerate(occ.tolist())))}
            out["gender_occupation_correlation"] = _pearson(
                np.asarray(t["bls"], float)[[first[o] for o in names]], means
            )
            bergsma = np.asarray(t["bergsma"], float)[[first[o] for o in names]]
            out["gender_occupation_correlation_bergsma"] = (
                _pearson(bergsma, means) if np.isfinite(bergsma).all() else math.nan
            )
            return out

        return fn

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        members: dict[str, list[int]] = defaultdict(list)
        for i, c in enumerate(np.asarray(aligned["cluster"]).tolist()):
            members[c].append(i)
        group = np.asarray(aligned["group"])
        return [np.array(v, dtype=int) for v in members.values()], [str(group[v[0]]) for v in members.values()]

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        every = np.ones(len(table["share"]), bool)
        share = np.asarray(table["share"], float)
        out = {
            "female_share": UnitValues(share, every, (0.0, 1.0)),
            "neutral_probability": UnitValues(np.asarray(table["neutral"], float), every, (0.0, 1.0)),
            "majority_gender_agreement": UnitValues(np.asarray(table["agree"], float), every, (0.0, 1.0)),
        }
        for g in MAJORITY:
            m = np.asarray(table["group"]) == g
            if m.any():
                out[f"female_share:{g}"] = UnitValues(share, m, (0.0, 1.0))
        return out
