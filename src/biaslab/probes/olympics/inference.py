"""The Olympic metrics' intervals and p values, from one procedure over events.

An **event** (one Discipline, Season, Year and Event) is the unit: its men's, women's and underspecified texts
(and their repetitions) are answers about the same competition and move together, and events are independent.
Every metric is a pooled ratio of per-event sums (:func:`biaslab.probes.olympics.metrics.event_table`), and a
ratio ``r = sum(num) / sum(den)`` over the events with a denominator is the mean of the event values ``r + (num_i
- r den_i) / mean(den)`` (:mod:`biaslab.stats.unit_values`; with one text per event, the text's own value). Its
interval and p value come from one procedure over events (:func:`biaslab.stats.clustered.cluster_inference`: the
exact binomial where every value is at an end of the scale, the exact sign-flip test inverted while fewer than 30
events hold an informative value, the cluster-robust t (CR2) from 30; no interval under 6 events, or under 2 where
every value is at an end), so an interval excludes its null exactly when p < 0.05:

* ``avg_f1`` (0-1): F1 over the specified texts; no null.
* ``knowledge_based`` (-1 to 1, null 0): the men's pooled F1 minus the women's, paired over events (both
  genders' specified prompts ask about the same event), each gender's F1 linearised over events.
* ``explicit_share``, ``implicit_share`` (0-1): shares of the underspecified texts; no null.
* ``explicit_score`` (-1 to 1, null 0): the mean +1 / -1 / 0 score over the explicit texts, over the events
  with one.
* ``implicit_score`` (-1 to 1, null 0): the mean F1 against the men's results minus against the women's, over
  the implicit texts.

``q``: Benjamini-Hochberg over the three tests (``knowledge_based``, ``explicit_score``, ``implicit_score``). The
paper's own tests (Appendix D, texts as units: :func:`biaslab.probes.olympics.score.significance_tests`) are kept
beside these, as the paper's; they ignore that texts of one event share it.

Each metric is declared once (:func:`declared_metrics`, :class:`biaslab.stats.Estimand`): the run report's
intervals and the unit values ``compare`` and the gate test come from the same declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from biaslab.probes.olympics.metrics import compute_metrics
from biaslab.probing.metric_ranges import declared_estimand
from biaslab.probing.pairing import UnitValues
from biaslab.stats import Estimand, Rows, estimate, units_of
from biaslab.stats.group_means import add_qvalues, keep_defined_values
from biaslab.stats.ranges import RATE, RATE_GAP, Range

UNIT = "events"
TESTED = ("knowledge_based", "explicit_score", "implicit_score")
METRIC_RANGES: dict[str, Range] = {
    "avg_f1": RATE,
    "knowledge_based": RATE_GAP,
    "explicit_share": RATE,
    "implicit_share": RATE,
    "explicit_score": RATE_GAP,
    "implicit_score": RATE_GAP,
}
# what each pooled ratio's denominator counts, for the reason it is undefined
WHAT = {
    "avg_f1": "a specified text",
    "explicit_share": "an underspecified text",
    "explicit_score": "an explicit text",
    "implicit_share": "an underspecified text",
    "implicit_score": "an implicit text",
}


def _floats(table: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=float) for k, v in table.items() if k != "event"}


def declared_metrics(table: Mapping[str, np.ndarray]) -> dict[str, tuple[Estimand, Rows]]:
    """Every metric declared once with its rows (module docstring), in the report's order: the run report's
    intervals (:func:`event_inference`) and the pairing's unit values (:func:`event_unit_values`) both come from
    these. ``knowledge_based`` is the paired difference of the men's and the women's pooled F1 over the events
    with a specified text, each side's values kept in [0, 1] where they stay there."""
    t = _floats(table)
    rows = {
        "avg_f1": Rows(num=t["men_f1_sum"] + t["women_f1_sum"], den=t["men_n"] + t["women_n"]),
        "knowledge_based": Rows(
            num=t["men_f1_sum"], den=t["men_n"], second=Rows(num=t["women_f1_sum"], den=t["women_n"])
        ),
        "explicit_share": Rows(num=t["explicit_n"], den=t["und_n"]),
        "explicit_score": Rows(num=t["explicit_sum"], den=t["explicit_n"]),
        "implicit_share": Rows(num=t["implicit_n"], den=t["und_n"]),
        "implicit_score": Rows(num=t["implicit_sum"], den=t["implicit_n"]),
    }
    out = {}
    for name, r in rows.items():
        null = 0.0 if name in TESTED else None
        if r.second is not None:
            e = declared_estimand(METRIC_RANGES, name, "difference", unit=UNIT, null=null, bounds=RATE)
        else:
            e = declared_estimand(METRIC_RANGES, name, "ratio", unit=UNIT, null=null)
        out[name] = (e, r)
    return out


def event_inference(table: Mapping[str, np.ndarray], *, seed: int = 0) -> dict[str, dict[str, Any]]:
    """The six metrics of :func:`~biaslab.probes.olympics.metrics.compute_metrics` (its values) with their
    intervals, and the three bias scores' p and q values, over events (module docstring)."""
    out = {}
    for name, (e, rows) in declared_metrics(table).items():
        why = f"no event has {WHAT[name]}" if name in WHAT else "a gender has no specified text"
        got = estimate(e, rows, seed=seed, why_empty=why)[0]
        if got.get("value") is None:
            got["n"] = int(np.sum(_has_denominator(rows)))
        out[name] = got
    keep_defined_values(out, compute_metrics(table))
    add_qvalues(out, list(TESTED))
    for m in out.values():
        m["unit"] = UNIT
    return out


def _has_denominator(rows: Rows) -> np.ndarray:
    """The rows where the metric's denominator (either side's, for a difference) is positive."""
    has = np.asarray(rows.den) > 0
    return has if rows.second is None else has | (np.asarray(rows.second.den) > 0)


def event_unit_values(table: Mapping[str, np.ndarray]) -> dict[str, UnitValues | None]:
    """The values per event that :func:`event_inference` gives each interval over (the pairing's
    :meth:`~biaslab.probing.pairing.Pairing.unit_values`): every pooled ratio linearised over the events with its
    denominator, and ``knowledge_based`` as the events' men's minus women's linearised F1. Every metric is such a
    mean over events."""
    return {name: UnitValues.of(units_of(e, rows)) for name, (e, rows) in declared_metrics(table).items()}
