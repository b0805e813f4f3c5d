"""``biaslab bws ...``: design best-worst tuples, score annotations, measure split-half reliability
(:mod:`biaslab.bws.run`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from biaslab.cli.common import console, new_app
from biaslab.errors import ConfigError

app = new_app("bws", "Best-worst scaling: design 4-tuples for N items, score best/worst annotations (counting or "
                     "Bradley-Terry, with bootstrap CIs), and measure split-half reliability.")

LAYOUT = ("Layout: one row per annotation, columns Item1..Item4 (ids shown), BestItem, WorstItem; other columns "
          "are ignored.")


class Method(StrEnum):
    counting = "counting"
    bradley_terry = "bradley-terry"


@app.command("design")
def design_cmd(
    items: Path = typer.Option(..., "--items", help="CSV/TSV of the items, with an id column (and usually text)."),
    out: Path = typer.Option(..., "--out", help="Where to write the tuples (CSV with columns Item1..ItemK)."),
    tuple_size: int = typer.Option(4, "--tuple-size", help="Items per tuple (4 is the usual, most efficient size)."),
    appearances: int = typer.Option(8, "--appearances", help="Tuples each item appears in (8 gives 2N 4-tuples)."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same items and seed give the same tuples."),
    attempts: int = typer.Option(100, "--attempts", help="Random designs tried; the most balanced one is kept."),
    id_column: str | None = typer.Option(None, "--id-column", help="Name of the id column in --items (default: "
                                         "the first of id, uid, item_id, item)."),
) -> None:
    """Make best-worst tuples (Kiritchenko & Mohammad), with guarantees the original script lacks.

    Each attempt cuts random permutations of the items into tuples and repairs them by swapping
    items so that no tuple repeats an item, every item appears exactly --appearances times and no
    two tuples share more than 2 items. Of --attempts attempts the one whose item-pair
    co-occurrence counts vary least is written. Prints the design's quality.
    """
    from biaslab.bws.run import design_file

    q = design_file(items, out, id_column=id_column, tuple_size=tuple_size, appearances=appearances, seed=seed,
                    attempts=attempts)
    c = console()
    c.print(f"[bold]{q.n_tuples}[/] tuples of {q.tuple_size} for {q.n_items} items, each item {q.appearances} times "
            f"(seed {seed}; the most balanced of {q.attempts} valid attempts)")
    c.print(f"item pairs: co-occurrence SD {q.pair_sd:.4f}, at most {q.pair_max} tuples per pair, "
            f"{100 * q.pairs_covered:.2f}% of pairs meet; tuples share at most {q.max_overlap} items")
    c.print(f"wrote {out}")


@app.command("score")
def score_cmd(
    annotations: Path = typer.Option(..., "--annotations", help="Annotations CSV/TSV. " + LAYOUT),
    out: Path = typer.Option(..., "--out", help="Scores CSV: id, score, score_normalized, n_best, n_worst, "
                                                "n_appearances, ci_low, ci_high."),
    method: Method = typer.Option(Method.counting, "--method", help="counting: best% - worst% per item, in [-1, 1]; "
                                  "bradley-terry: MAP log-strengths of the implied pairwise outcomes."),
    resamples: int | None = typer.Option(None, "--resamples", help="Bootstrap resamples of tuples for the CIs "
                                            "(default 1000 for counting, 200 for bradley-terry; 0 = no CIs)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the intervals."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    decimals: int | None = typer.Option(None, "--decimals", help="Round counting scores to this many decimals "
                                           "(score_normalized is then computed from the rounded score, like the "
                                           "Fifty Shades of Bias release with --decimals 3)."),
    alpha: float = typer.Option(0.01, "--alpha", help="bradley-terry only: strength of the Gaussian penalty "
                                "alpha * sum(theta^2) that keeps always-best items finite."),
    items: Path | None = typer.Option(None, "--items", help="Optional items file: every annotated id must be "
                                         "in it; items never annotated are reported."),
    id_column: str | None = typer.Option(None, "--id-column", help="Id column of --items (default: the first of "
                                         "id, uid, item_id, item)."),
) -> None:
    """Score best-worst annotations; CIs come from resampling tuples with replacement."""
    from contextlib import nullcontext

    from biaslab.bws.run import DEFAULT_RESAMPLES, score_annotations_file

    if resamples is not None and resamples < 0:
        raise ConfigError(f"--resamples must be 0 or more, got {resamples}")
    if not 0 < confidence < 1:
        raise ConfigError(f"--confidence must be between 0 and 1, got {confidence}")
    if alpha <= 0:
        raise ConfigError(f"--alpha must be positive, got {alpha}")
    c = console()
    n_res = DEFAULT_RESAMPLES[method.value] if resamples is None else resamples
    fitting = c.status(f"fitting Bradley-Terry ({n_res} bootstrap refits)") if method is Method.bradley_terry \
        else nullcontext()
    with fitting:
        run = score_annotations_file(annotations, out, method=method.value, resamples=resamples,
                                     confidence=confidence, seed=seed, decimals=decimals, alpha=alpha, items=items,
                                     id_column=id_column)
    scores, data, never = run.scores, run.data, run.never_annotated
    c.print(f"[bold]{method.value}[/]: {data.n_items} items from {data.n_annotations} annotations of "
            f"{data.n_tuples} tuples; appearances per item {int(scores.n_appearances.min())}-"
            f"{int(scores.n_appearances.max())}" + (f"; {n_res} bootstrap resamples, seed {seed}" if n_res else ""))
    if never:
        c.print(f"[yellow]{len(never)} item(s) of {items} were never annotated[/] (no score): "
                f"{', '.join(never[:10])}{' ...' if len(never) > 10 else ''}")
    c.print(f"wrote {out}")


@app.command("reliability")
def reliability_cmd(
    annotations: Path = typer.Option(..., "--annotations", help="Annotations CSV/TSV. " + LAYOUT),
    trials: int = typer.Option(100, "--trials", help="Random split-halves to average over."),
    seed: int = typer.Option(0, "--seed", help="Random seed of the splits."),
    out: Path | None = typer.Option(None, "--out", help="Also write {pearson: {mean, sd}, spearman: {mean, sd}, "
                                       "trials, seed} as JSON here."),
) -> None:
    """Split-half reliability: split each tuple's annotations in two halves, score each half by
    counting, correlate the halves' scores (Pearson and Spearman); mean and SD over --trials.

    With an odd number of annotations the extra one goes to either half with probability 0.5.
    Needs at least 2 annotations for most tuples to be meaningful.
    """
    from biaslab.bws.run import reliability_file

    if trials < 1:
        raise ConfigError(f"--trials must be at least 1, got {trials}")
    run = reliability_file(annotations, trials=trials, seed=seed, out=out)
    rel, data = run.reliability, run.data
    c = console()
    per_tuple = data.n_annotations / data.n_tuples
    c.print(f"split-half reliability of {data.n_annotations} annotations ({data.n_tuples} tuples, "
            f"{per_tuple:.2f} annotations per tuple, {data.n_items} items), {trials} trials, seed {seed}:")
    c.print(f"  Pearson  {_pm(rel.pearson_mean, rel.pearson_sd)}")
    c.print(f"  Spearman {_pm(rel.spearman_mean, rel.spearman_sd)}")
    if out is not None:
        c.print(f"wrote {out}")


def _pm(mean: float, sd: float) -> str:
    import math

    if not math.isfinite(mean):
        return "undefined (too few tuples with annotations in both halves)"
    return f"{mean:.4f} +- {sd:.4f}"
