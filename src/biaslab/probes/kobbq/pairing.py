"""How KoBBQ runs pair up: a row is one prompt of a sample (sample id, wording, option order, repetition), matched
across runs (two models, two modes). The rows of one template move together: they are the clusters, within their
category. Every metric is a mean of linearised per-row values (:meth:`KobbqPairing.unit_values`), tested with one
procedure for interval and p (:func:`biaslab.stats.clustered.paired_cluster_inference`, clustered by template within
category): the ratios (accuracies, ``diff_bias_amb``, ``ooc_rate``) their rows' linearised values, ``diff_bias_dis``
(the accuracy in biased minus that in counter-biased disambiguated contexts) the two accuracies' linearised values
over the answered disambiguated rows, biased minus counter-biased, as the run report's paired interval of it: each
from the metric's one declaration (:func:`biaslab.probes.kobbq.metrics.declared_metrics`)."""

from __future__ import annotations

import zlib
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.kobbq.metrics import COLS, declared_metrics, row_values, values_of
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues, clusters_of
from biaslab.stats import units_of

GROUP_COLS = ("category", "label_annotation", "prompt")


def _code(name: str) -> int:
    """A group's code, the same in every run's table (integer masks are fast on resamples)."""
    return zlib.crc32(name.encode("utf-8"))


def _groups(t: Mapping[str, np.ndarray]) -> list[tuple[str, str | None, int]]:
    """``[(suffix, code column, code)]``: overall (column None), then every category, label type and wording."""
    out: list[tuple[str, str | None, int]] = [("", None, 0)]
    for col in GROUP_COLS:
        out += [(f":{g}", f"{col}_code", _code(g)) for g in sorted(set(np.asarray(t[col]).tolist()))]
    return out


def _mask(t: Mapping[str, np.ndarray], col: str | None, code: int) -> np.ndarray:
    return np.ones(len(t["total"]), bool) if col is None else np.asarray(t[col]) == code


class KobbqPairing(Pairing):
    family = "kobbq"
    unit = "prompts"
    cluster_unit = "templates (within category)"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        keys: list[Hashable] = [
            (str(r["sample_id"]), int(r["prompt_id"]), int(r["permutation"]), int(r.get("repetition") or 0))
            for r in rows
        ]
        values = [row_values(r) for r in rows]
        columns = {c: np.array([v[c] for v in values], dtype=float) for c in COLS}
        columns["category"] = np.array([str(r["category"]) for r in rows], dtype=object)
        columns["label_annotation"] = np.array([str(r["label_annotation"]) for r in rows], dtype=object)
        columns["prompt"] = np.array([f"prompt{r['prompt_id']}" for r in rows], dtype=object)
        columns["cluster"] = np.array([str(r["template"]) for r in rows], dtype=object)
        for col in GROUP_COLS:
            columns[f"{col}_code"] = np.array([_code(g) for g in columns[col].tolist()], dtype=np.int64)
        return ItemTable(keys, columns)

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        groups = _groups(aligned)  # fixed from run A's table, recomputed on each resample

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            out = {}
            for suffix, col, value in groups:
                mask = _mask(t, col, value)
                for name, v in values_of({c: float(np.asarray(t[c])[mask].sum()) for c in COLS}).items():
                    out[f"{name}{suffix}"] = np.nan if v is None else float(v)
            return out

        return fn

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        return clusters_of(aligned["cluster"], lambda c: c.rsplit("-", 1)[0])

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        out = {}
        for suffix, col, value in _groups(table):
            for name, (e, rows) in declared_metrics(table, _mask(table, col, value)).items():
                uv = UnitValues.of(units_of(e, rows))
                if uv is not None:
                    out[f"{name}{suffix}"] = uv
        return out
