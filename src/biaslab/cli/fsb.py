"""``biaslab fsb generate | analyze | scorers``: Fifty Shades of Bias text generation
(:mod:`biaslab.fsb.generation_run`), analyses of graded texts (:mod:`biaslab.fsb.analyze_run`) and
automatic scorers against the human scores (:mod:`biaslab.fsb.scorers_run`)."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import cache_dir_option, console, model_option_flag, model_options_from, new_app, retries_text
from biaslab.errors import ConfigError
from biaslab.out_lock import hold_out_dir

app = new_app(
    "fsb",
    "Fifty Shades of Bias: generate graded gender-biased texts; analyse graded texts scored by "
    "best-worst scaling (bins, metadata tables, histogram, PMI words, log-odds n-grams); compare "
    "automatic scorers with the human scores.",
)
GENERATE_MODEL_HELP = (
    "Model spec (smollm2, gemma3-270m, hf/..., gguf/..., openai/..., scripted/...; see `biaslab models`)."
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


@app.command("analyze")
def analyze_cmd(
    out: Path = typer.Option(..., "--out", help="Directory for results.json, the CSV tables and report.html."),
    texts: Path | None = typer.Option(None, "--texts", help="Texts CSV/TSV (default: the released FSB_text.csv)."),
    scores: Path | None = typer.Option(
        None,
        "--scores",
        help="Scores CSV with id and a [0, 1] score, e.g. from "
        "`biaslab bws score` (default: the released fsb_final_scores.csv).",
    ),
    id_column: str | None = typer.Option(None, "--id-column", help="Id column of --texts (default: uid, else id)."),
    text_column: str | None = typer.Option(
        None, "--text-column", help="Text column of --texts (default: response, else text)."
    ),
    score_column: str = typer.Option("score_normalized", "--score-column", help="Score column of --scores, in [0, 1]."),
    thresholds: str = typer.Option(
        "0.316,0.579",
        "--thresholds",
        help="Bin thresholds on the score (the paper's three bins: [0, 0.316), [0.316, 0.579), [0.579, 1]).",
    ),
    by: list[str] | None = typer.Option(
        None,
        "--by",
        help="Metadata column to cross-tabulate with the bins "
        "(repeatable; default: columns with 2-20 distinct values).",
    ),
    min_count: int = typer.Option(
        5,
        "--min-count",
        help="PMI: leave out words seen fewer times than this in all "
        "texts (rarer words tie at a bin's maximum PMI; 1 keeps every word).",
    ),
    top: int = typer.Option(10, "--top", help="Words / n-grams listed per bin and side."),
    compare: list[str] | None = typer.Option(
        None,
        "--compare",
        help="Bins to contrast with log-odds, e.g. 2,3 (repeatable; default: every pair of adjacent bins).",
    ),
    prior: str = typer.Option(
        "uniform",
        "--prior",
        help="Log-odds Dirichlet prior: uniform (ConvoKit's default, "
        "--prior-value per n-gram) or informative (--prior-scale x counts in all texts).",
    ),
    prior_value: float = typer.Option(0.1, "--prior-value", help="Uniform prior pseudo-count per n-gram."),
    prior_scale: float = typer.Option(0.1, "--prior-scale", help="Informative prior: multiple of the corpus counts."),
    min_df: int = typer.Option(10, "--min-df", help="Log-odds vocabulary: n-grams in at least this many texts."),
    max_df: float = typer.Option(0.5, "--max-df", help="Log-odds vocabulary: n-grams in at most this share of texts."),
    max_features: int = typer.Option(15000, "--max-features", help="Log-odds vocabulary: at most this many n-grams."),
    ngram_range: str = typer.Option("1-3", "--ngram-range", help="Log-odds vocabulary n-gram lengths, e.g. 1-3."),
    min_words: int = typer.Option(
        2, "--min-words", help="List n-grams of at least this many words (the paper lists bigrams and trigrams)."
    ),
) -> None:
    """The paper's analyses of graded texts: score bins with counts, metadata x bin tables, a 10-bin
    histogram, top PMI words per bin and log-odds n-grams between bins.

    Works for any texts/scores pair; without --texts/--scores it analyses the released FSB data.
    """
    from biaslab.fsb.analysis import AnalysisConfig
    from biaslab.fsb.analyze_run import run_analysis

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} exists and is not a directory; pass a directory")
    try:
        lo, hi = (int(x) for x in ngram_range.split("-"))
    except ValueError:
        raise ConfigError(f"--ngram-range {ngram_range!r} must look like 1-3") from None
    cfg = AnalysisConfig(
        thresholds=_floats(thresholds, "--thresholds"),
        pmi_min_count=min_count,
        top=top,
        compare=[_pair(c) for c in compare] if compare else None,
        prior=prior,
        prior_value=prior_value,
        prior_scale=prior_scale,
        min_df=min_df,
        max_df=max_df,
        max_features=max_features,
        ngram_range=(lo, hi),
        min_words=min_words,
    )
    with hold_out_dir(out):  # one writer per --out
        run = run_analysis(
            out,
            cfg,
            texts=texts,
            scores=scores,
            id_column=id_column,
            text_column=text_column,
            score_column=score_column,
            by=by,
        )

    results, c = run.results, console()
    bins = ", ".join(
        f"bin {b['bin']} [{b['low']:.3f}, {b['high']:.3f}{']' if i == len(results['bins']) - 1 else ')'}: {b['count']}"
        for i, b in enumerate(results["bins"])
    )
    c.print(f"[bold]{results['n_items']}[/] scored texts; {bins}")
    if run.n_unscored:
        c.print(f"[yellow]{run.n_unscored} text(s) without a score left out[/]")
    for b, rows in results["pmi_top"].items():
        c.print(f"PMI bin {b}: {', '.join(r['word'] for r in rows)}")
    for comp in results["log_odds"]:
        if not comp["vocabulary"]:
            c.print(
                f"[yellow]log-odds bin {comp['a']} vs {comp['b']}: no n-gram passes --min-df {min_df} / "
                f"--max-df {max_df}; lower --min-df for small corpora[/]"
            )
            continue
        c.print(
            f"log-odds bin {comp['a']} vs {comp['b']}, more in bin {comp['a']}: "
            f"{', '.join(t['ngram'] for t in comp['top_a'])}"
        )
        c.print(
            f"log-odds bin {comp['a']} vs {comp['b']}, more in bin {comp['b']}: "
            f"{', '.join(t['ngram'] for t in comp['top_b'])}"
        )
    c.print(f"wrote {len(run.paths)} files to {out} (report.html, results.json, CSV tables)")


@app.command("generate")
def generate_command(
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        help="CSV to write (FSB_text.csv layout + example_ids, model, "
        "raw_response); a <name>.meta.json with the model identity and settings goes beside it.",
    ),
    model: str | None = typer.Option(None, "--model", "-m", help=GENERATE_MODEL_HELP, envvar="BIASLAB_MODEL"),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Base URL of an OpenAI-compatible server.", envvar="BIASLAB_BASE_URL"
    ),
    prompt_type: str = typer.Option("both", "--prompt-type", help="completion, conversion or both."),
    seed_types: str = typer.Option(
        "explicit,implicit,neutral",
        "--seed-types",
        help="Comma-separated seed types: explicit, implicit, neutral, random (or the seed types of --seeds).",
    ),
    limit: int | None = typer.Option(
        None,
        "--limit",
        "-n",
        help="Generate only N texts, evenly spread over the plan (uids stay those of the full plan).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the in-context example draws and request seeds."),
    seeds_file: Path | None = typer.Option(
        None,
        "--seeds",
        help="Your own seeds: CSV with seed_type,query[,prompt_type] (default: the released seed files).",
    ),
    examples_dir: Path | None = typer.Option(
        None,
        "--examples-dir",
        help="Folder with <seed type>_<prompt type>_ic.json example files (default: the released ones).",
    ),
    random_examples: str = typer.Option(
        "pooled",
        "--random-examples",
        help="Examples for the random seed type, "
        "which has no file: pooled (explicit+implicit+neutral files of the prompt "
        "type), explicit, implicit or neutral.",
    ),
    temperature: float = typer.Option(0.0, "--temperature", help="Sampling temperature (paper: 0)."),
    max_tokens: int = typer.Option(100, "--max-tokens", help="Maximum new tokens per answer (paper: 100)."),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Parallel requests to an HTTP server."),
    cache_dir: Path | None = cache_dir_option(),
    model_option: list[str] | None = model_option_flag(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Generate graded gender-biased texts the way Fifty Shades of Bias was made (paper section 3).

    Each seed gets the prompt type's system prompt, two in-context examples drawn (seeded) from the
    matching examples file, then the seed; greedy decoding, at most 100 new tokens, first line kept.
    Every answer is cached: re-running finishes from the cache and an interrupted run resumes.
    """
    from biaslab.fsb.generation_run import run_generation

    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive number of texts (got {limit}); omit it to generate all")
    if max_tokens < 1:
        raise ConfigError(f"--max-tokens must be at least 1 (got {max_tokens})")
    if temperature < 0:
        raise ConfigError(f"--temperature must be >= 0 (got {temperature})")
    if out.exists() and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name such as {out / 'texts.csv'}")
    run = run_generation(
        out,
        model=model,
        base_url=base_url,
        prompt_type=prompt_type,
        seed_types=seed_types,
        limit=limit,
        seed=seed,
        seeds_file=seeds_file,
        examples_dir=examples_dir,
        random_examples=random_examples.strip().lower(),
        temperature=temperature,
        max_tokens=max_tokens,
        max_concurrency=max_concurrency,
        cache_dir=cache_dir,
        quiet=quiet,
        console=console(stderr=True),
        model_options=model_options_from(model_option),
    )
    summary = ", ".join(f"{s}/{p} {n}" for (s, p), n in run.counts.items())
    out_console = console()
    out_console.print(
        f"{run.n_texts} texts of {run.n_planned} planned ({summary}); {run.n_empty} empty; "
        f"model calls {run.model_calls}, cache hits {run.cache_hits}{retries_text(run.retries, run.retry_causes)}"
    )
    out_console.print(f"wrote {run.out} and {run.meta_path}")


