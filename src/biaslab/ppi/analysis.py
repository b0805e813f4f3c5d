"""``biaslab ppi``'s analysis: join the judge's scores (PRED) and the people's (GOLD) on id, then the
prediction-powered mean overall and per group, and the differences between groups
(:mod:`biaslab.stats.ppi`), as one JSON-ready dict.

* Every GOLD id must be in PRED (the judge scores every item, the gold ones too).
* An item the judge gave no usable score (an fsb-judge item undetected in every repetition, an empty
  PRED cell) gets the mean of the judge's other scores as its prediction. PPI stays valid whatever
  the prediction is -- the gold items' human-minus-judge differences correct it -- so the target
  stays the mean over *all* judged items; imputed items only weaken the judge. They are counted.
* The gold items must be a uniformly random sample of the judged items (of each group's, with
  ``--by``). That cannot be proven from the data, but a gold set chosen by score usually shows: when
  the judge's mean on the gold items differs from its mean on the others with p < 0.001 (normal
  test), a warning says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from biaslab.errors import DataError
from biaslab.ppi.inputs import ScoreTable
from biaslab.stats.ppi import TARGETS, PPIEstimate, group_differences, ppi_mean, two_sided_p

MIN_GOLD = 10
SELECTION_ALPHA = 0.001
TARGET_TEXT = {
    "items": "the mean human score over the judged items (as if people had rated all of them); "
    "finite-population variance",
    "population": "the mean human score in the population the judged items were drawn from (items i.i.d., as in "
    "the PPI papers)",
}
EFFECTIVE_N_TEXT = (
    "the number of human-scored items the humans-only estimate would need for an interval as narrow "
    "as the prediction-powered one (same target)"
)


def _method(lam: float | None) -> str:
    if lam is None:
        return (
            "PPI++: prediction-powered inference with the power-tuned weight lambda (Angelopoulos, Duchi & Zrnic "
            "2023), Student t intervals (module biaslab.stats.ppi: degrees of freedom from the gold items, the "
            "tuned weight's own error included)"
        )
    return (
        f"prediction-powered inference (Angelopoulos et al., Science 2023) with fixed lambda = {lam:g}, "
        "Student t intervals (degrees of freedom from the gold items)"
    )


def _estimate_dict(e: PPIEstimate, judge: np.ndarray) -> dict[str, Any]:
    return {
        "estimate": e.ppi.estimate,
        "se": e.ppi.se,
        "ci_low": e.ppi.ci_low,
        "ci_high": e.ppi.ci_high,
        "df": e.ppi.df,
        "lambda": e.lam,
        "n_pred": e.n_pred,
        "n_gold": e.n_gold,
        "n_unlabelled": e.n_unlabelled,
        "classical": e.classical.as_dict(),
        "effective_n": e.effective_n,
        "effective_n_gain": e.effective_n - e.n_gold,
        "width_ratio": e.width_ratio,
        "judge_mean": float(np.mean(judge)),
    }


def _gold_judge_r(y: np.ndarray, f: np.ndarray) -> float:
    if y.size < 3 or np.std(y) == 0 or np.std(f) == 0:
        return math.nan
    return float(np.corrcoef(y, f)[0, 1])


def _selection_p(f_gold: np.ndarray, f_unl: np.ndarray) -> float:
    """Normal two-sided p of mean judge score on the gold items vs on the others."""
    if f_gold.size < 2 or f_unl.size < 2:
        return math.nan
    se = math.sqrt(np.var(f_gold, ddof=1) / f_gold.size + np.var(f_unl, ddof=1) / f_unl.size)
    return two_sided_p(float(np.mean(f_gold) - np.mean(f_unl)), se)


def join(pred: ScoreTable, gold: ScoreTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(judge scores of every PRED item, imputed where missing; gold mask; human score per PRED item
    (NaN off gold); number imputed)``."""
    pos = {item: k for k, item in enumerate(pred.ids)}
    missing = [item for item in gold.ids if item not in pos]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise DataError(
            f"{len(missing)} of the {len(gold.ids)} GOLD id(s) are not in PRED ({shown}); the judge "
            f"must score every item, the gold ones too (PRED {pred.source} has {len(pred.ids)} ids)"
        )
    judge = pred.scores.astype(float).copy()
    usable = np.isfinite(judge)
    if not usable.any():
        raise DataError(f"PRED {pred.source}: no item has a usable judge score")
    n_imputed = int((~usable).sum())
    judge[~usable] = float(np.mean(judge[usable]))
    human = np.full(len(pred.ids), np.nan)
    is_gold = np.zeros(len(pred.ids), dtype=bool)
    for item, y in zip(gold.ids, gold.scores):
        human[pos[item]] = y
        is_gold[pos[item]] = True
    return judge, is_gold, human, n_imputed


