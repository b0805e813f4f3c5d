"""Two runs' attempts as paired per-item tables, probe by probe.

For each probe that supports a paired comparison this builds, from the two attempts files, one
table per run with a row per *shared* item (same order in both), the metric function that turns
such a table into the probe's metrics, the resampling units of the bootstrap, and the tests of
metrics that have a dedicated one:

* paired-sentence probes (winosemitism, gpt-winosemitism, gpt-winoqueer, winoqueer-human,
  pairs): an item is a pair, matched by its two sentences; units are predicates resampled within
  their target group; ``bias_score`` (overall and per group) and ``tie_rate`` are tested with the
  exact McNemar test on the per-pair decisions, ``mean_ll_diff`` with a cluster sign-flip test.
* jobs-lum (occupations), fsb-judge (rated texts), olympics (events): an item is matched by its
  id; units are items; every metric is tested with the paired sign-flip (swap) permutation test.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from biaslab.stats.cluster import cluster_sign_flip_test
from biaslab.stats.paired import mcnemar_exact
from biaslab.stats.significance import TestResult

Table = dict[str, np.ndarray]
PairTest = Callable[[Table, Table], TestResult]


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


def _align(keys_a: list[Any], keys_b: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    pos_b = {k: i for i, k in enumerate(keys_b)}
    ia = [i for i, k in enumerate(keys_a) if k in pos_b]
    return np.array(ia, dtype=int), np.array([pos_b[keys_a[i]] for i in ia], dtype=int)


def _take(table: Mapping[str, np.ndarray], idx: np.ndarray) -> Table:
    return {k: np.asarray(v)[idx] for k, v in table.items()}


# -- paired-sentence probes -------------------------------------------------------------------
def _pair_table(rows: list[dict[str, Any]]) -> tuple[list[Any], Table]:
    seen: dict[tuple[str, str], int] = defaultdict(int)
    keys = []
    for r in rows:
        k = (str(r.get("sent_more") or r.get("prompt")), str(r.get("sent_less") or r.get("text")))
        keys.append((*k, seen[k]))  # the k-th occurrence of a repeated pair
        seen[k] += 1
    ev = np.array([r.get("evaluation") for r in rows], dtype=object)
    group = np.array([str(r.get("target_ID")) for r in rows], dtype=object)
    table = {"stereo": (ev == "stereotype").astype(float), "tie": (ev == "tie").astype(float),
             "diff": np.array([float(r["score_more"]) - float(r["score_less"]) for r in rows], dtype=float),
             "group": group,
             "cluster": np.array([f"{g}\x1f{r.get('predicate_id')}" for g, r in zip(group, rows)], dtype=object)}
    return keys, table


def _wino_fn(groups: list[str]) -> Callable[[Mapping[str, np.ndarray]], dict[str, float]]:
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


def _mcnemar(column: str, group: str | None = None) -> PairTest:
    def test(a: Table, b: Table) -> TestResult:
        m = np.ones(len(a[column]), bool) if group is None else a["group"] == group
        return mcnemar_exact(a[column][m] > 0, b[column][m] > 0)
    return test


def _cluster_flip(group: str | None, seed: int) -> PairTest:
    def test(a: Table, b: Table) -> TestResult:
        m = np.ones(len(a["diff"]), bool) if group is None else a["group"] == group
        sums: dict[str, float] = defaultdict(float)
        for c, da, db in zip(a["cluster"][m], a["diff"][m], b["diff"][m]):
            sums[c] += db - da
        return cluster_sign_flip_test(np.array(list(sums.values()), dtype=float), seed=seed)
    return test


def paired_sentences(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], seed: int = 0) -> PairedData:
    keys_a, ta = _pair_table(rows_a)
    keys_b, tb = _pair_table(rows_b)
    ia, ib = _align(keys_a, keys_b)
    a, b = _take(ta, ia), _take(tb, ib)
    groups = list(dict.fromkeys(a["group"].tolist()))
    members: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(a["cluster"].tolist()):
        members[c].append(i)
    units = [np.array(v, dtype=int) for v in members.values()]
    strata = [c.split("\x1f")[0] for c in members]
    tests: dict[str, PairTest] = {"bias_score": _mcnemar("stereo"), "tie_rate": _mcnemar("tie"),
                                  "mean_ll_diff": _cluster_flip(None, seed)}
    for g in groups:
        tests[f"bias_score:{g}"] = _mcnemar("stereo", g)
        tests[f"mean_ll_diff:{g}"] = _cluster_flip(g, seed)
    return PairedData(a, b, _wino_fn(groups), "predicates (within target group)", units, strata, tests,
                      len(keys_a), len(keys_b))


# -- item-table probes ------------------------------------------------------------------------
def _item_paired(ta: Mapping[str, np.ndarray], tb: Mapping[str, np.ndarray], key: str, fn: Callable,
                 unit: str) -> PairedData:
    keys_a, keys_b = list(np.asarray(ta[key]).tolist()), list(np.asarray(tb[key]).tolist())
    ia, ib = _align(keys_a, keys_b)
    return PairedData(_take(ta, ia), _take(tb, ib), fn, unit, n_a=len(keys_a), n_b=len(keys_b))


def jobs_lum(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], seed: int = 0) -> PairedData:
    from biaslab.probes.jobs_lum.metrics import jobs_lum_metrics
    from biaslab.probes.jobs_lum.probe import JobsLumProbe

    return _item_paired(JobsLumProbe.item_table(rows_a), JobsLumProbe.item_table(rows_b), "item_id",
                        jobs_lum_metrics, "occupations")


def fsb_judge(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], seed: int = 0) -> PairedData:
    from biaslab.probes.fsb_judge.metrics import item_table, judge_metrics

    ta, tb = item_table(rows_a), item_table(rows_b)
    reps = max(ta["judge"].shape[1], tb["judge"].shape[1])
    for t in (ta, tb):  # equal repetition columns, so that rows can be swapped
        extra = reps - t["judge"].shape[1]
        if extra:
            n = len(t["human"])
            t["judge"] = np.hstack([t["judge"], np.full((n, extra), np.nan)])
            t["evaluated"] = np.hstack([t["evaluated"], np.zeros((n, extra), bool)])
    return _item_paired(ta, tb, "item_id", judge_metrics, "rated texts")


def olympics(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], seed: int = 0) -> PairedData:
    from biaslab.probes.olympics.metrics import (
        compute_metrics,
        event_table,
        score_specified_rows,
        score_underspecified_rows,
    )
    from biaslab.probes.olympics.probe import OlympicsProbe

    probe = OlympicsProbe()

    def table(rows: list[dict[str, Any]]) -> Table:
        spec, und = probe.frames(rows)
        t, events = event_table(score_specified_rows(spec), score_underspecified_rows(und))
        t = dict(t)
        t["event"] = np.array(events.astype(str).agg("\x1f".join, axis=1).tolist(), dtype=object)
        return t

    def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
        return compute_metrics({k: v for k, v in t.items() if k != "event"})

    return _item_paired(table(rows_a), table(rows_b), "event", fn, "events")


ADAPTERS: dict[str, Callable[..., PairedData]] = {"jobs-lum": jobs_lum, "fsb-judge": fsb_judge, "olympics": olympics}


def family(probe: str) -> str | None:
    """The adapter family of a probe: the probe's name, ``paired-sentences``, or None (no paired analysis)."""
    if probe in ADAPTERS:
        return probe
    from biaslab.probes import PROBES, get_probe_class
    from biaslab.probes.wino.probe import WinoPairsProbe

    if probe in PROBES and issubclass(get_probe_class(probe), WinoPairsProbe):
        return "paired-sentences"
    return None


def paired_data(probe_family: str, rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]],
                seed: int = 0) -> PairedData:
    if probe_family == "paired-sentences":
        return paired_sentences(rows_a, rows_b, seed)
    return ADAPTERS[probe_family](rows_a, rows_b, seed)