@app.command("scorers")
def scorers_cmd(
    scorer: list[str] = typer.Option(
        ...,
        "--scorer",
        "-s",
        help="Scorer spec (repeatable): vader, profanity, "
        "hf/<checkpoint dir>[:label=NAME,output=prob|logit], openai/<model>"
        "[:mode=judge|moderation,category=NAME], judge-run:<fsb-judge run dir>.",
    ),
    out: Path = typer.Option(..., "--out", help="Directory for results.json, scores.csv and report.html."),
    scores: Path | None = typer.Option(
        None,
        "--scores",
        help="Human scores CSV with id and a [0, 1] score (default: the released fsb_final_scores.csv).",
    ),
    texts: Path | None = typer.Option(None, "--texts", help="Texts CSV/TSV (default: the released FSB_text.csv)."),
    annotations: Path | None = typer.Option(
        None,
        "--annotations",
        help="Best-worst annotations the scores were "
        "counted from, for the split-half ceiling (default with the released "
        "scores: the released annotations).",
    ),
    id_column: str | None = typer.Option(None, "--id-column", help="Id column of --texts (default: uid, else id)."),
    text_column: str | None = typer.Option(
        None, "--text-column", help="Text column of --texts (default: response, else text)."
    ),
    score_column: str = typer.Option("score_normalized", "--score-column", help="Score column of --scores, in [0, 1]."),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Base URL of an OpenAI-compatible server (openai/ scorers).", envvar="BIASLAB_BASE_URL"
    ),
    trials: int = typer.Option(100, "--trials", help="Random splits of the split-half reliability."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split-half splits."),
    cache_dir: Path | None = typer.Option(
        None, "--cache-dir", help="Where scores are cached (default: the biaslab cache dir; env BIASLAB_CACHE_DIR)."
    ),
) -> None:
    """Score the rated texts with each scorer and compare with the human best-worst-scaling scores:
    Pearson and Spearman with Fisher-z CIs and p values, the MAE after a linear fit (its CI over texts),
    the ceiling set by the annotations' split-half reliability, and a scatter per scorer in report.html.

    Scores are cached on disk by scorer identity and text: a re-run scores nothing again.
    """
    from biaslab.fsb.scorers_run import run_scorers

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} exists and is not a directory; pass a directory")
    if trials < 1:
        raise ConfigError("--trials must be >= 1")
    options = {s: {"base_url": base_url} for s in scorer if base_url and s.strip().startswith("openai/")}
    err = console(stderr=True)
    with hold_out_dir(out):  # one writer per --out, checked before any scorer runs
        run = run_scorers(
            out,
            scorer,
            texts=texts,
            scores=scores,
            annotations=annotations,
            id_column=id_column,
            text_column=text_column,
            score_column=score_column,
            seed=seed,
            trials=trials,
            cache_dir=cache_dir,
            scorer_options=options,
            on_scorer=lambda spec: err.print(f"scoring with {spec} ..."),
        )
    results, c = run.results, console()
    c.print(f"[bold]{results['n_items']}[/] rated texts")
    for s in results["scorers"]:
        p, r = s["pearson"], s["spearman"]
        c.print(
            f"{s['scorer']}: Pearson {_f(p['value'])} [{_f(p['ci_low'])}, {_f(p['ci_high'])}], Spearman "
            f"{_f(r['value'])} [{_f(r['ci_low'])}, {_f(r['ci_high'])}], MAE after fit {_f(s['mae_fit']['value'])}"
            f" (n {s['n']}" + (f", {s['n_missing']} without a score" if s["n_missing"] else "") + ")"
        )
    rel = results["reliability"]
    if rel["available"]:
        c.print(
            f"ceiling from split-half reliability {_f(rel['split_half']['pearson']['mean'])}: Pearson "
            f"{_f(rel['ceiling']['pearson'])}, Spearman {_f(rel['ceiling']['spearman'])}"
        )
    else:
        c.print(f"[yellow]no ceiling: {rel['reason']}[/]")
    c.print(f"wrote {', '.join(p.name for p in run.paths)} to {out}")


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
