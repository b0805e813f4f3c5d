"""``biaslab suite``: a set of probes on one or more models, one results.json and one report card."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import (
    cache_dir_option,
    console,
    max_tokens_option,
    model_option_flag,
    model_options_from,
    pin_threads,
    system_prompt_option,
    temperature_option,
    threads_option,
    top_p_option,
)
from biaslab.cli.dry_run import PRICE_IN_HELP, PRICE_OUT_HELP, PRICES_HELP, check_price_flags, dry_run_option


def suite(
    model: list[str] | None = typer.Option(
        None, "--model", "-m", help="Model spec (repeat for several models; default: the embedded model)."
    ),
    probes: list[str] | None = typer.Option(
        None,
        "--probes",
        "-p",
        help="Probe to run (a name, or file:PATH for a probe defined by a YAML file), or a named set: gender "
        "(every probe with a GenderBench harm-group headline, each with the options it declares for the set: "
        "bbq asks its Gender_identity questions only; members that "
        "cannot run here are left out, with the reason and how to include them). A probe named on its own runs "
        "with its defaults. Repeat; default: every probe that can run offline on the model kind "
        "(`biaslab probes` says which).",
    ),
    limit: int | None = typer.Option(
        None, "--limit", "-n", help="At most this many items per probe (default: each probe's suite size)."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Output directory: results.json, report.html and runs/ (required unless --dry-run)."
    ),
    cache_dir: Path | None = cache_dir_option(),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Base URL of an OpenAI-compatible server (openai/ models).", envvar="BIASLAB_BASE_URL"
    ),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Parallel requests to an HTTP server."),
    model_option: list[str] | None = model_option_flag(),
    system_prompt: str | None = system_prompt_option(),
    temperature: float | None = temperature_option(),
    top_p: float | None = top_p_option(),
    max_tokens: int | None = max_tokens_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace a finished or partial suite in --out of other models, probes or --limit, or a run "
        "(refused without it; the same suite again finishes a partial one).",
    ),
    dry_run: bool = dry_run_option(),
    price_in: float | None = typer.Option(None, "--price-in", help=PRICE_IN_HELP),
    price_out: float | None = typer.Option(None, "--price-out", help=PRICE_OUT_HELP),
    prices: Path | None = typer.Option(None, "--prices", help=PRICES_HELP),
    baseline: Path | None = typer.Option(
        None,
        "--baseline",
        help="A suite folder of the model shipped: gate every "
        "model against it (headlines at their default margins, as `biaslab gate` "
        "does) in results.json and the card.",
    ),
    threads: int | None = threads_option(),
) -> None:
    """Run a set of probes and write one report card: every headline with its interval, mark and reading, grouped
    by GenderBench's harm groups, models side by side (`--probes gender`: the gender report card). Ctrl-C writes
    a partial card of the runs finished (exit 130); the same command again finishes it."""
    from biaslab.models.base import GenerationParams
    from biaslab.models.registry import DEFAULT_MODEL
    from biaslab.probing.config import RunConfig, validate_config
    from biaslab.probing.system_prompt import read_system_prompt
    from biaslab.suite.run import run_suite

    con = console()
    pin_threads(threads)
    models = list(model) if model else [DEFAULT_MODEL]
    options = model_options_from(model_option)
    params = GenerationParams(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
    settings = RunConfig(params=params if params.as_key() else None, system_prompt=read_system_prompt(system_prompt))
    validate_config(settings)
    check_price_flags(dry_run, price_in, price_out, prices)
    if dry_run:
        from rich.markup import escape

        from biaslab.cli.dry_run import print_estimates
        from biaslab.suite.estimate import estimate_suite
        from biaslab.suite.sets import choose_probes

        print_estimates(
            estimate_suite(
                models,
                list(probes) if probes else None,
                limit=limit,
                cache_dir=cache_dir,
                model_options=options,
                base_url=base_url,
                price_in=price_in,
                price_out=price_out,
                prices_file=prices,
                settings=settings,
            ),
            con,
        )
        for name, why in choose_probes(models, list(probes) if probes else None, limit)[1].items():
            con.print(escape(f"left out {name}: {why}"), highlight=False, soft_wrap=True)  # commands kept whole
        return
    if out is None:
        from biaslab.errors import ConfigError

        raise ConfigError("give --out DIR for the suite's results (or --dry-run to count and price it first)")
    from biaslab.suite.estimate import suite_estimates

    estimates = suite_estimates(
        models,
        list(probes) if probes else None,
        con,
        limit=limit,
        cache_dir=cache_dir,
        model_options=options,
        base_url=base_url,
        settings=settings,
    )
    res = run_suite(
        models,
        list(probes) if probes else None,
        out,
        limit=limit,
        cache_dir=cache_dir,
        console=con,
        quiet=quiet,
        baseline=baseline,
        overwrite=overwrite,
        model_options=options,
        max_concurrency=max_concurrency,
        base_url=base_url,
        estimates=estimates,
        settings=settings,
    )
    from rich.markup import escape

    from biaslab.probing.headline import mark_words

    for r in res["runs"]:
        for h in r["headlines"]:
            mark = f" · {mark_words(h['mark'], h.get('mark_genderbench_rule'))}" if h.get("mark") else ""
            con.print(
                f"[bold]{escape(r['model'])}[/] {escape(r['probe'])}: {escape(h['reading'] + mark)}", highlight=False
            )
        if r.get("selection_note"):  # a probe whose design needs more than --limit says what it used
            con.print(escape(f"{r['model']} {r['probe']}: {r['selection_note']}"), highlight=False)
    for name, why in res.get("skipped", {}).items():  # each with how to include it: its commands kept whole
        con.print(escape(f"left out {name}: {why}"), highlight=False, soft_wrap=True)
    for g in res.get("gates", []):
        verdict = "PASS" if g["passed"] else "FAIL"
        con.print(
            f"[bold]{escape(g['candidate']['model'])}[/] against the baseline: {verdict} (biaslab gate for details)"
        )
    counts = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in res["totals"].items())
    con.print(f"{counts}; wrote {Path(out) / 'results.json'}, {Path(out) / 'report.html'}")
