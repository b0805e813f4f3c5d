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
from biaslab.probing.pairing import UnitValues
from biaslab.stats.clustered import cluster_inference, paired_cluster_inference
from biaslab.stats.group_means import add_qvalues, keep_defined_values
from biaslab.stats.honest import undefined
from biaslab.stats.ranges import RATE, RATE_GAP, within_range
from biaslab.stats.ratio_gaps import linearized_ratio
from biaslab.stats.unit_values import bounds_if_inside, masked_ratio_units

UNIT = "events"
TESTED = ("knowledge_based", "explicit_score", "implicit_score")


def _ratio(
    num: np.ndarray, den: np.ndarray, *, null: float | None, bounds: tuple[float, float], what: str, seed: int
) -> dict[str, Any]:
    """``sum(num) / sum(den)`` over the events with ``den > 0``, with its interval (and p against ``null``)."""
    got = masked_ratio_units(num, den)
    if got is None:
        return {**undefined(f"no event has {what}", null=null), "n": 0}
    values = got[0][got[1]]
    inside = bounds_if_inside(bounds, values)
    return cluster_inference(values, None, null=null, bounds=inside, value_range=bounds, label=UNIT, seed=seed)


def _ratios(t: Mapping[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray, tuple[float, float], str]]:
    """The pooled ratios: metric -> ``(num, den, range, what its denominator counts)`` per event."""
    spec_n = t["men_n"] + t["women_n"]
    return {
        "avg_f1": (t["men_f1_sum"] + t["women_f1_sum"], spec_n, RATE, "a specified text"),
        "explicit_share": (t["explicit_n"], t["und_n"], RATE, "an underspecified text"),
        "explicit_score": (t["explicit_sum"], t["explicit_n"], RATE_GAP, "an explicit text"),
        "implicit_share": (t["implicit_n"], t["und_n"], RATE, "an underspecified text"),
        "implicit_score": (t["implicit_sum"], t["implicit_n"], RATE_GAP, "an implicit text"),
    }


def _floats(table: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=float) for k, v in table.items() if k != "event"}


def event_inference(table: Mapping[str, np.ndarray], *, seed: int = 0) -> dict[str, dict[str, Any]]:
    """The six metrics of :func:`~biaslab.probes.olympics.metrics.compute_metrics` (its values) with their
    intervals, and the three bias scores' p and q values, over events (module docstring)."""
    t = _floats(table)
    ratios = {
        name: _ratio(num, den, null=0.0 if name in TESTED else None, bounds=bounds, what=what, seed=seed)
        for name, (num, den, bounds, what) in _ratios(t).items()
    }
    knowledge = _knowledge(t, t["men_n"] + t["women_n"] > 0, seed)
    out = {"avg_f1": ratios.pop("avg_f1"), "knowledge_based": knowledge, **ratios}
    keep_defined_values(out, compute_metrics(table))
    add_qvalues(out, list(TESTED))
    for m in out.values():
        m["unit"] = UNIT
    return out


def _knowledge_units(
    t: Mapping[str, np.ndarray], has: np.ndarray
) -> tuple[float | None, np.ndarray, float | None, np.ndarray, tuple[float, float] | None]:
    """``(men's F1, its values, women's F1, theirs, (0, 1) where both stay inside it)`` over the events ``has``."""
    ra, ua = linearized_ratio(t["men_f1_sum"][has], t["men_n"][has])
    rb, ub = linearized_ratio(t["women_f1_sum"][has], t["women_n"][has])
    return ra, ua, rb, ub, bounds_if_inside(RATE, ua, ub)


def _knowledge(t: Mapping[str, np.ndarray], has: np.ndarray, seed: int) -> dict[str, Any]:
    """Men's minus women's pooled F1 over the events with a specified text, paired over events (the two genders'
    linearised F1, :func:`biaslab.stats.ratio_gaps.linearized_ratio`; exact steps while both stay in [0, 1])."""
    ra, ua, rb, ub, bounds = _knowledge_units(t, has)
    if ra is None or rb is None:
        return {**undefined("a gender has no specified text", null=0.0), "n": int(has.sum())}
    gap = paired_cluster_inference(ub, ua, null=0.0, bounds=bounds, value_range=RATE, label=UNIT, seed=seed)
    gap.pop("a", None), gap.pop("b", None)  # the two genders' F1: not metrics of their own here
    gap["value"] = ra - rb
    return within_range(gap, RATE_GAP)


def event_unit_values(table: Mapping[str, np.ndarray]) -> dict[str, UnitValues | None]:
    """The values per event that :func:`event_inference` gives each interval over (the pairing's
    :meth:`~biaslab.probing.pairing.Pairing.unit_values`): every pooled ratio linearised over the events with its
    denominator, and ``knowledge_based`` as the events' men's minus women's linearised F1 (range -1 to 1 while
    both stay in [0, 1]). Every metric is such a mean over events."""
    t = _floats(table)
    out = {name: UnitValues.ratio(num, den, None, bounds) for name, (num, den, bounds, _) in _ratios(t).items()}
    has = t["men_n"] + t["women_n"] > 0
    ra, ua, rb, ub, inside = _knowledge_units(t, has)
    if ra is not None and rb is not None:
        out["knowledge_based"] = UnitValues.mean(_spread_to(has, ua - ub), has, None if inside is None else RATE_GAP)
    return out


def _spread_to(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = np.full(mask.size, np.nan)
    out[mask] = values
    return out
