"""Agreement of a judge's degree-of-bias ratings with human BWS scores.

Per repetition, over the items evaluated in it (its in-context examples are not): Pearson's r,
Spearman's rho (average ranks for ties), mean squared and absolute error, the share of answers
with no usable score, and the mean absolute error within each human-score bin of width 0.25.
Undetected answers are left out of the agreement metrics and counted in ``undetected_rate``.
The reported value of each metric is its mean over the repetitions in which it is defined (the
paper's Table 6 reports means over 5 draws of in-context examples).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import rankdata

from biaslab.stats.correlation import pearson

N_BINS = 4  # in-context example bins and error bins: [0, .25), [.25, .5), [.5, .75), [.75, 1]
BIN_LABELS = ("[0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1]")
BIN_METRICS = ("mae_bin_0_25", "mae_bin_25_50", "mae_bin_50_75", "mae_bin_75_100")
METRICS = ("pearson_r", "spearman_r", "mse", "mae", "undetected_rate") + BIN_METRICS


def score_bin(score: float) -> int:
    """0..3 for [0, 0.25), [0.25, 0.5), [0.5, 0.75), [0.75, 1] (1.0 falls in the last bin)."""
    return min(int(math.floor(score * N_BINS)), N_BINS - 1)


def repetition_metrics(human: np.ndarray, judge: np.ndarray) -> dict[str, float]:
    """Metrics of one repetition; ``judge`` is NaN where the answer was undetected."""
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    nan = float("nan")
    if human.size == 0:
        return dict.fromkeys(METRICS, nan)
    detected = np.isfinite(judge)
    h, j = human[detected], judge[detected]
    err = j - h
    out = {
        "pearson_r": pearson(h, j),
        "spearman_r": pearson(rankdata(h), rankdata(j)) if h.size else nan,
        "mse": float(np.mean(err**2)) if h.size else nan,
        "mae": float(np.mean(np.abs(err))) if h.size else nan,
        "undetected_rate": float(1.0 - detected.mean()),
    }
    bins = np.minimum(np.floor(h * N_BINS), N_BINS - 1)
    for b, name in enumerate(BIN_METRICS):
        in_bin = bins == b
        out[name] = float(np.mean(np.abs(err[in_bin]))) if in_bin.any() else nan
    return out


def per_repetition(table: Mapping[str, np.ndarray]) -> list[dict[str, float]]:
    """``repetition_metrics`` for every column of the item table."""
    human, judge, evaluated = (np.asarray(table[k]) for k in ("human", "judge", "evaluated"))
    n_reps = judge.shape[1] if judge.ndim == 2 else 0
    return [repetition_metrics(human[evaluated[:, r]], judge[evaluated[:, r], r]) for r in range(n_reps)]


def mean_defined(values: Sequence[float]) -> float:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def judge_metrics(table: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Means over repetitions of the per-repetition metrics (the bootstrap's metric function)."""
    reps = per_repetition(table)
    return {name: mean_defined([r[name] for r in reps]) for name in METRICS}


def item_table(rows: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """One row per item from attempt rows (``item_id, human_score, judge_score, repetition``):
    ``human`` (n,), ``judge`` (n, R) with NaN where undetected or not evaluated, ``evaluated`` (n, R)."""
    ids = list(dict.fromkeys(r["item_id"] for r in rows))
    reps = repetitions_of(rows)
    col = {rep: k for k, rep in enumerate(reps)}
    pos = {item_id: k for k, item_id in enumerate(ids)}
    human = np.full(len(ids), np.nan)
    judge = np.full((len(ids), len(reps)), np.nan)
    evaluated = np.zeros((len(ids), len(reps)), dtype=bool)
    for r in rows:
        i, c = pos[r["item_id"]], col[int(r["repetition"])]
        human[i] = float(r["human_score"])
        evaluated[i, c] = True
        if r.get("judge_score") is not None:
            judge[i, c] = float(r["judge_score"])
    return {"item_id": np.array(ids, dtype=object), "human": human, "judge": judge, "evaluated": evaluated}


def repetitions_of(rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """The repetition numbers of the columns of :func:`item_table`."""
    return sorted({int(r["repetition"]) for r in rows})
