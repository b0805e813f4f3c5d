"""Split-half reliability (SHR) of best-worst annotations.

One trial: within every tuple, shuffle its annotations and split them into two halves of
``floor(n/2)`` each; with an odd ``n`` the one left over goes to the first half with probability
0.5, else to the second. Each half is scored by counting and the two score vectors are correlated
over the items scored in both halves (Pearson, and Spearman with average ranks for ties). The
result is the mean and standard deviation (ddof 0) of each correlation over the trials; all
randomness comes from one seeded generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from biaslab.bws.data import BwsData
from biaslab.bws.score import counting_scores
from biaslab.stats.correlation import pearson as _pearson

__all__ = ["split_half_reliability", "Reliability", "split_masks"]


@dataclass(frozen=True)
class Reliability:
    pearson_mean: float
    pearson_sd: float
    spearman_mean: float
    spearman_sd: float
    trials: int
    seed: int
    pearson: tuple[float, ...]  # per trial
    spearman: tuple[float, ...]

    def as_dict(self) -> dict:
        """The JSON layout of ``biaslab bws reliability --out``."""
        return {"pearson": {"mean": _none(self.pearson_mean), "sd": _none(self.pearson_sd)},
                "spearman": {"mean": _none(self.spearman_mean), "sd": _none(self.spearman_sd)},
                "trials": self.trials, "seed": self.seed}


def _none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def split_masks(data: BwsData, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask of the annotations in the first half (the rest form the second)."""
    a = data.n_annotations
    order = np.lexsort((rng.random(a), data.tuple_of))  # grouped by tuple, shuffled within
    tuples = data.tuple_of[order]
    size = np.bincount(data.tuple_of, minlength=data.n_tuples)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    rank = np.arange(a) - start[tuples]  # position within the shuffled tuple
    half = size[tuples] // 2
    coin = rng.random(data.n_tuples) < 0.5  # per tuple: the odd one out goes to the first half
    first_sorted = (rank < half) | ((rank == 2 * half) & coin[tuples])
    first = np.empty(a, dtype=bool)
    first[order] = first_sorted
    return first


def _half_scores(data: BwsData, mask: np.ndarray) -> np.ndarray:
    nb, nw, na = counting_scores(data, mask)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(na > 0, (nb - nw) / na, np.nan)


def split_half_reliability(data: BwsData, *, trials: int = 100, seed: int = 0) -> Reliability:
    """Mean and SD over ``trials`` of the split-half Pearson and Spearman correlations."""
    rng = np.random.default_rng(seed)
    pearson, spearman = [], []
    for _ in range(trials):
        first = split_masks(data, rng)
        s1, s2 = _half_scores(data, first), _half_scores(data, ~first)
        ok = np.isfinite(s1) & np.isfinite(s2)
        x, y = s1[ok], s2[ok]
        pearson.append(_pearson(x, y))
        spearman.append(_pearson(rankdata(x), rankdata(y)) if x.size >= 2 else math.nan)

    def stats(values: list[float]) -> tuple[float, float]:
        arr = np.asarray(values, dtype=float)
        arr = arr[np.isfinite(arr)]
        return (float(arr.mean()), float(arr.std())) if arr.size else (math.nan, math.nan)

    pm, ps = stats(pearson)
    sm, ss = stats(spearman)
    return Reliability(pm, ps, sm, ss, trials, seed, tuple(pearson), tuple(spearman))
