"""fsb-judge's intervals and p values, over rated texts.

A **rated text** is the unit: its answers in the repetitions (each with other in-context examples) rate the same
text against the same human score, so they move together, and texts are independent of each other. Every
metric's value is its mean over the repetitions in which it is defined (:func:`~biaslab.probes.fsb_judge.metrics.
judge_metrics`), and its interval comes from one procedure over texts:

* ``pearson_r``, ``spearman_r`` (range -1 to 1, null 0: the judge's scores unrelated to people's; 1, perfect
  agreement, is no null a test can reject). Defined in one repetition only (the default, one repetition):
  Fisher's z over its texts with a detected score (:func:`biaslab.stats.correlation.pearson_inference`; Spearman's
  rho is Pearson's r of the average ranks, and Fisher's z is its usual approximation there). Defined in several:
  a mean of correlations over the same texts, which no Fisher z covers; each repetition's r is then the mean of
  its texts' values ``r + zx_i zy_i - r (zx_i^2 + zy_i^2) / 2`` (``zx``, ``zy`` the standardised scores: r plus
  its influence values, whose spread is the delta-method variance of r; for rho the ranks are held fixed),
  spread over the texts any of them scored as a ratio (:mod:`biaslab.stats.unit_values`: a text a repetition
  did not score carries the repetition's r), averaged over the repetitions, and
  :func:`biaslab.stats.clustered.cluster_inference` gives the interval and p of their mean.
* ``mse``, ``mae``, ``mae_bin_*`` (0-1), ``undetected_rate`` (0-1): each repetition's value is a ratio over texts
  (squared or absolute errors over the texts with a detected score; undetected answers over the evaluated
  texts; a bin's metric over the texts of that bin only), linearised over the texts some repetition counts
  (its own value where every repetition counts it once), averaged over the repetitions,
  and :func:`~biaslab.stats.clustered.cluster_inference` over texts (the exact binomial where every value is 0
  or 1, the exact sign-flip test inverted while fewer than 30 texts hold an informative value, the
  cluster-robust t from 30). No null: an error has no unbiased value to test against.

``n``: the texts the interval is over. The correlations' p values are tests of one question each (does the judge
track people at all), not of a family of bias comparisons, so they carry no q.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import rankdata

from biaslab.probes.fsb_judge.metrics import BIN_METRICS, N_BINS, judge_metrics
from biaslab.probing.pairing import UnitValues
from biaslab.stats.clustered import cluster_inference
from biaslab.stats.correlation import pearson_inference
from biaslab.stats.group_means import keep_defined_values
from biaslab.stats.honest import undefined
from biaslab.stats.ranges import CORRELATION, RATE
from biaslab.stats.unit_values import bounds_if_inside, pearson_units, ratio_units

UNIT = "rated texts"


def _spread(values: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Values over the units ``inside`` spread over all units with mean unchanged: a unit outside carries the mean
    (the ratio linearisation with denominator 1 inside, 0 outside)."""
    b = float(values.mean())
    out = np.full(inside.size, b)
    out[inside] = b + (values - b) / inside.mean()
    return out


def correlation_units(
    human: np.ndarray, judge: np.ndarray, evaluated: np.ndarray, ranks: bool
) -> tuple[int, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]] | None:
    """``(repetitions, texts, values, (x, y))`` of ``pearson_r`` (``spearman_r`` with ``ranks``): the repetitions
    in which it is defined, the texts its unit values are over and those values, whose mean is the metric (module
    docstring); ``(x, y)``: the one such repetition's scores (its ranks). None where no repetition defines it."""
    per_rep = []
    for r in range(judge.shape[1]):
        det = evaluated[:, r] & np.isfinite(judge[:, r])
        x, y = human[det], judge[det, r]
        if ranks:
            x, y = rankdata(x), rankdata(y)
        units = pearson_units(x, y)
        if units is not None:
            per_rep.append((det, x, y, units))
    if not per_rep:
        return None
    if len(per_rep) == 1:
        det, x, y, units = per_rep[0]
        return 1, det, units, (x, y)
    scored = np.any([det for det, _, _, _ in per_rep], axis=0)  # the texts some repetition correlates
    values = np.mean([_spread(units, det[scored]) for det, _, _, units in per_rep], axis=0)
    return len(per_rep), scored, values, (per_rep[0][1], per_rep[0][2])


def _correlation(human: np.ndarray, judge: np.ndarray, evaluated: np.ndarray, ranks: bool, seed: int) -> dict[str, Any]:
    """``pearson_r`` (or, with ``ranks``, ``spearman_r``) over texts (module docstring)."""
    found = correlation_units(human, judge, evaluated, ranks)
    if found is None:
        return {**undefined("the judge's scores (or the human scores) are constant or missing", null=0.0), "n": 0}
    reps, _, values, (x, y) = found
    if reps == 1:
        out = pearson_inference(x, y, label=UNIT)
        out["n_clusters"] = out["n"]
        return out
    out = cluster_inference(values, None, null=0.0, value_range=CORRELATION, label=UNIT, seed=seed)
    out["method"] += f"; the mean of {reps} repetitions' correlations, each linearised over texts"
    return out


