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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from biaslab.probes.olympics.metrics import compute_metrics
from biaslab.stats.clustered import cluster_inference, paired_cluster_inference
from biaslab.stats.group_means import add_qvalues, keep_defined_values
from biaslab.stats.honest import undefined
from biaslab.stats.ranges import RATE, RATE_GAP, within_range
from biaslab.stats.ratio_gaps import linearized_ratio
from biaslab.stats.unit_values import bounds_if_inside, ratio_units

UNIT = "events"
TESTED = ("knowledge_based", "explicit_score", "implicit_score")


def _ratio(
    num: np.ndarray, den: np.ndarray, *, null: float | None, bounds: tuple[float, float], what: str, seed: int
) -> dict[str, Any]:
    """``sum(num) / sum(den)`` over the events with ``den > 0``, with its interval (and p against ``null``)."""
    has = den > 0
    values = ratio_units(num[has], den[has])
    if values is None:
        return {**undefined(f"no event has {what}", null=null), "n": 0}
    inside = bounds_if_inside(bounds, values)
    return cluster_inference(values, None, null=null, bounds=inside, value_range=bounds, label=UNIT, seed=seed)


def event_inference(table: Mapping[str, np.ndarray], *, seed: int = 0) -> dict[str, dict[str, Any]]:
    """The six metrics of :func:`~biaslab.probes.olympics.metrics.compute_metrics` (its values) with their
    intervals, and the three bias scores' p and q values, over events (module docstring)."""
    t = {k: np.asarray(v, dtype=float) for k, v in table.items()}
    spec_n = t["men_n"] + t["women_n"]
    out = {
        "avg_f1": _ratio(
            t["men_f1_sum"] + t["women_f1_sum"], spec_n, null=None, bounds=RATE, what="a specified text", seed=seed
        ),
        "knowledge_based": _knowledge(t, spec_n > 0, seed),
        "explicit_share": _ratio(
            t["explicit_n"], t["und_n"], null=None, bounds=RATE, what="an underspecified text", seed=seed
        ),
        "explicit_score": _ratio(
            t["explicit_sum"], t["explicit_n"], null=0.0, bounds=RATE_GAP, what="an explicit text", seed=seed
        ),
        "implicit_share": _ratio(
            t["implicit_n"], t["und_n"], null=None, bounds=RATE, what="an underspecified text", seed=seed
        ),
        "implicit_score": _ratio(
            t["implicit_sum"], t["implicit_n"], null=0.0, bounds=RATE_GAP, what="an implicit text", seed=seed
        ),
    }
    keep_defined_values(out, compute_metrics(table))
    add_qvalues(out, list(TESTED))
    for m in out.values():
        m["unit"] = UNIT
    return out


def _knowledge(t: Mapping[str, np.ndarray], has: np.ndarray, seed: int) -> dict[str, Any]:
    """Men's minus women's pooled F1 over the events with a specified text, paired over events (the two genders'
    linearised F1, :func:`biaslab.stats.ratio_gaps.linearized_ratio`; exact steps while both stay in [0, 1])."""
    ra, ua = linearized_ratio(t["men_f1_sum"][has], t["men_n"][has])
    rb, ub = linearized_ratio(t["women_f1_sum"][has], t["women_n"][has])
    if ra is None or rb is None:
        return {**undefined("a gender has no specified text", null=0.0), "n": int(has.sum())}
    bounds = bounds_if_inside(RATE, ua, ub)
    gap = paired_cluster_inference(ub, ua, null=0.0, bounds=bounds, value_range=RATE, label=UNIT, seed=seed)
    gap.pop("a", None), gap.pop("b", None)  # the two genders' F1: not metrics of their own here
    gap["value"] = ra - rb
    return within_range(gap, RATE_GAP)