def _assign_groups(pred: ScoreTable, groups: Mapping[str, str] | None, by: str) -> np.ndarray:
    if pred.groups is not None:
        return np.array(pred.groups, dtype=object)
    if groups is None:
        raise DataError(f"--by {by}: PRED {pred.source} has no such column; give the groups with --groups FILE")
    missing = [item for item in pred.ids if item not in groups]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise DataError(
            f"--groups: {len(missing)} PRED id(s) have no {by!r} in the groups file ({shown}); "
            "every judged item needs a group"
        )
    return np.array([groups[item] for item in pred.ids], dtype=object)


def _too_few(n: int, what: str, min_gold: int) -> DataError:
    return DataError(
        f"too few gold items {what}: {n} with a human score, at least {min_gold} needed for a usable "
        "interval; rate more items (or lower --min-gold, at least 2)"
    )


def analyse(
    pred: ScoreTable,
    gold: ScoreTable,
    *,
    by: str | None = None,
    groups: Mapping[str, str] | None = None,
    lam: float | None = None,
    target: str = "items",
    confidence: float = 0.95,
    min_gold: int = MIN_GOLD,
) -> dict[str, Any]:
    """The JSON-ready result of ``biaslab ppi`` (keys listed in docs/ppi.md)."""
    if target not in TARGETS:
        raise DataError(f"unknown target {target!r}; use {' or '.join(TARGETS)}")
    min_gold = max(2, int(min_gold))
    judge, is_gold, human, n_imputed = join(pred, gold)
    if is_gold.sum() < min_gold:
        raise _too_few(int(is_gold.sum()), "in GOLD (matched to PRED)", min_gold)

    def estimate(mask: np.ndarray) -> PPIEstimate:
        g, u = mask & is_gold, mask & ~is_gold
        return ppi_mean(human[g], judge[g], judge[u], lam=lam, target=target, confidence=confidence)

    everything = np.ones(judge.size, dtype=bool)
    overall = estimate(everything)
    warnings: list[str] = []
    if n_imputed:
        warnings.append(
            f"{n_imputed} judged item(s) had no usable judge score; their prediction is the judge's "
            "mean score (still valid, less informative)"
        )
    if overall.n_unlabelled == 0:
        warnings.append(
            "every judged item has a human score: the judge has nothing to add"
            + ("; the mean over these items is known exactly" if target == "items" else "")
        )
    sel_p = _selection_p(judge[is_gold], judge[~is_gold])
    if sel_p < SELECTION_ALPHA:
        warnings.append(
            f"the judge's mean on the gold items ({np.mean(judge[is_gold]):.3f}) differs from its mean on "
            f"the others ({np.mean(judge[~is_gold]):.3f}), p = {sel_p:.2g}: were the gold items drawn at "
            "random? The interval assumes they were"
        )
    out: dict[str, Any] = {
        "method": _method(lam),
        "target": target,
        "target_description": TARGET_TEXT[target],
        "confidence": confidence,
        **_estimate_dict(overall, judge),
        "effective_n_definition": EFFECTIVE_N_TEXT,
        "n_pred_imputed": n_imputed,
        "gold_judge_r": _gold_judge_r(human[is_gold], judge[is_gold]),
        "gold_selection_p": sel_p,
        "pred": pred.describe(),
        "gold": gold.describe(),
        "by": by,
        "groups": [],
        "differences": [],
        "correction": None,
        "warnings": warnings,
    }
    if by is None:
        return out
    group_of = _assign_groups(pred, groups, by)
    names = sorted(set(group_of.tolist()), key=_natural)
    per_group: dict[str, PPIEstimate] = {}
    for name in names:
        mask = group_of == name
        n_g = int((mask & is_gold).sum())
        if n_g < min_gold:
            raise _too_few(n_g, f"in group {by}={name!r} ({int(mask.sum())} judged)", min_gold)
        per_group[name] = estimate(mask)
        out["groups"].append({"group": name, **_estimate_dict(per_group[name], judge[mask])})
    diffs = group_differences(per_group, confidence)
    out["differences"] = [
        {
            "a": d.a,
            "b": d.b,
            **d.ppi.as_dict(),
            "df": d.ppi.df,
            "p": d.p,
            "p_holm": d.p_holm,
            "classical": {**d.classical.as_dict(), "p": d.classical_p, "p_holm": d.classical_p_holm},
        }
        for d in diffs
    ]
    m = len(diffs)
    if m == 1:
        out["correction"] = "one difference a - b: no multiple-comparison correction (p_holm = p)"
    elif m > 1:
        out["correction"] = (
            f"Holm-adjusted p values (p_holm) and Bonferroni intervals (each at "
            f"{100 * (1 - (1 - confidence) / m):.4g}%) over the {m} pairwise differences a - b, "
            f"so that all {m} intervals hold together with at least {100 * confidence:g}%"
        )
    return out


def _natural(name: str) -> tuple:
    try:
        return (0, float(name), name)
    except ValueError:
        return (1, 0.0, name)