Ratio = tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]


def error_ratio_units(units: np.ndarray, per_rep: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """``(texts, values)``: the texts of ``units`` that some repetition counts (``d > 0``), and their values whose
    mean is the mean over repetitions of the ratios ``sum(y) / sum(d)`` (``per_rep``: ``(y, d)`` over all texts),
    each linearised over those texts; ``values`` is empty where no repetition has a denominator."""
    units = units & (np.sum([d for _, d in per_rep], axis=0) > 0)
    spread = [ratio_units(y[units], d[units]) for y, d in per_rep]
    defined = [u for u in spread if u is not None]
    return units, (np.mean(defined, axis=0) if defined else np.zeros(0))


def _error_ratio(units: np.ndarray, per_rep: list[tuple[np.ndarray, np.ndarray]], seed: int) -> dict[str, Any]:
    """The mean over repetitions of the ratios ``sum(y) / sum(d)`` over ``units`` (``per_rep``: ``(y, d)`` over
    all texts), with its interval over those of the texts that some repetition counts (``d > 0``)."""
    units, values = error_ratio_units(units, per_rep)
    if not values.size:
        return {**undefined("no repetition scored a text this metric is over"), "n": int(units.sum())}
    bounds = bounds_if_inside(RATE, values)
    return cluster_inference(values, None, null=None, bounds=bounds, value_range=RATE, label=UNIT, seed=seed)


def _scores(table: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    human = np.asarray(table["human"], dtype=float)
    judge = np.asarray(table["judge"], dtype=float).reshape(human.size, -1)
    evaluated = np.asarray(table["evaluated"], dtype=bool).reshape(human.size, -1)
    return human, judge, evaluated


def error_ratios(table: Mapping[str, np.ndarray]) -> dict[str, Ratio]:
    """The metrics that are means over repetitions of ratios over texts: metric -> ``(texts, per repetition (y,
    d))`` (module docstring)."""
    human, judge, evaluated = _scores(table)
    detected = evaluated & np.isfinite(judge)
    err = np.where(detected, judge - human[:, None], 0.0)
    reps = range(judge.shape[1])
    every: np.ndarray = np.asarray(evaluated.any(axis=1), dtype=bool)
    absolute = [(np.abs(err[:, r]), detected[:, r].astype(float)) for r in reps]
    out: dict[str, Ratio] = {
        "mse": (every, [(err[:, r] ** 2, detected[:, r].astype(float)) for r in reps]),
        "mae": (every, absolute),
        "undetected_rate": (
            every,
            [((evaluated & ~detected)[:, r].astype(float), evaluated[:, r].astype(float)) for r in reps],
        ),
    }
    bins = np.minimum(np.floor(human * N_BINS), N_BINS - 1)
    for b, name in enumerate(BIN_METRICS):
        out[name] = (np.asarray(every & (bins == b), dtype=bool), absolute)
    return out


def judge_unit_values(table: Mapping[str, np.ndarray]) -> dict[str, UnitValues | None]:
    """The values per rated text that :func:`judge_inference` gives the errors' and the undetected rate's
    intervals over (the pairing's :meth:`~biaslab.probing.pairing.Pairing.unit_values`), and the correlations'
    linearised values (:func:`correlation_units`: the values of their interval where several repetitions define
    them, and to first order the spread of Fisher's z where one does). Unbounded: no agreement bound."""
    out: dict[str, UnitValues | None] = {}
    human, judge, evaluated = _scores(table)
    for name, ranks in (("pearson_r", False), ("spearman_r", True)):
        found = correlation_units(human, judge, evaluated, ranks)
        if found is not None:
            reps, texts, values, (x, y) = found
            full = np.full(texts.size, np.nan)
            full[texts] = values
            pairs = (x, y) if reps == 1 and not ranks else None  # one Pearson's r: its data, for the gate
            out[name] = UnitValues(full, np.asarray(texts, dtype=bool), pairs=pairs)
    for name, (units, per_rep) in error_ratios(table).items():
        texts, values = error_ratio_units(units, per_rep)
        if values.size:
            full = np.full(texts.size, np.nan)
            full[texts] = values
            out[name] = UnitValues(full, texts, bounds_if_inside(RATE, full))
    return out


def judge_inference(table: Mapping[str, np.ndarray], *, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Every metric of :func:`~biaslab.probes.fsb_judge.metrics.judge_metrics` (its values) with its interval
    over rated texts, and the correlations' p values against 0 (module docstring)."""
    human, judge, evaluated = _scores(table)
    metrics = {
        "pearson_r": _correlation(human, judge, evaluated, False, seed),
        "spearman_r": _correlation(human, judge, evaluated, True, seed),
    }
    for name, (units, per_rep) in error_ratios(table).items():
        metrics[name] = _error_ratio(units, per_rep, seed)
    keep_defined_values(metrics, judge_metrics(table))
    for m in metrics.values():
        m["unit"] = UNIT
    return metrics
