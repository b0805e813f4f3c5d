"""A file probe's metrics, from a per-item table of its attempts.

The unit of every interval is an **item** (a row of the items table): its prompts (rotations of the options) and
repetitions are answers to one item and move together. An item's *share* of a label is the share of its detected
answers that have the label; items with no detected answer have no share and are left out of the rates (the
undetected rate counts them).

* ``rate`` -- the mean of the items' shares: :func:`biaslab.stats.cluster_inference` over items (the exact binomial
  and its Clopper-Pearson interval when every share is 0 or 1, as with one answer per item; the sign-flip test
  with few informative items, the cluster-robust t with many), tested against ``unbiased`` when the file gives it.
  Per group (``NAME:<group>``), the same over the group's items.
* ``difference`` -- group A's mean share minus group B's: :func:`biaslab.stats.two_group_inference` (Welch's t,
  an exact permutation p where the groups are tiny, an exact bound when every item of one group is at one end and
  every item of the other at the other), tested against 0.
* ``undetected_rate`` -- undetected answers over all answers, with its interval over items as clusters of answers
  (:func:`biaslab.stats.share_of_attempts`); no test.

Each value, interval and p come from one procedure, so the interval excludes the null exactly when p < 0.05. The
intervals are clipped to the metrics' ranges (rates 0-1, differences -1 to 1) when the run's metrics are written.
q: Benjamini-Hochberg over the probe's tests (the metrics with a null).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from biaslab.stats import (
    add_qvalues,
    cluster_inference,
    keep_defined_values,
    share_of_attempts,
    two_group_inference,
    undefined,
)

if TYPE_CHECKING:
    from biaslab.probing.file_probe.metric_specs import MetricSpec
    from biaslab.probing.file_probe.schema import FileSpec

Table = dict[str, np.ndarray]


def item_table(rows: Iterable[Mapping[str, Any]], spec: FileSpec) -> Table:
    """One row per item: its answers (``attempts``), how many were read as each label (``n:<label>``) and its value
    in each group column (``g:<column>``; also ``group`` when there is one group column)."""
    labels = spec.answer.labels
    acc: dict[str, dict[str, Any]] = {}
    for r in rows:
        item = acc.setdefault(
            str(r["item_id"]),
            {
                "attempts": 0,
                **{f"n:{label}": 0 for label in labels},
                **{f"g:{c}": str(r.get(c, "")) for c in spec.groups},
            },
        )
        item["attempts"] += 1
        if r.get("evaluation") in labels:
            item[f"n:{r['evaluation']}"] += 1
    ids = list(acc)
    table: Table = {
        k: np.array([acc[i][k] for i in ids], dtype=float) for k in ("attempts", *(f"n:{x}" for x in labels))
    }
    for c in spec.groups:
        table[f"g:{c}"] = np.array([acc[i][f"g:{c}"] for i in ids], dtype=object)
    if len(spec.groups) == 1:  # compare counts a per-group metric's items by this column
        table["group"] = table[f"g:{next(iter(spec.groups))}"]
    table["item_id"] = np.array(ids, dtype=object)
    return table


def _shares(table: Mapping[str, np.ndarray], label: str, labels: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """(each item's share of ``label`` among its detected answers, 0 where none; whether it has a detected one)."""
    detected = sum((np.asarray(table[f"n:{x}"], dtype=float) for x in labels), np.zeros(len(table["item_id"])))
    has = detected > 0
    share = np.zeros(detected.shape)
    share[has] = np.asarray(table[f"n:{label}"], dtype=float)[has] / detected[has]
    return share, has


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def _in_group(table: Mapping[str, np.ndarray], column: str, value: str) -> np.ndarray:
    return np.asarray(table[f"g:{column}"], dtype=object) == value


def point_metrics(table: Mapping[str, np.ndarray], spec: FileSpec) -> dict[str, float]:
    """Every metric's value on an item table (NaN where undefined): the run's own numbers, and ``compare``'s."""
    labels = spec.answer.labels
    out: dict[str, float] = {}
    for m in spec.metrics:
        if m.kind == "undetected_rate":
            detected = sum(np.asarray(table[f"n:{x}"], dtype=float).sum() for x in labels)
            total = float(np.asarray(table["attempts"], dtype=float).sum())
            out[m.name] = 1 - detected / total if total else float("nan")
            continue
        share, has = _shares(table, str(m.label), labels)
        if m.kind == "rate":
            out[m.name] = _mean(share[has])
            for column, values in spec.groups.items():
                for v in values:
                    out[f"{m.name}:{v}"] = _mean(share[has & _in_group(table, column, v)])
        else:
            a, b = (share[has & _in_group(table, str(m.column), g)] for g in m.between or ())
            out[m.name] = _mean(a) - _mean(b)
    return out


def inference(table: Mapping[str, np.ndarray], spec: FileSpec, *, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Every metric with its 95% interval over items and, where it has a null, its p value (module docstring)."""
    labels, noun = spec.answer.labels, spec.noun
    metrics: dict[str, dict[str, Any]] = {}
    for m in spec.metrics:
        if m.kind == "undetected_rate":
            attempts = np.asarray(table["attempts"], dtype=float)
            detected = sum((np.asarray(table[f"n:{x}"], dtype=float) for x in labels), np.zeros(attempts.shape))
            metrics[m.name] = (
                share_of_attempts(attempts - detected, attempts, label=noun)
                if attempts.sum() > 0
                else undefined("no answers")
            )
            continue
        share, has = _shares(table, str(m.label), labels)
        if m.kind == "rate":
            metrics[m.name] = _rate(share[has], m, noun, seed)
            for column, values in spec.groups.items():
                for v in values:
                    members = _in_group(table, column, v)
                    if members.any():  # a group with no item in this run (--limit) gets no metric
                        metrics[f"{m.name}:{v}"] = _rate(share[has & members], m, noun, seed)
            continue
        group_a, group_b = m.between or ("", "")
        a = share[has & _in_group(table, str(m.column), group_a)]
        b = share[has & _in_group(table, str(m.column), group_b)]
        if a.size and b.size:
            metrics[m.name] = two_group_inference(a, b, null=0.0, scale=(0.0, 1.0), label=noun, seed=seed)
        else:
            empty = group_a if not a.size else group_b
            metrics[m.name] = undefined(f"no item of the group {empty} has a detected answer", null=0.0)
    keep_defined_values(metrics, point_metrics(table, spec))
    for metric in metrics.values():
        metric["unit"] = noun
    add_qvalues(metrics, [name for name, metric in metrics.items() if metric.get("null") is not None])
    return metrics


def _rate(values: np.ndarray, m: MetricSpec, noun: str, seed: int) -> dict[str, Any]:
    if not values.size:
        return undefined(f"no {noun} with a detected answer", null=m.unbiased)
    return cluster_inference(values, null=m.unbiased, bounds=(0.0, 1.0), label=noun, seed=seed)
