"""How BBQ runs pair up: an item is a question (category, example id, repetition), matched across runs.
The questions built from one template (category, ``question_index``) move together: they are the
clusters, within their category (the ``subcategory`` the run's metrics use: ``<Category> (names)``
apart).

Every metric, overall and per category, is a mean of one value per question (:meth:`BbqPairing.unit_values`), so
``compare`` and the gate test it with the paired cluster inference over templates
(:func:`biaslab.stats.clustered.paired_cluster_inference`: interval and p from one procedure, never below
``2^(1-k)`` over ``k`` templates, no interval under 6):

* ``accuracy_<condition>``: each answered question of the condition's 0/1 correctness (a ratio over the answered
  questions, :meth:`~biaslab.probing.pairing.UnitValues.ratio`); ``unparsed_rate``: each question's 0/1.
* ``bias_score_disambig`` = ``100 (2 biased - nu) / nu`` summed over the answered disambiguated questions: the
  linearised ratio (:func:`biaslab.stats.unit_values.ratio_units`; +-100 where every answer names a resolved
  person).
* ``bias_score_ambig`` = ``w R`` over the answered ambiguous questions, ``w`` the mean of their wrong answers and
  ``R`` the ratio above of theirs: the product rule of the delta method, ``u_i = w r_i + R (w_i - w)`` with
  ``r_i`` the ratio's linearised values; ``mean(u) = w R`` exactly (+-100 or 0 where every wrong answer names a
  resolved person).

Where a run's questions with a denominator differ from the other run's (an unparsed reply in generate mode), the
masks differ and ``compare`` falls back to the paired bootstrap over templates for that metric."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from biaslab.probes.bbq.metrics import COLS, _row_values, _scores
from biaslab.probing.pairing import ItemTable, MetricFn, Pairing, UnitValues, clusters_of
from biaslab.stats.unit_values import bounds_if_inside, ratio_units

SCORE = (-100.0, 100.0)


def score_units(t: Mapping[str, np.ndarray], rows: np.ndarray) -> dict[str, UnitValues]:
    """The unit values of BBQ's metrics over the questions of ``rows`` (module docstring; a metric undefined there
    is left out)."""
    col = {c: np.asarray(t[c], dtype=float) for c in COLS}
    out: dict[str, UnitValues | None] = {
        "accuracy_ambig": UnitValues.ratio(col["correct_ambig"], col["n_ambig"], rows),
        "accuracy_disambig": UnitValues.ratio(col["correct_disambig"], col["n_disambig"], rows),
        "unparsed_rate": UnitValues.ratio(col["unparsed"], col["total"], rows),
    }
    for cond in ("ambig", "disambig"):
        m = rows & (col[f"n_{cond}"] > 0)
        nu = col[f"nu_{cond}"][m]
        ratio = ratio_units(100.0 * (2 * col[f"biased_{cond}"][m] - nu), nu) if m.any() else None
        if ratio is None:
            continue
        if cond == "ambig":
            wrong = 1.0 - col["correct_ambig"][m]
            w, big_r = float(wrong.mean()), float(ratio.mean())
            ratio = w * ratio + big_r * (wrong - w)
        bounds = bounds_if_inside(SCORE, ratio)  # snaps values within rounding of a bound onto it
        values = np.full(len(rows), np.nan)
        values[m] = ratio
        out[f"bias_score_{cond}"] = UnitValues(values, m, bounds)
    return {name: uv for name, uv in out.items() if uv is not None}


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
