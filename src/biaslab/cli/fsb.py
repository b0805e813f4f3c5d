"""``biaslab fsb ...``: the Fifty Shades of Bias analyses (other ``fsb`` commands are added here too)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from biaslab.errors import ConfigError

app = typer.Typer(
    name="fsb",
    help="Fifty Shades of Bias: generate graded gender-biased texts; analyse graded texts scored by best-worst "
         "scaling (bins, metadata tables, histogram, PMI words, log-odds n-grams).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _pair(text: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in text.replace("-", ",").split(","))
    except ValueError:
        raise ConfigError(f"--compare {text!r} must be two bin numbers such as 2,3") from None
    return a, b


def _floats(text: str, flag: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{flag} {text!r} must be comma-separated numbers such as 0.316,0.579") from None


def _first_present(columns, candidates: list[str], flag: str, source: str) -> str:
    for c in candidates:
        if c in columns:
            return c
    raise ConfigError(f"{source}: none of the columns {', '.join(candidates)} found (have: "
                      f"{', '.join(map(str, columns))}); name it with {flag}")


@app.command("analyze")
def analyze_cmd(
    out: Path = typer.Option(..., "--out", help="Directory for results.json, the CSV tables and report.html."),
    texts: Optional[Path] = typer.Option(None, "--texts", help="Texts CSV/TSV (default: the released FSB_text.csv)."),
    scores: Optional[Path] = typer.Option(None, "--scores", help="Scores CSV with id and a [0, 1] score, e.g. from "
                                          "`biaslab bws score` (default: the released fsb_final_scores.csv)."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="Id column of --texts (default: uid, else id)."),
    text_column: Optional[str] = typer.Option(None, "--text-column",
                                              help="Text column of --texts (default: response, else text)."),
    score_column: str = typer.Option("score_normalized", "--score-column", help="Score column of --scores, in [0, 1]."),
    thresholds: str = typer.Option("0.316,0.579", "--thresholds", help="Bin thresholds on the score (the paper's "
                                   "three bins: [0, 0.316), [0.316, 0.579), [0.579, 1])."),
    by: Optional[List[str]] = typer.Option(None, "--by", help="Metadata column to cross-tabulate with the bins "
                                           "(repeatable; default: columns with 2-20 distinct values)."),
    min_count: int = typer.Option(1, "--min-count", help="PMI: leave out words seen fewer times than this."),
    top: int = typer.Option(10, "--top", help="Words / n-grams listed per bin and side."),
    compare: Optional[List[str]] = typer.Option(None, "--compare", help="Bins to contrast with log-odds, e.g. 2,3 "
                                                "(repeatable; default: every pair of adjacent bins)."),
    prior: str = typer.Option("uniform", "--prior", help="Log-odds Dirichlet prior: uniform (ConvoKit's default, "
                              "--prior-value per n-gram) or informative (--prior-scale x counts in all texts)."),
    prior_value: float = typer.Option(0.1, "--prior-value", help="Uniform prior pseudo-count per n-gram."),
    prior_scale: float = typer.Option(0.1, "--prior-scale", help="Informative prior: multiple of the corpus counts."),
    min_df: int = typer.Option(10, "--min-df", help="Log-odds vocabulary: n-grams in at least this many texts."),
    max_df: float = typer.Option(0.5, "--max-df", help="Log-odds vocabulary: n-grams in at most this share of texts."),
    max_features: int = typer.Option(15000, "--max-features", help="Log-odds vocabulary: at most this many n-grams."),
    ngram_range: str = typer.Option("1-3", "--ngram-range", help="Log-odds vocabulary n-gram lengths, e.g. 1-3."),
    min_words: int = typer.Option(2, "--min-words", help="List n-grams of at least this many words (the paper "
                                  "lists bigrams and trigrams)."),
) -> None:
    """The paper's analyses of graded texts: score bins with counts, metadata x bin tables, a 10-bin
    histogram, top PMI words per bin and log-odds n-grams between bins.

    Works for any texts/scores pair; without --texts/--scores it analyses the released FSB data.
    """
    from rich.console import Console

    from biaslab.bws.data import read_items, read_table
    from biaslab.data import data_path
    from biaslab.data.registry import sha256_of
    from biaslab.fsb.analysis import AnalysisConfig, analyze, guess_group_columns, join_texts_scores
    from biaslab.fsb.report import build_results, write_outputs

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} exists and is not a directory; pass a directory")
    texts_path = texts or data_path("fsb/FSB_text.csv")
    scores_path = scores or data_path("fsb/fsb_final_scores.csv")
    raw = read_table(texts_path, "texts")
    id_col = id_column or _first_present(raw.columns, ["uid", "id"], "--id-column", str(texts_path))
    txt_col = text_column or _first_present(raw.columns, ["response", "text"], "--text-column", str(texts_path))
    texts_df = read_items(texts_path, id_col)
    scores_df = read_table(scores_path, "scores")
    try:
        lo, hi = (int(x) for x in ngram_range.split("-"))
    except ValueError:
        raise ConfigError(f"--ngram-range {ngram_range!r} must look like 1-3") from None
    cfg = AnalysisConfig(thresholds=_floats(thresholds, "--thresholds"), pmi_min_count=min_count, top=top,
                         compare=[_pair(c) for c in compare] if compare else None, prior=prior,
                         prior_value=prior_value, prior_scale=prior_scale, min_df=min_df, max_df=max_df,
                         max_features=max_features, ngram_range=(lo, hi), min_words=min_words)
    cfg.check()
    groups = list(by) if by else guess_group_columns(texts_df, exclude=[id_col, txt_col])
    for g in groups:
        if g not in texts_df.columns:
            raise ConfigError(f"--by {g}: no such column in {texts_path} (have: {', '.join(texts_df.columns)})")
    merged, unscored = join_texts_scores(texts_df, scores_df, id_column=id_col, text_column=txt_col,
                                         score_column=score_column, texts_source=str(texts_path),
                                         scores_source=str(scores_path))
    analysis = analyze(merged, text_column=txt_col, cfg=cfg, group_columns=groups)
    parameters = {"id_column": id_col, "text_column": txt_col, "score_column": score_column,
                  "thresholds": list(cfg.thresholds), "group_columns": groups, "pmi_min_count": min_count,
                  "top": top, "compare": [[c["a"], c["b"]] for c in analysis["log_odds"]], "prior": prior,
                  "prior_value": prior_value, "prior_scale": prior_scale, "min_df": min_df, "max_df": max_df,
                  "max_features": max_features, "ngram_range": [lo, hi], "min_words": min_words}
    inputs = {"texts": {"path": str(texts_path), "sha256": sha256_of(Path(texts_path))},
              "scores": {"path": str(scores_path), "sha256": sha256_of(Path(scores_path))}}
    results = build_results(analysis, inputs=inputs, parameters=parameters, n_unscored=len(unscored), top=top)
    try:
        paths = write_outputs(out, analysis, results, title="Graded texts: bins, themes and distinguishing n-grams")
    except OSError as exc:
        raise ConfigError(f"cannot write to {out} ({exc.strerror or type(exc).__name__}); pass a writable --out") from None

    c = Console(highlight=False)
    bins = ", ".join(f"bin {b['bin']} [{b['low']:.3f}, {b['high']:.3f}{']' if i == len(results['bins']) - 1 else ')'}: "
                     f"{b['count']}" for i, b in enumerate(results["bins"]))
    c.print(f"[bold]{results['n_items']}[/] scored texts; {bins}")
    if unscored:
        c.print(f"[yellow]{len(unscored)} text(s) without a score left out[/]")
    for b, rows in results["pmi_top"].items():
        c.print(f"PMI bin {b}: {', '.join(r['word'] for r in rows)}")
    for comp in results["log_odds"]:
        if not comp["vocabulary"]:
            c.print(f"[yellow]log-odds bin {comp['a']} vs {comp['b']}: no n-gram passes --min-df {min_df} / "
                    f"--max-df {max_df}; lower --min-df for small corpora[/]")
            continue
        c.print(f"log-odds bin {comp['a']}: {', '.join(t['ngram'] for t in comp['top_a'])}")
        c.print(f"log-odds bin {comp['b']}: {', '.join(t['ngram'] for t in comp['top_b'])}")
    c.print(f"wrote {len(paths)} files to {out} (report.html, results.json, CSV tables)")


from biaslab.cli.fsb_generate import generate_command  # noqa: E402  (graded text generation, fsbgen branch)

app.command("generate")(generate_command)
