"""How paired-sentence runs pair up: an item is a pair, matched across runs by its two sentences (the k-th
occurrence of a repeated pair with the k-th), so runs of any paired-sentence probe built the same way pair
up. The bootstrap resamples predicates within their target group (the pairs built from one predicate move
together); ``bias_score`` (overall and per group) and ``tie_rate`` are tested with the exact McNemar test on
the per-pair decisions, ``mean_ll_diff`` with a cluster sign-flip test."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, PairTest, Table
from biaslab.stats.cluster import cluster_sign_flip_test
from biaslab.stats.paired import mcnemar_exact
from biaslab.stats.significance import TestResult


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
        ev = np.array([r.get("evaluation") for r in rows], dtype=object)
        group = np.array([str(r.get("target_ID")) for r in rows], dtype=object)
        columns = {"stereo": (ev == "stereotype").astype(float), "tie": (ev == "tie").astype(float),
                   "diff": np.array([float(r["score_more"]) - float(r["score_less"]) for r in rows], dtype=float),
                   "group": group,
                   "cluster": np.array([f"{g}\x1f{r.get('predicate_id')}" for g, r in zip(group, rows)],
                                       dtype=object)}
        return ItemTable(keys, columns)

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        groups = list(dict.fromkeys(np.asarray(aligned["group"]).tolist()))

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            n = len(t["stereo"])
            out = {"bias_score": 100 * float(np.mean(t["stereo"])) if n else np.nan,
                   "tie_rate": float(np.mean(t["tie"])) if n else np.nan,
                   "mean_ll_diff": float(np.mean(t["diff"])) if n else np.nan}
            for g in groups:
                m = t["group"] == g
                k = int(m.sum())
                out[f"bias_score:{g}"] = 100 * float(t["stereo"][m].mean()) if k else np.nan
                out[f"mean_ll_diff:{g}"] = float(t["diff"][m].mean()) if k else np.nan
            return out
        return fn

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        members: dict[str, list[int]] = defaultdict(list)
        for i, c in enumerate(np.asarray(aligned["cluster"]).tolist()):
            members[c].append(i)
        return [np.array(v, dtype=int) for v in members.values()], [c.split("\x1f")[0] for c in members]

    def tests(self, aligned: Mapping[str, np.ndarray], seed: int) -> dict[str, PairTest]:
        tests: dict[str, PairTest] = {"bias_score": _mcnemar("stereo"), "tie_rate": _mcnemar("tie"),
                                      "mean_ll_diff": _cluster_flip(None, seed)}
        for g in dict.fromkeys(np.asarray(aligned["group"]).tolist()):
            tests[f"bias_score:{g}"] = _mcnemar("stereo", g)
            tests[f"mean_ll_diff:{g}"] = _cluster_flip(g, seed)
        return tests


def _mcnemar(column: str, group: str | None = None) -> Callable[[Table, Table], TestResult]:
    def test(a: Table, b: Table) -> TestResult:
        m = np.ones(len(a[column]), bool) if group is None else a["group"] == group
        return mcnemar_exact(a[column][m] > 0, b[column][m] > 0)
    return test


def _cluster_flip(group: str | None, seed: int) -> Callable[[Table, Table], TestResult]:
    def test(a: Table, b: Table) -> TestResult:
        m = np.ones(len(a["diff"]), bool) if group is None else a["group"] == group
        sums: dict[str, float] = defaultdict(float)
        for c, da, db in zip(a["cluster"][m], a["diff"][m], b["diff"][m]):
            sums[c] += db - da
        return cluster_sign_flip_test(np.array(list(sums.values()), dtype=float), seed=seed)
    return test
