"""Split-half reliability (SHR) of best-worst annotations.

One trial: within every tuple, shuffle its annotations and split them into two halves of
``floor(n/2)`` each; with an odd ``n`` the one left over goes to the first half with probability
0.5, else to the second. Each half is scored by counting and the two score vectors are correlated
over the items scored in both halves (Pearson, and Spearman with average ranks for ties). The
result is the mean and standard deviation (ddof 0) of each correlation over the trials -- the
spread over random splits; all randomness comes from one seeded generator.

No figure without its spread, and none from too few judgements (``reason`` says why, the means
and SDs are then NaN):

* fewer than :data:`MIN_SPLIT_TUPLES` tuples with two or more annotations: the halves share too
  few items for their correlation to mean anything;
* the correlation is undefined (a constant half, fewer than 3 items in both halves) in more than
  half of the trials;
* every trial gave the same correlation (SD 0, to rounding, over two or more trials): the splits
  cannot vary, so there is no spread to report.

With a single trial the mean is kept and the SD is NaN, with a reason (one split has no spread).
:func:`format_mean_sd` prints a mean and SD without ever rounding a real spread to ``0.0000``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from biaslab.bws.data import BwsData
from biaslab.bws.score import counting_scores
from biaslab.stats.correlation import pearson as _pearson

__all__ = ["split_half_reliability", "Reliability", "split_masks", "format_mean_sd", "MIN_SPLIT_TUPLES"]

MIN_SPLIT_TUPLES = 10  # tuples with 2+ annotations needed for a split-half figure


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
    tuples_with_2_or_more: int = 0
    reason: str | None = None  # why a mean or SD is missing (too few judgements, one trial)

    def as_dict(self) -> dict:
        """The JSON layout of ``biaslab bws reliability --out`` (``reason`` None when every figure is there)."""
        return {
            "pearson": {"mean": _none(self.pearson_mean), "sd": _none(self.pearson_sd)},
            "spearman": {"mean": _none(self.spearman_mean), "sd": _none(self.spearman_sd)},
            "trials": self.trials,
            "seed": self.seed,
            "tuples_with_2_or_more": self.tuples_with_2_or_more,
            "reason": self.reason,
        }


def format_mean_sd(mean: float | None, sd: float | None, reason: str | None = None) -> str:
    """``"0.8725 +- 0.0050"``; a spread below 0.00005 in two significant digits (``"+- 3.1e-05"``),
    never ``"+- 0.0000"``; ``reason`` (or "undefined") where a figure is missing."""
    if mean is None or not math.isfinite(mean):
        return reason or "undefined"
    if sd is None or not math.isfinite(sd):
        return f"{mean:.4f} (no spread: {reason})" if reason else f"{mean:.4f} (no spread)"
    return f"{mean:.4f} +- {sd:.4f}" if sd >= 0.00005 else f"{mean:.4f} +- {sd:.2g}"


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
        pearson.append(_pearson(x, y) if x.size >= 3 else math.nan)
        spearman.append(_pearson(rankdata(x), rankdata(y)) if x.size >= 3 else math.nan)

    def stats(values: list[float]) -> tuple[float, float]:
        arr = np.asarray(values, dtype=float)
        arr = arr[np.isfinite(arr)]
        return (float(arr.mean()), float(arr.std())) if arr.size else (math.nan, math.nan)

    pm, ps = stats(pearson)
    sm, ss = stats(spearman)
    usable = int((np.bincount(data.tuple_of, minlength=data.n_tuples) >= 2).sum())
    reason = _too_few(usable, pearson, ps, trials)
    if reason is not None:
        pm = ps = sm = ss = math.nan
    elif trials < 2:
        ps = ss = math.nan
        reason = "1 trial: one random split has no spread (use 2 or more trials)"
    return Reliability(pm, ps, sm, ss, trials, seed, tuple(pearson), tuple(spearman), usable, reason)


def _too_few(usable: int, pearson: list[float], sd: float, trials: int) -> str | None:
    """Why the annotations are too few for a split-half figure, or None."""
    if usable < MIN_SPLIT_TUPLES:
        return (
            f"too few judgements: {usable} tuple{'' if usable == 1 else 's'} with two or more annotations "
            f"(split-half reliability needs {MIN_SPLIT_TUPLES})"
        )
    defined = int(np.isfinite(np.asarray(pearson, dtype=float)).sum())
    if defined * 2 <= len(pearson):
        undefined = len(pearson) - defined
        return f"too few judgements: the halves' correlation is undefined in {undefined} of {trials} splits"
    if trials >= 2 and sd <= 1e-12:
        return f"too few judgements: all {trials} random splits gave the same correlation, so it has no spread"
    return None
