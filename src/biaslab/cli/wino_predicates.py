"""``biaslab wino ...``, the predicate study (:mod:`biaslab.wino.predicates.study`): predicate-example,
extract-predicates, flag-predicates, predicate-quality, review export/import. Merged into the ``wino`` group
(:mod:`biaslab.cli.wino`)."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import cache_dir_option, console, model_option_flag, model_options_from, new_app, retries_text
from biaslab.models.registry import DEFAULT_MODEL
from biaslab.out_lock import hold_out_dir

app = typer.Typer()  # nameless: biaslab.cli.wino merges its commands into the ``wino`` group
review_app = new_app("review", "Human review of model predicates: export for review, import the reviewed file.")
app.add_typer(review_app, name="review")

EMBEDDING_HELP = (
    "Embedding model: all-mpnet-base-v2 (the paper's), all-minilm-l6-v2 (smaller), or a local "
    "sentence-transformers folder."
)


@app.command("predicate-example")
def predicate_example(target: Path = typer.Argument(..., help="Folder to create with the example survey.")) -> None:
    """Write the example survey (survey.csv, human_predicates.csv: made-up answers about ageism
    whose groups match `biaslab wino example`) to try the predicate study."""
    from biaslab.wino.predicates.example import write_example

    write_example(target)
    console().print(
        f"wrote {target}/survey.csv and human_predicates.csv; next: biaslab wino extract-predicates "
        f"--survey {target}/survey.csv --human {target}/human_predicates.csv "
        f"--out {target}/model_predicates.csv"
    )


def _table(title: str, header: list[str], rows: list[list[str]]):
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=title)
    for i, h in enumerate(header):
        t.add_column(h, justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*[escape(c) for c in r])
    return t


def _rates_rows(rates: dict) -> list[list[str]]:
    return [[name, str(v["count"]), f"{100 * v['share']:.1f}%"] for name, v in rates.items() if name != "n_predicates"]


@app.command("extract-predicates")
def extract_predicates(
    survey: Path = typer.Option(..., "--survey", help="Survey answers CSV: response_id, group, identity_noun, text."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        envvar="BIASLAB_MODEL",
        help=f"Model spec (default {DEFAULT_MODEL}; see `biaslab models`).",
    ),
    per_response: str = typer.Option(
        "human",
        "--per-response",
        help="Calls per answer: human (as many as the "
        "human predicates of that answer, the paper's setting; needs --human), a "
        "number N, or until-none (until the model answers NONE).",
    ),
    human: Path | None = typer.Option(
        None,
        "--human",
        help="Human predicates CSV (response_id, group, predicate): counts the calls for --per-response human.",
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        help="Model predicates CSV to write (with the quality flags); a .meta.json beside it records the run.",
    ),
    seed: int = typer.Option(0, "--seed", help="Run seed; every request's sampling seed derives from it."),
    temperature: float = typer.Option(0.3, "--temperature", help="Sampling temperature (the paper's 0.3)."),
    max_tokens: int = typer.Option(40, "--max-tokens", help="Token limit of one answer."),
    max_per_response: int = typer.Option(10, "--max-per-response", help="until-none: most calls per answer."),
    embedding: str = typer.Option(
        "all-minilm-l6-v2",
        "--embedding",
        help="Embedding model of the not_grounded and repeated_prior flags, or none (word overlap only).",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", envvar="BIASLAB_BASE_URL", help="Base URL of an OpenAI-compatible server."
    ),
    cache_dir: Path | None = cache_dir_option(),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Parallel requests to an HTTP server."),
    model_option: list[str] | None = model_option_flag(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Extract attested-harm predicates from survey answers with a model (the paper's prompt and
    <PREV> iteration, temperature 0.3), flag the risky ones, and write them as a CSV.

    Every answer is cached: re-running the same command makes no model calls, and a run that was
    interrupted resumes where it stopped.
    """
    from biaslab.wino.predicates.study import run_extract

    err = console(stderr=True)
    meta = run_extract(
        survey_path=survey,
        model_spec=model,
        per_response=per_response,
        human_path=human,
        out=out,
        seed=seed,
        temperature=temperature,
        max_tokens=max_tokens,
        max_per_response=max_per_response,
        embedding=embedding,
        base_url=base_url,
        cache_dir=cache_dir,
        max_concurrency=max_concurrency,
        quiet=quiet,
        console=err,
        model_options=model_options_from(model_option),
    )
    con = console()
    con.print(
        _table(
            f"{meta['n_predicates']} predicates from {meta['n_asked']} answers: how often each flag fires",
            ["flag", "predicates", "share"],
            _rates_rows(meta["flag_rates"]),
        )
    )
    stops = ", ".join(f"{k} {v}" for k, v in meta["stops"].items() if v)
    con.print(
        f"stopped: {stops}; skipped (no human predicates): {len(meta['skipped_without_human_predicates'])}; "
        f"model calls {meta['run']['model_calls']}, cache hits {meta['run']['cache_hits']}"
        f"{retries_text(meta['run'].get('retries'), meta['run'].get('retry_causes'))}"
    )
    con.print(f"wrote {out}")


