"""``fsb scorers``: how well automatic scorers agree with human best-worst-scaling scores.

Each scorer rates every text; over the texts it gave a finite score, the study reports Pearson's r
and Spearman's rho with the human scores (95% percentile bootstrap CIs resampling texts, paired),
the mean absolute error after the linear fit ``human ~ a + b * scorer`` (in human-score units, so
scorers on any scale compare), and the ceiling the human scores' own noise sets: the split-half
reliability of the annotations (Pearson between the scores of two halves of each tuple's
annotations), stepped up to the full set by Spearman-Brown, ``R = 2 r / (1 + r)``; a scorer that
measured the underlying quantity perfectly would correlate about ``sqrt(R)`` with the scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import rankdata

from biaslab.stats.bootstrap import bootstrap_metrics
from biaslab.stats.correlation import pearson

__all__ = ["ScoredTexts", "agreement", "fit_line", "ceiling_from_split_half", "scorer_summary"]


@dataclass(frozen=True)
class ScoredTexts:
    """The rated texts: ids, texts and human scores, in one order."""

    ids: list[str]
    texts: list[str]
    human: np.ndarray
    source: dict[str, Any] = field(default_factory=dict)


def fit_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares ``(intercept, slope)`` of ``y ~ a + b x``; slope 0 when ``x`` is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    dx = x - x.mean()
    ss = float((dx**2).sum())
    slope = float((dx * (y - y.mean())).sum() / ss) if ss > 0 else 0.0
    return float(y.mean() - slope * x.mean()), slope


def agreement(table: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Pearson, Spearman (average ranks) and the MAE after a linear fit of human on scorer."""
    h, s = np.asarray(table["human"], dtype=float), np.asarray(table["scorer"], dtype=float)
    a, b = fit_line(s, h)
    return {
        "pearson": pearson(h, s),
        "spearman": pearson(rankdata(h), rankdata(s)) if h.size >= 2 else math.nan,
        "mae_fit": float(np.mean(np.abs(h - (a + b * s)))) if h.size else math.nan,
    }


def ceiling_from_split_half(r_half: float) -> float:
    """``sqrt(2 r / (1 + r))``: the correlation a perfect scorer would reach with the full-data scores."""
    if not math.isfinite(r_half) or r_half <= 0:
        return math.nan
    return math.sqrt(2 * r_half / (1 + r_half))


def scorer_summary(
    human: np.ndarray, scores: Sequence[float], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Agreement of one scorer's scores with ``human`` over the texts with a finite score."""
    from scipy.stats import pearsonr, spearmanr

    human = np.asarray(human, dtype=float)
    s = np.asarray(scores, dtype=float)
    ok = np.isfinite(s)
    h, s = human[ok], s[ok]
    metrics = bootstrap_metrics({"human": h, "scorer": s}, agreement, n_resamples=n_resamples, seed=seed)
    intercept, slope = fit_line(s, h)
    defined = h.size > 2 and np.ptp(s) > 0
    p_pearson = float(pearsonr(h, s).pvalue) if defined else None
    p_spearman = float(spearmanr(h, s).pvalue) if defined else None
    return {
        "n": int(h.size),
        "n_missing": int((~ok).sum()),
        "pearson": {**metrics["pearson"], "p": p_pearson},
        "spearman": {**metrics["spearman"], "p": p_spearman},
        "mae_fit": metrics["mae_fit"],
        "fit": {
            "intercept": intercept if math.isfinite(intercept) else None,
            "slope": slope if math.isfinite(slope) else None,
        },
        "scorer_range": [float(s.min()), float(s.max())] if s.size else None,
    }
