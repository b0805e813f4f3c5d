"""How MBBQ runs pair up, including across languages.

An item is a question of one set (bias or control) and category, named by its ``parallel_id`` (the same in every
language for the same item translated: :mod:`.data`), asked in one wording and repetition. A run of **one language**
leaves the language out of the key, so ``biaslab compare`` (and ``biaslab gate``) of an English run and a Turkish
run of one model pairs each Turkish question with its English twin; a run of several languages keeps it in (each
language's questions are items of their own, paired with another run of the same languages). The questions of one
template (category, ``question_index``) are a cluster, within their category, in both cases.

Metrics on a table: BBQ's four (pooled and ``:<Category>``), and ``control_accuracy_ambig`` /
``control_accuracy_disambig`` over the control questions; with several languages also ``:<lang>`` and
``:<lang>/<Category>``, as the run reports them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.bbq.metrics import COLS, _row_values, _scores
from biaslab.probes.bbq.units import declared_metrics, score_units
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues, clusters_of
from biaslab.stats import units_of

CONTROL = tuple(f"c_{c}" for c in COLS)


class MbbqPairing(Pairing):
    family = "mbbq"
    unit = "questions"
    cluster_unit = "templates (within category)"

    def table(self, rows: list[dict[str, Any]]) -> ItemTable:
        several = len({r.get("language") for r in rows}) > 1
        keys: list[Hashable] = [
            ((r.get("language"),) if several else ())
            + (r.get("set"), r.get("category"), r.get("parallel_id"), r.get("prompt"), int(r.get("repetition") or 0))
            for r in rows
        ]
        columns: dict[str, np.ndarray] = {}
        values = [_row_values(r) for r in rows]
        bias = np.array([r.get("set") == "bias" for r in rows])
        for c in COLS:
            col = np.array([v[c] for v in values], dtype=float)
            columns[c], columns[f"c_{c}"] = np.where(bias, col, 0.0), np.where(bias, 0.0, col)
        columns["group"] = np.array([str(r.get("category")) for r in rows], dtype=object)
        columns["language"] = np.array([str(r.get("language")) if several else "" for r in rows], dtype=object)
        columns["cluster"] = np.array(
            [f"{r.get('category')}\x1f{r.get('question_index', '')}" for r in rows], dtype=object
        )
        return ItemTable(keys, columns)

    def metric_fn(self, aligned: Mapping[str, np.ndarray]) -> MetricFn:
        groups = sorted(set(np.asarray(aligned["group"]).tolist()))
        langs = sorted(set(np.asarray(aligned["language"]).tolist()) - {""})

        def block(t: Mapping[str, np.ndarray], m: np.ndarray, suffix: str) -> dict[str, float]:
            s = _scores({c: np.asarray(t[c])[m].sum() for c in COLS})
            cs = _scores({c: np.asarray(t[f"c_{c}"])[m].sum() for c in COLS})
            out = {f"{k}{suffix}": float(v) for k, v in s.items()}
            out.update({f"control_{k}{suffix}": float(cs[k]) for k in ("accuracy_ambig", "accuracy_disambig")})
            return out

        def fn(t: Mapping[str, np.ndarray]) -> dict[str, float]:
            g, lang = np.asarray(t["group"]), np.asarray(t["language"])
            every = np.ones(len(g), dtype=bool)
            out = block(t, every, "")
            for name in groups:
                out.update(block(t, g == name, f":{name}"))
            for code in langs:
                out.update(block(t, lang == code, f":{code}"))
                for name in groups:
                    out.update(block(t, (lang == code) & (g == name), f":{code}/{name}"))
            return out

        return fn

    def unit_values(self, table: Mapping[str, np.ndarray]) -> dict[str, UnitValues]:
        """Every metric as a mean of one value per question (each run's mean is its metric), so compare and the
        gate test them by the paired cluster inference where both runs answered the same questions: BBQ's metrics
        over the bias set by bbq's own unit values (:func:`biaslab.probes.bbq.units.score_units`: the
        accuracies and the disambiguated score linearised as ratios, the ambiguous score by the product rule),
        the control accuracies by the same declarations (:func:`biaslab.probes.bbq.units.declared_metrics`: ratios)
        over the control set."""
        g, lang = np.asarray(table["group"]), np.asarray(table["language"])
        subsets = [("", np.ones(len(g), dtype=bool))] + [(f":{x}", g == x) for x in sorted(set(g.tolist()))]
        for code in sorted(set(lang.tolist()) - {""}):
            subsets.append((f":{code}", lang == code))
            subsets += [(f":{code}/{x}", (lang == code) & (g == x)) for x in sorted(set(g.tolist()))]
        out: dict[str, UnitValues] = {}
        control = {c: table[f"c_{c}"] for c in COLS}
        for suffix, m in subsets:
            out.update({f"{k}{suffix}": uv for k, uv in score_units(table, m).items()})
            declared = declared_metrics(control, m)
            for cond in ("ambig", "disambig"):
                uv = UnitValues.of(units_of(*declared[f"accuracy_{cond}"]))
                if uv is not None:
                    out[f"control_accuracy_{cond}{suffix}"] = uv
        return out

    def clusters(self, aligned: Mapping[str, np.ndarray]) -> tuple[list[np.ndarray], list[str]]:
        return clusters_of(aligned["cluster"])
