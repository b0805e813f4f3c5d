"""``biaslab bws ...``: design best-worst tuples, score annotations, measure split-half reliability."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from biaslab.errors import ConfigError

app = typer.Typer(
    name="bws",
    help="Best-worst scaling: design 4-tuples for N items, score best/worst annotations (counting or "
         "Bradley-Terry, with bootstrap CIs), and measure split-half reliability.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

LAYOUT = "Layout: one row per annotation, columns Item1..Item4 (ids shown), BestItem, WorstItem; other columns are ignored."


class Method(str, Enum):
    counting = "counting"
    bradley_terry = "bradley-terry"


def _console():
    from rich.console import Console

    return Console(highlight=False)


def _write(path: Path, text: str, flag: str = "--out") -> None:
    from biaslab.probing.results import atomic_write_text

    if path.exists() and path.is_dir():
        raise ConfigError(f"{flag} {path} is a directory; pass a file name")
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise ConfigError(f"cannot write {path} ({exc.strerror or type(exc).__name__}); pass a writable {flag}") from None


@app.command("design")
def design_cmd(
    items: Path = typer.Option(..., "--items", help="CSV/TSV of the items, with an id column (and usually text)."),
    out: Path = typer.Option(..., "--out", help="Where to write the tuples (CSV with columns Item1..ItemK)."),
    tuple_size: int = typer.Option(4, "--tuple-size", help="Items per tuple (4 is the usual, most efficient size)."),
    appearances: int = typer.Option(8, "--appearances", help="Tuples each item appears in (8 gives 2N 4-tuples)."),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same items and seed give the same tuples."),
    attempts: int = typer.Option(100, "--attempts", help="Random designs tried; the most balanced one is kept."),
    id_column: str = typer.Option("id", "--id-column", help="Name of the id column in --items."),
) -> None:
    """Make best-worst tuples (Kiritchenko & Mohammad), with guarantees the original script lacks.

    Each attempt cuts random permutations of the items into tuples and repairs them by swapping
    items so that no tuple repeats an item, every item appears exactly --appearances times and no
    two tuples share more than 2 items. Of --attempts attempts the one whose item-pair
    co-occurrence counts vary least is written. Prints the design's quality.
    """
    from biaslab.bws.data import read_items
    from biaslab.bws.design import design_with_quality

    df = read_items(items, id_column)
    tuples, q = design_with_quality(df[id_column].tolist(), tuple_size=tuple_size, appearances=appearances,
                                    seed=seed, attempts=attempts)
    header = ",".join(f"Item{i + 1}" for i in range(tuple_size))
    lines = [header] + [",".join(_csv_cell(v) for v in t) for t in tuples]
    _write(out, "\n".join(lines) + "\n")
    c = _console()
    c.print(f"[bold]{q.n_tuples}[/] tuples of {q.tuple_size} for {q.n_items} items, each item {q.appearances} times "
            f"(seed {seed}; the most balanced of {q.attempts} valid attempts)")
    c.print(f"item pairs: co-occurrence SD {q.pair_sd:.4f}, at most {q.pair_max} tuples per pair, "
            f"{100 * q.pairs_covered:.2f}% of pairs meet; tuples share at most {q.max_overlap} items")
    c.print(f"wrote {out}")


def _csv_cell(value: str) -> str:
    if any(ch in value for ch in ',"\n\r'):
        return '"' + value.replace('"', '""') + '"'
    return value


@app.command("score")
def score_cmd(
    annotations: Path = typer.Option(..., "--annotations", help="Annotations CSV/TSV. " + LAYOUT),
    out: Path = typer.Option(..., "--out", help="Scores CSV: id, score, score_normalized, n_best, n_worst, "
                                                "n_appearances, ci_low, ci_high."),
    method: Method = typer.Option(Method.counting, "--method", help="counting: best% - worst% per item, in [-1, 1]; "
                                  "bradley-terry: MAP log-strengths of the implied pairwise outcomes."),
    resamples: Optional[int] = typer.Option(None, "--resamples", help="Bootstrap resamples of tuples for the CIs "
                                            "(default 1000 for counting, 200 for bradley-terry; 0 = no CIs)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the intervals."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    decimals: Optional[int] = typer.Option(None, "--decimals", help="Round counting scores to this many decimals "
                                           "(score_normalized is then computed from the rounded score, like the "
                                           "Fifty Shades of Bias release with --decimals 3)."),
    alpha: float = typer.Option(0.01, "--alpha", help="bradley-terry only: strength of the Gaussian penalty "
                                "alpha * sum(theta^2) that keeps always-best items finite."),
    items: Optional[Path] = typer.Option(None, "--items", help="Optional items file: every annotated id must be "
                                         "in it; items never annotated are reported."),
    id_column: str = typer.Option("id", "--id-column", help="Id column of --items."),
) -> None:
    """Score best-worst annotations; CIs come from resampling tuples with replacement."""
    from biaslab.bws.data import check_known_ids, index_annotations, read_annotations, read_items
    from biaslab.bws.score import _counting_frame, add_bootstrap_ci

    if resamples is not None and resamples < 0:
        raise ConfigError(f"--resamples must be 0 or more, got {resamples}")
    if not 0 < confidence < 1:
        raise ConfigError(f"--confidence must be between 0 and 1, got {confidence}")
    if alpha <= 0:
        raise ConfigError(f"--alpha must be positive, got {alpha}")
    ann = read_annotations(annotations)
    never: list[str] = []
    if items is not None:
        known = read_items(items, id_column)[id_column]
        check_known_ids(ann, set(known), source=str(annotations), known_source=str(items))
    data = index_annotations(ann)
    if items is not None:
        never = sorted(set(known) - set(data.ids.tolist()))
    c = _console()
    if method is Method.counting:
        n_res = 1000 if resamples is None else resamples
        scores = _counting_frame(data, decimals)
        if n_res:
            scores = add_bootstrap_ci(scores, data, n_resamples=n_res, seed=seed, confidence=confidence)
    else:
        from biaslab.bws.bradley_terry import score_bradley_terry

        n_res = 200 if resamples is None else resamples
        if decimals is not None:
            raise ConfigError("--decimals applies to counting scores only; drop it with --method bradley-terry")
        with c.status(f"fitting Bradley-Terry ({n_res} bootstrap refits)"):
            scores = score_bradley_terry(data, alpha=alpha, n_resamples=n_res, seed=seed, confidence=confidence)
    if not n_res:
        scores["ci_low"] = float("nan")
        scores["ci_high"] = float("nan")
    _write(out, scores.to_csv(index=False, lineterminator="\n"))
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
    out: Optional[Path] = typer.Option(None, "--out", help="Also write {pearson: {mean, sd}, spearman: {mean, sd}, "
                                       "trials, seed} as JSON here."),
) -> None:
    """Split-half reliability: split each tuple's annotations in two halves, score each half by
    counting, correlate the halves' scores (Pearson and Spearman); mean and SD over --trials.

    With an odd number of annotations the extra one goes to either half with probability 0.5.
    Needs at least 2 annotations for most tuples to be meaningful.
    """
    from biaslab.bws.data import index_annotations, read_annotations
    from biaslab.bws.reliability import split_half_reliability

    if trials < 1:
        raise ConfigError(f"--trials must be at least 1, got {trials}")
    data = index_annotations(read_annotations(annotations))
    rel = split_half_reliability(data, trials=trials, seed=seed)
    result = rel.as_dict()
    c = _console()
    per_tuple = data.n_annotations / data.n_tuples
    c.print(f"split-half reliability of {data.n_annotations} annotations ({data.n_tuples} tuples, "
            f"{per_tuple:.2f} annotations per tuple, {data.n_items} items), {trials} trials, seed {seed}:")
    c.print(f"  Pearson  {_pm(rel.pearson_mean, rel.pearson_sd)}")
    c.print(f"  Spearman {_pm(rel.spearman_mean, rel.spearman_sd)}")
    if out is not None:
        _write(out, json.dumps(result, indent=2) + "\n")
        c.print(f"wrote {out}")


def _pm(mean: float, sd: float) -> str:
    import math

    if not math.isfinite(mean):
        return "undefined (too few tuples with annotations in both halves)"
    return f"{mean:.4f} +- {sd:.4f}"
