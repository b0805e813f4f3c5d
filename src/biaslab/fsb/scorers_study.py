"""``fsb scorers``: how well automatic scorers agree with human best-worst-scaling scores.

Each scorer rates every text; over the texts it gave a finite score, the study reports Pearson's r
and Spearman's rho with the human scores, the mean absolute error after the linear fit ``human ~ a +
b * scorer`` (in human-score units, so scorers on any scale compare), and the ceiling the human
scores' own noise sets: the split-half
reliability of the annotations (Pearson between the scores of two halves of each tuple's
annotations), stepped up to the full set by Spearman-Brown, ``R = 2 r / (1 + r)``; a scorer that
measured the underlying quantity perfectly would correlate about ``sqrt(R)`` with the scores.

Intervals (:func:`scorer_summary`). A **text** is the unit: each carries one human and one scorer score,
and texts are independent.

* ``pearson`` and ``spearman`` (range -1 to 1, null 0: the scorer unrelated to people): interval and p from
  Fisher's z (:func:`biaslab.stats.correlation.pearson_inference`; rho is Pearson's r of the average ranks,
  for which Fisher's z is the usual approximation), so the interval excludes 0 exactly when p < 0.05.
* ``mae_fit`` (0 or more; no null): the mean of the texts' values ``|e_i| + c' x_i e_i`` (:func:`mae_fit_units`:
  ``e_i`` the fit's residuals, ``x_i = (1, scorer_i)``; the second term is the influence of the fitted line
  on the MAE, and it sums to 0, so the values' mean is the MAE exactly), with its interval from
  :func:`biaslab.stats.clustered.cluster_inference` over texts (the cluster-robust t with 30 or more
  informative texts, the exact sign-flip test inverted with fewer; none under 6).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import rankdata

from biaslab.stats.clustered import cluster_inference
from biaslab.stats.correlation import pearson, pearson_inference

__all__ = ["ScoredTexts", "agreement", "fit_line", "ceiling_from_split_half", "mae_fit_units", "scorer_summary"]


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


def mae_fit_units(human: np.ndarray, scorer: np.ndarray) -> np.ndarray:
    """Values whose mean is the MAE after the least-squares line ``human ~ a + b scorer``: each text's absolute
    residual plus the fitted line's influence on the MAE (module docstring). With a constant scorer the line is
    the mean (the intercept alone)."""
    h, s = np.asarray(human, dtype=float), np.asarray(scorer, dtype=float)
    a, b = fit_line(s, h)
    e = h - (a + b * s)
    x = np.column_stack([np.ones_like(s), s]) if np.ptp(s) > 0 else np.ones((s.size, 1))
    g = -np.mean(np.sign(e)[:, None] * x, axis=0)  # the MAE's gradient in the line's coefficients
    c = np.linalg.solve(x.T @ x / s.size, g)
    return np.abs(e) + (x @ c) * e


def scorer_summary(human: np.ndarray, scores: Sequence[float], *, seed: int = 0) -> dict[str, Any]:
    """Agreement of one scorer's scores with ``human`` over the texts with a finite score, each with its interval
    (and the correlations with their p against 0) over texts (module docstring)."""
    human = np.asarray(human, dtype=float)
    s = np.asarray(scores, dtype=float)
    ok = np.isfinite(s)
    h, s = human[ok], s[ok]
    point = agreement({"human": h, "scorer": s})
    pearson_m = pearson_inference(h, s, label="texts")
    spearman_m = pearson_inference(rankdata(h), rankdata(s), label="texts")
    spearman_m["value"] = None if not math.isfinite(point["spearman"]) else point["spearman"]
    if h.size:
        mae = cluster_inference(mae_fit_units(h, s), None, null=None, label="texts", seed=seed)
        mae["value"] = point["mae_fit"]
        if mae.get("ci_low") is not None:  # an MAE is never below 0
            mae.update(ci_low=max(0.0, float(mae["ci_low"])), ci_high=max(float(mae["ci_high"]), point["mae_fit"]))
    else:
        mae = {"value": None, "ci_low": None, "ci_high": None, "n": 0, "reason": "no text has a finite score"}
    intercept, slope = fit_line(s, h)
    return {
        "n": int(h.size),
        "n_missing": int((~ok).sum()),
        "pearson": pearson_m,
        "spearman": spearman_m,
        "mae_fit": mae,
        "fit": {
            "intercept": intercept if math.isfinite(intercept) else None,
            "slope": slope if math.isfinite(slope) else None,
        },
        "scorer_range": [float(s.min()), float(s.max())] if s.size else None,
    }
