"""``biaslab ppi``: the mean human score from a judge's scores on every item and people's scores on a
random subset, by prediction-powered inference (:mod:`biaslab.ppi`, :mod:`biaslab.stats.ppi`)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer

from biaslab.cli.common import console
from biaslab.errors import ConfigError


class PredFormat(StrEnum):
    auto = "auto"
    csv = "csv"
    bws = "bws"
    fsb_judge = "fsb-judge"


class GoldFormat(StrEnum):
    auto = "auto"
    csv = "csv"
    bws = "bws"


class Target(StrEnum):
    items = "items"
    population = "population"


def ppi(
    pred: Path = typer.Option(
        ...,
        "--pred",
        help="The judge's scores of every item: a CSV id,score[,group], a "
        "finished `biaslab run fsb-judge` folder (or its attempts.jsonl), or a `biaslab bws "
        "score` output.",
    ),
    gold: Path = typer.Option(
        ...,
        "--gold",
        help="People's scores of a random subset of those items: a CSV id,score "
        "or a `biaslab bws score` output (its score_normalized).",
    ),
    by: str | None = typer.Option(
        None,
        "--by",
        help="Also estimate per group of this PRED column (or --groups "
        "column), with the pairwise differences (Holm/Bonferroni-corrected).",
    ),
    groups: Path | None = typer.Option(
        None,
        "--groups",
        help="A table with an id column and the --by column, for "
        "PRED files without it (e.g. FSB_text.csv for an fsb-judge run).",
    ),
    pred_format: PredFormat = typer.Option(
        PredFormat.auto,
        "--pred-format",
        help="How to read --pred (auto: a "
        "folder or .jsonl is an fsb-judge run, a table with score_normalized a BWS "
        "output, else a CSV).",
    ),
    gold_format: GoldFormat = typer.Option(
        GoldFormat.auto, "--gold-format", help="How to read --gold (auto as for --pred)."
    ),
    pred_column: str | None = typer.Option(
        None,
        "--pred-column",
        help="Score column of a --pred table (default: score; score_normalized for a BWS output).",
    ),
    gold_column: str | None = typer.Option(
        None,
        "--gold-column",
        help="Score column of the --gold table (default: score; score_normalized for a BWS output).",
    ),
    target: Target = typer.Option(
        Target.items,
        "--target",
        help="items: the mean over the judged items (finite "
        "population); population: over the population they were sampled from (wider).",
    ),
    lam: float | None = typer.Option(
        None,
        "--lambda",
        help="Fix the weight of the judge instead of tuning it (PPI++): 1 is the original PPI, 0 humans only.",
    ),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the intervals."),
    min_gold: int = typer.Option(10, "--min-gold", help="Fewest gold items accepted (overall and per group)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    out: Path | None = typer.Option(None, "--out", help="Also write the JSON result to this file."),
) -> None:
    """Prediction-powered inference of the mean human score (Angelopoulos et al., Science 2023; PPI++).

    The judge's mean over every item, corrected by the human-minus-judge differences on the gold
    items, with a valid interval that is narrower than the humans-only one when the judge is
    informative (and about as wide when it is not: the judge's weight is tuned). The gold items
    must be a random sample of the judged ones. Intervals are Student t (degrees of freedom from the
    gold items); measured, they cover at least 0.94 of 95% from 30 gold items (less with very skewed
    human scores).
    """
    from biaslab.io import json_safe, write_output
    from biaslab.ppi.analysis import analyse
    from biaslab.ppi.inputs import read_groups, read_scores
    from biaslab.ppi.render import print_result

    if not 0 < confidence < 1:
        raise ConfigError(f"--confidence must be between 0 and 1, got {confidence}")
    if min_gold < 2:
        raise ConfigError(f"--min-gold must be at least 2 (a variance needs 2 scores), got {min_gold}")
    if groups is not None and by is None:
        raise ConfigError("--groups needs --by COLUMN (the column of the groups file to group by)")
    pred_scores = read_scores(
        pred, role="PRED", fmt=pred_format.value, column=pred_column, by=by if groups is None else None
    )
    gold_scores = read_scores(gold, role="GOLD", fmt=gold_format.value, column=gold_column)
    group_map = read_groups(groups, by) if groups is not None and by is not None else None
    res = json_safe(
        analyse(
            pred_scores,
            gold_scores,
            by=by,
            groups=group_map,
            lam=lam,
            target=target.value,
            confidence=confidence,
            min_gold=min_gold,
        )
    )
    text = json.dumps(res, indent=2) + "\n"
    if out is not None:
        write_output(out, text)
    if as_json:
        print(text, end="")
        return
    con = console()
    print_result(res, con)
    if out is not None:
        con.print(f"wrote {out}")
