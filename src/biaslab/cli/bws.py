"""``biaslab bws ...``: design best-worst tuples, score annotations, measure split-half reliability
(:mod:`biaslab.bws.run`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from biaslab.cli.common import console, new_app
from biaslab.errors import ConfigError

app = new_app(
    "bws",
    "Best-worst scaling: design 4-tuples for N items, score best/worst annotations (counting or "
    "Bradley-Terry, with a 95% interval per item or the reason there is none), and measure split-half "
    "reliability.",
)

LAYOUT = (
    "Layout: one row per annotation, columns Item1..Item4 (ids shown), BestItem, WorstItem; other columns are ignored."
)


class Method(StrEnum):
    counting = "counting"
    bradley_terry = "bradley-terry"


class Interval(StrEnum):
    score = "score"
    bootstrap = "bootstrap"


@app.command("design")
def design_cmd(
    items: Path = typer.Option(..., "--items", help="CSV/TSV of the items, with an id column (and usually text)."),
    out: Path = typer.Option(..., "--out", help="Where to write the tuples (CSV with columns Item1..ItemK)."),
    tuple_size: int = typer.Option(4, "--tuple-size", help="Items per tuple (4 is the usual, most efficient size)."),
    appearances: int = typer.Option(8, "--appearances", help="Tuples each item appears in (8 gives 2N 4-tuples)."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same items and seed give the same tuples."),
    attempts: int = typer.Option(100, "--attempts", help="Random designs tried; the most balanced one is kept."),
    id_column: str | None = typer.Option(
        None, "--id-column", help="Name of the id column in --items (default: the first of id, uid, item_id, item)."
    ),
) -> None:
    """Make best-worst tuples (Kiritchenko & Mohammad), with guarantees the original script lacks.

    Each attempt cuts random permutations of the items into tuples and repairs them by swapping
    items so that no tuple repeats an item, every item appears exactly --appearances times and no
    two tuples share more than 2 items. Of --attempts attempts the one whose item-pair
    co-occurrence counts vary least is written. Prints the design's quality.
    """
    from biaslab.bws.run import design_file

    q = design_file(
        items, out, id_column=id_column, tuple_size=tuple_size, appearances=appearances, seed=seed, attempts=attempts
    )
    c = console()
    c.print(
        f"[bold]{q.n_tuples}[/] tuples of {q.tuple_size} for {q.n_items} items, each item {q.appearances} times "
        f"(seed {seed}; the most balanced of {q.attempts} valid attempts)"
    )
    c.print(
        f"item pairs: co-occurrence SD {q.pair_sd:.4f}, at most {q.pair_max} tuples per pair, "
        f"{100 * q.pairs_covered:.2f}% of pairs meet; tuples share at most {q.max_overlap} items"
    )
    c.print(f"wrote {out}")


@app.command("score")
def score_cmd(
    annotations: Path = typer.Option(..., "--annotations", help="Annotations CSV/TSV. " + LAYOUT),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Scores CSV: id, score, score_normalized, n_best, n_worst, "
        "n_appearances[, component], ci_low, ci_high, interval, note.",
    ),
    method: Method = typer.Option(
        Method.counting,
        "--method",
        help="counting: best% - worst% per item, in [-1, 1]; "
        "bradley-terry: MAP log-strengths of the implied pairwise outcomes.",
    ),
    ci: Interval = typer.Option(
        Interval.score,
        "--ci",
        help="counting only: score = each item's interval from its "
        "appearances (best, worst or neither each time); bootstrap = resample tuples "
        "(an item whose bootstrap has no spread gets its score interval).",
    ),
    resamples: int | None = typer.Option(
        None,
        "--resamples",
        help="Bootstrap resamples of tuples (--ci bootstrap: "
        "default 1000; bradley-terry: default 200); 0 = no CIs at all.",
    ),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the intervals."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    decimals: int | None = typer.Option(
        None,
        "--decimals",
        help="Round counting scores to this many decimals "
        "(score_normalized is then computed from the rounded score, like the "
        "Fifty Shades of Bias release with --decimals 3).",
    ),
    alpha: float = typer.Option(
        0.01,
        "--alpha",
        help="bradley-terry only: strength of the Gaussian penalty "
        "alpha * sum(theta^2) that keeps always-best items finite.",
    ),
    items: Path | None = typer.Option(
        None,
        "--items",
        help="Optional items file: every annotated id must be in it; items never annotated are reported.",
    ),
    id_column: str | None = typer.Option(
        None, "--id-column", help="Id column of --items (default: the first of id, uid, item_id, item)."
    ),
) -> None:
    """Score best-worst annotations, with a 95% interval per item (or a note saying why there is none).

    Items with fewer than 2 appearances get no interval ("too few judgements"). Bradley-Terry on a
    comparison graph that falls apart into components scores each component on its own scale and
    says which items are in which: scores compare only within a component.
    """
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
    fitting = (
        c.status(f"fitting Bradley-Terry ({n_res} bootstrap refits)")
        if method is Method.bradley_terry
        else nullcontext()
    )
    with fitting:
        run = score_annotations_file(
            annotations,
            out,
            method=method.value,
            resamples=resamples,
            confidence=confidence,
            seed=seed,
            decimals=decimals,
            alpha=alpha,
            items=items,
            id_column=id_column,
            ci=ci.value,
        )
    scores, data, never = run.scores, run.data, run.never_annotated
    how = {
        "score": "intervals from each item's appearances",
        "none": "no intervals",
        "bootstrap": f"{n_res} bootstrap resamples of tuples, seed {seed}",
    }[run.ci]
    c.print(
        f"[bold]{method.value}[/]: {data.n_items} items from {data.n_annotations} annotations of "
        f"{data.n_tuples} tuples; appearances per item {int(scores.n_appearances.min())}-"
        f"{int(scores.n_appearances.max())}; {how}"
    )
    few = scores[scores["note"].astype(str).str.startswith("too few")] if "note" in scores else scores.iloc[:0]
    if len(few):
        c.print(
            f"[yellow]{len(few)} item(s) have no interval[/]: too few judgements (the note column says why): "
            f"{', '.join(few['id'].astype(str)[:10])}{' ...' if len(few) > 10 else ''}"
        )
    if run.components and len(run.components) > 1:
        parts = run.components
        c.print(
            f"[bold red]the comparison graph is disconnected[/]: {len(parts)} components "
            f"({', '.join(str(len(p)) for p in parts)} items); nothing links their scores, so each component "
            "has its own scale (column component) and no ranking across components means anything"
        )
        for k, part in enumerate(parts[1:6], start=2):
            c.print(f"  component {k}: {', '.join(part[:10])}{' ...' if len(part) > 10 else ''}")
        if len(parts) > 6:
            c.print(f"  ... and {len(parts) - 6} more components (see the component column)")
    if never:
        c.print(
            f"[yellow]{len(never)} item(s) of {items} were never annotated[/] (no score): "
            f"{', '.join(never[:10])}{' ...' if len(never) > 10 else ''}"
        )
    c.print(f"wrote {out}")


@app.command("reliability")
def reliability_cmd(
    annotations: Path = typer.Option(..., "--annotations", help="Annotations CSV/TSV. " + LAYOUT),
    trials: int = typer.Option(100, "--trials", help="Random split-halves to average over."),
    seed: int = typer.Option(0, "--seed", help="Random seed of the splits."),
    out: Path | None = typer.Option(
        None, "--out", help="Also write {pearson: {mean, sd}, spearman: {mean, sd}, trials, seed} as JSON here."
    ),
) -> None:
    """Split-half reliability: split each tuple's annotations in two halves, score each half by
    counting, correlate the halves' scores (Pearson and Spearman); mean and SD over --trials.

    With an odd number of annotations the extra one goes to either half with probability 0.5.
    Needs at least 2 annotations for most tuples to be meaningful.
    """
    from biaslab.bws.run import reliability_file

    if trials < 1:
        raise ConfigError(f"--trials must be at least 1, got {trials}")
    from biaslab.bws.reliability import format_mean_sd

    run = reliability_file(annotations, trials=trials, seed=seed, out=out)
    rel, data = run.reliability, run.data
    c = console()
    per_tuple = data.n_annotations / data.n_tuples
    c.print(
        f"split-half reliability of {data.n_annotations} annotations ({data.n_tuples} tuples, "
        f"{per_tuple:.2f} annotations per tuple, {rel.tuples_with_2_or_more} with two or more, "
        f"{data.n_items} items), {trials} trials, seed {seed} (mean +- SD over the random splits):"
    )
    c.print(f"  Pearson  {format_mean_sd(rel.pearson_mean, rel.pearson_sd, rel.reason)}")
    c.print(f"  Spearman {format_mean_sd(rel.spearman_mean, rel.spearman_sd, rel.reason)}")
    if out is not None:
        c.print(f"wrote {out}")