@app.command("flag-predicates")
def flag_predicates_cmd(
    survey: Path = typer.Option(..., "--survey", help="Survey answers CSV the predicates came from."),
    predicates: Path = typer.Option(..., "--predicates", help="Model predicates CSV (response_id, group, predicate)."),
    out: Path = typer.Option(..., "--out", "-o", help="CSV to write with the flags."),
    embedding: str = typer.Option("all-minilm-l6-v2", "--embedding", help=EMBEDDING_HELP + " Or none."),
) -> None:
    """(Re)compute the quality flags of a model predicates file, without calling a model."""
    from biaslab.wino.predicates.study import run_flags

    rates = run_flags(survey_path=survey, predicates_path=predicates, out=out, embedding=embedding)
    con = console()
    con.print(_table("how often each flag fires", ["flag", "predicates", "share"], _rates_rows(rates)))
    con.print(f"wrote {out}")


@app.command("predicate-quality")
def predicate_quality(
    human: str = typer.Option(
        ...,
        "--human",
        help="Human predicates CSV (response_id, group, predicate), or a "
        "released list: winosemitism, gpt-winosemitism, gpt-winoqueer, winoqueer-human.",
    ),
    model_predicates: str = typer.Option(..., "--model-predicates", help="Model predicates CSV, or a released list."),
    match_by: str = typer.Option(
        "response",
        "--match-by",
        help="response: compare with the model predicates of "
        "the same answer (the paper); group: with all model predicates of the group.",
    ),
    embedding: str = typer.Option("all-mpnet-base-v2", "--embedding", help=EMBEDDING_HELP),
    sentence_prefix: str = typer.Option(
        "All Jewish people are ",
        "--sentence-prefix",
        help="Prefix of the SCS sentences (WinoQueer: 'All LGBTQ people are ').",
    ),
    survey: Path | None = typer.Option(None, "--survey", help="Check both files' ids against this survey."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for per_predicate.csv, results.json, report.html."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
) -> None:
    """Exact match, phrase cosine (PCS) and sentence cosine (SCS) of the human predicates against
    the model's, per group and overall with bootstrap CIs (the paper's Table 2)."""
    from biaslab.wino.predicates.reports import TERMINAL_TABLE2, terminal_table2_rows
    from biaslab.wino.predicates.study import run_quality

    err = console(stderr=True)
    with hold_out_dir(out):  # one writer per --out
        res = run_quality(
            human_path=human,
            model_path=model_predicates,
            match_by=match_by,
            embedding=embedding,
            prefix=sentence_prefix,
            out_dir=out,
            survey_path=survey,
            seed=seed,
            note=lambda s: err.print(f"[yellow]note:[/] {s}"),
        )
    con = console()
    con.print(
        _table(
            f"predicate quality ({res['parameters']['embedding']}, match by {match_by})",
            TERMINAL_TABLE2,
            terminal_table2_rows(res["table"]),
        )
    )
    cov, exact = res["table"][-1]["coverage"], res["table"][-1]["model_exact_match"]
    con.print(
        f"coverage {100 * (cov or 0):.0f}% of human predicates had a model predicate to compare; "
        f"model predicates exactly matching a human one: {100 * (exact or 0):.2f}%"
    )
    con.print(f"wrote {out}/per_predicate.csv, results.json, report.html")


@review_app.command("export")
def review_export(
    predicates: Path = typer.Option(..., "--predicates", help="Model predicates CSV (from extract-predicates)."),
    survey: Path = typer.Option(..., "--survey", help="The survey answers they came from."),
    out: Path = typer.Option(..., "--out", "-o", help="Review CSV to write."),
    embedding: str = typer.Option("all-minilm-l6-v2", "--embedding", help="Used only if the file has no flags yet."),
) -> None:
    """Write a review sheet: every model predicate with its flags and answer text, and empty
    category (correct / semantically-correct / opposite / hallucination / other) and
    edited_predicate columns to fill in."""
    from biaslab.wino.predicates.study import run_review_export

    n = run_review_export(predicates_path=predicates, survey_path=survey, out=out, embedding=embedding)
    console().print(f"wrote {out} ({n} predicates to review)")


@review_app.command("import")
def review_import(
    reviewed: Path = typer.Option(..., "--reviewed", help="The filled-in review CSV."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for predicates.csv, review_summary.json, review.html."),
    components_from: Path | None = typer.Option(
        None,
        "--components-from",
        help="A components folder to copy "
        "into --out with the accepted predicates, ready for "
        "`biaslab wino build custom --components OUT`.",
    ),
    skip_unreviewed: bool = typer.Option(
        False,
        "--skip-unreviewed",
        help="Summarise the rows that have a category and ignore the others (default: an error).",
    ),
) -> None:
    """Summarise a review (category shares per group, the paper's Table 3; precision and recall
    of each flag) and write the accepted predicates as a components predicates.csv."""
    from biaslab.wino.predicates.reports import FLAG_HEADER, TABLE3_HEADER, flag_rows, table3_rows
    from biaslab.wino.predicates.study import run_review_import

    with hold_out_dir(out):  # one writer per --out
        s = run_review_import(
            reviewed_path=reviewed, out_dir=out, components_from=components_from, skip_unreviewed=skip_unreviewed
        )
    con = console()
    con.print(_table("reviewed categories (%)", TABLE3_HEADER, table3_rows(s["table"])))
    con.print(_table("flags vs reviewers", FLAG_HEADER, flag_rows(s["flags"])))
    left = ", ".join(f"{k} {v}" for k, v in s["left_out"].items() if v)
    con.print(f"accepted {s['accepted']} predicates" + (f" (left out: {left})" if left else ""))
    target = (
        f"biaslab wino build custom --components {out} --out pairs.csv"
        if components_from
        else f"{out}/predicates.csv (copy it into a components folder)"
    )
    con.print(f"wrote {out}/predicates.csv, review_summary.json, review.html; next: {target}")
