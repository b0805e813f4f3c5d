"""The ``bws`` commands on files: design tuples for an items file, score an annotations file,
measure its split-half reliability; each reads its inputs and writes its output file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from biaslab.bws.data import BwsData
from biaslab.bws.design import DesignQuality
from biaslab.bws.reliability import Reliability
from biaslab.errors import ConfigError
from biaslab.io import write_output

COUNTING = "counting"
BRADLEY_TERRY = "bradley-terry"
DEFAULT_RESAMPLES = {COUNTING: 1000, BRADLEY_TERRY: 200}
CI_METHODS = ("score", "bootstrap")  # counting scores' intervals (biaslab.bws.score)


@dataclass(frozen=True)
class ScoreRun:
    """The scores written, the annotations they came from, and the known items never annotated."""

    scores: pd.DataFrame
    data: BwsData
    n_resamples: int
    never_annotated: list[str]
    ci: str = "score"  # how the intervals were made: score, bootstrap, none
    components: list[list[str]] | None = None  # Bradley-Terry: the comparison graph's components


@dataclass(frozen=True)
class ReliabilityRun:
    reliability: Reliability
    data: BwsData


def csv_cell(value: str) -> str:
    """A CSV cell, quoted when it needs to be."""
    if any(ch in value for ch in ',"\n\r'):
        return '"' + value.replace('"', '""') + '"'
    return value


def design_file(
    items: Path,
    out: Path,
    *,
    id_column: str | None = None,
    tuple_size: int = 4,
    appearances: int = 8,
    seed: int = 0,
    attempts: int = 100,
) -> DesignQuality:
    """Design tuples for the ids of ``items`` (:func:`biaslab.bws.design.design_with_quality`) and
    write them to ``out`` as a CSV with columns Item1..ItemK; returns the design's quality."""
    from biaslab.bws.data import read_items
    from biaslab.bws.design import design_with_quality

    df = read_items(items, id_column)
    tuples, quality = design_with_quality(
        df[df.attrs["id_column"]].tolist(), tuple_size=tuple_size, appearances=appearances, seed=seed, attempts=attempts
    )
    header = ",".join(f"Item{i + 1}" for i in range(tuple_size))
    lines = [header] + [",".join(csv_cell(v) for v in t) for t in tuples]
    write_output(out, "\n".join(lines) + "\n")
    return quality


def score_annotations_file(
    annotations: Path,
    out: Path,
    *,
    method: str = COUNTING,
    resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    decimals: int | None = None,
    alpha: float = 0.01,
    items: Path | None = None,
    id_column: str | None = None,
    ci: str = "score",
) -> ScoreRun:
    """Score the annotations (``counting`` or ``bradley-terry``) and write the scores CSV to ``out``.

    Intervals: for counting, ``ci="score"`` (from each item's appearances) or ``"bootstrap"``
    (over tuples, ``resamples`` of them, default 1000); for Bradley-Terry, refits on ``resamples``
    tuple bootstraps (default 200). ``resamples=0``: no intervals. With ``items`` every annotated
    id must be one of its ids."""
    from biaslab.bws.data import check_known_ids, index_annotations, read_annotations, read_items
    from biaslab.bws.score import add_bootstrap_ci, add_score_ci, counting_frame

    if method not in DEFAULT_RESAMPLES:
        raise ConfigError(f"unknown --method {method!r}; use {COUNTING} or {BRADLEY_TERRY}")
    if ci not in CI_METHODS:
        raise ConfigError(f"unknown --ci {ci!r}; use {' or '.join(CI_METHODS)}")
    if method == BRADLEY_TERRY and ci != "score":
        raise ConfigError(
            "--ci applies to counting scores only (Bradley-Terry intervals always refit on tuple "
            "bootstraps); drop it with --method bradley-terry"
        )
    ann = read_annotations(annotations)
    never: list[str] = []
    if items is not None:
        known_items = read_items(items, id_column)
        known = known_items[known_items.attrs["id_column"]]
        check_known_ids(ann, set(known), source=str(annotations), known_source=str(items))
    data = index_annotations(ann)
    if items is not None:
        never = sorted(set(known) - set(data.ids.tolist()))
    n_res = DEFAULT_RESAMPLES[method] if resamples is None else resamples
    components = None
    if method == COUNTING:
        scores = counting_frame(data, decimals)
        if n_res and ci == "bootstrap":
            scores = add_bootstrap_ci(scores, data, n_resamples=n_res, seed=seed, confidence=confidence)
        elif n_res:
            scores = add_score_ci(scores, data, confidence=confidence)
    else:
        from biaslab.bws.bradley_terry import score_bradley_terry

        if decimals is not None:
            raise ConfigError("--decimals applies to counting scores only; drop it with --method bradley-terry")
        scores = score_bradley_terry(data, alpha=alpha, n_resamples=n_res, seed=seed, confidence=confidence)
        components = scores.attrs["components"]
    if not n_res:
        scores["ci_low"] = float("nan")
        scores["ci_high"] = float("nan")
        scores["interval"] = ""
        scores["note"] = "no intervals asked for (--resamples 0)"
    write_output(out, scores.to_csv(index=False, lineterminator="\n"))
    return ScoreRun(
        scores=scores,
        data=data,
        n_resamples=n_res,
        never_annotated=never,
        ci=("none" if not n_res else ci if method == COUNTING else "bootstrap"),
        components=components,
    )


def reliability_file(annotations: Path, *, trials: int = 100, seed: int = 0, out: Path | None = None) -> ReliabilityRun:
    """Split-half reliability of the annotations over ``trials`` random splits; with ``out`` also
    written as JSON ({pearson: {mean, sd}, spearman: {mean, sd}, trials, seed, tuples_with_2_or_more,
    reason}); ``reason`` says why a figure is missing (too few judgements), else None."""
    from biaslab.bws.data import index_annotations, read_annotations
    from biaslab.bws.reliability import split_half_reliability

    data = index_annotations(read_annotations(annotations))
    rel = split_half_reliability(data, trials=trials, seed=seed)
    if out is not None:
        write_output(out, json.dumps(rel.as_dict(), indent=2) + "\n")
    return ReliabilityRun(reliability=rel, data=data)
