"""``biaslab run PROBE``: parse the flags, run the probe (:func:`biaslab.probing.execute.execute_run`),
print the summary table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from biaslab.cli.common import MODEL_HELP, console, fmt
from biaslab.cli.dry_run import PRICE_IN_HELP, PRICE_OUT_HELP, PRICES_HELP, check_price_flags, dry_run_option


def run(
    probe: str = typer.Argument(..., help="Probe to run: jobs-lum, olympics, fsb-judge, winosemitism, "
                                          "gpt-winosemitism, gpt-winoqueer, winoqueer-human or pairs."),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_HELP, envvar="BIASLAB_MODEL"),
    base_url: str | None = typer.Option(None, "--base-url", help="Base URL of an OpenAI-compatible server.",
                                        envvar="BIASLAB_BASE_URL"),
    repetitions: int = typer.Option(1, "--repetitions", "-r", help="Samples per prompt (each with its own seed)."),
    limit: int | None = typer.Option(None, "--limit", "-n", help="Run only N items, evenly spread over the probe."),
    seed: int = typer.Option(0, "--seed", help="Run seed: every request's sampling seed derives from it."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output directory (default runs/<probe>/<model>)."),
    temperature: float | None = typer.Option(None, "--temperature",
                                             help="Sampling temperature (default: the model's)."),
    top_p: float | None = typer.Option(None, "--top-p", help="Nucleus sampling top-p (default: the model's)."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Maximum new tokens per answer "
                                          "(default: the probe's)."),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Parallel requests to an HTTP server."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Where the response cache lives (default: user "
                                          "cache; env BIASLAB_CACHE_DIR)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a finished run of another probe or model "
                                   "in --out (refused without it)."),
    probe_option: list[str] | None = typer.Option(None, "--probe-option", "-P", metavar="KEY=VALUE",
                                                  help="A probe-specific option, a local model's option such as "
                                                       "precision=bf16, or a hosted API's batch option such as "
                                                       "batch=true (repeat the flag for more); `biaslab probes` "
                                                       "lists each probe's options."),
    items: Path | None = typer.Option(None, "--items", help="Same as -P items=FILE (fsb-judge: a CSV with "
                                      "id,text,score in [0, 1] evaluated instead of the probe's own)."),
    pairs: Path | None = typer.Option(None, "--pairs", help="Same as -P pairs=FILE (paired-sentence probes: score "
                                      "this CSV of sent_more, sent_less[, target_ID, predicate_id])."),
    scoring: str | None = typer.Option(None, "--scoring", help="Same as -P scoring=... (paired-sentence probes: "
                                       "shared-tokens, the original's and the default, or full-sentence)."),
    reasons: bool = typer.Option(False, "--reasons", help="Same as -P reasons=true (fsb-judge: ask the judge for a "
                                 "reason beside each score)."),
    dry_run: bool = dry_run_option(),
    price_in: float | None = typer.Option(None, "--price-in", help=PRICE_IN_HELP),
    price_out: float | None = typer.Option(None, "--price-out", help=PRICE_OUT_HELP),
    prices: Path | None = typer.Option(None, "--prices", help=PRICES_HELP),
) -> None:
    """Run a probe on a model; write results.json, attempts.jsonl and report.html to --out.

    Every model answer is cached: re-running the same command makes no model calls, and a run
    that was interrupted resumes where it stopped.
    """
    from biaslab.models.base import GenerationParams
    from biaslab.probing.execute import execute_run
    from biaslab.probing.options import split_assignments

    options: dict[str, Any] = dict(split_assignments(probe_option or []))
    flags = {k: f"-P {k}" for k in options}
    aliases = (("items", "--items", items), ("pairs", "--pairs", pairs), ("scoring", "--scoring", scoring),
               ("reasons", "--reasons", True if reasons else None))
    for key, flag, value in aliases:
        if value is not None:
            options[key], flags[key] = value, flag
    params = GenerationParams(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
    check_price_flags(dry_run, price_in, price_out, prices)
    if dry_run:
        from biaslab.cli.dry_run import print_estimates
        from biaslab.probing.dry_run import estimate_run

        print_estimates([estimate_run(probe, model=model, base_url=base_url, repetitions=repetitions, limit=limit,
                                      seed=seed, params=params, cache_dir=cache_dir, probe_options=options,
                                      option_flags=flags, price_in=price_in, price_out=price_out,
                                      prices_file=prices)], Console())
        return
    results, out_dir = execute_run(probe, model=model, base_url=base_url, repetitions=repetitions, limit=limit,
                                   seed=seed, out=out, params=params, max_concurrency=max_concurrency,
                                   cache_dir=cache_dir, quiet=quiet, console=console(stderr=True),
                                   probe_options=options, option_flags=flags, overwrite=overwrite)
    print_summary(results, out_dir, Console())


def print_summary(results: dict[str, Any], out_dir: Path, out: Console) -> None:
    from biaslab.report.html import ci_text

    table = Table(title=f"{results['probe']} · {results['model'].get('model')} · {results['n_items']} items, "
                        f"{results['n_attempts']} attempts")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("n", justify="right")
    has_q = any("q" in m for m in results["metrics"].values())
    if has_q:
        table.add_column("p", justify="right")
        table.add_column("q", justify="right")
    for name, m in results["metrics"].items():
        row = [name, fmt(m.get("value")), escape(ci_text(m)), str(m["n"]) if m.get("n") is not None else ""]
        if has_q:
            row += [fmt(m.get("p"), 4), fmt(m.get("q"), 4)]
        table.add_row(*row)
    out.print(table)
    if any(m.get("too_small") or m.get("interval") for m in results["metrics"].values()):
        out.print("n: units the interval is over; exact: Clopper-Pearson (every unit had the same outcome); "
                  "too small: too few units to interpret, no interval")
    run_stats = results.get("run", {})
    out.print(f"model calls {run_stats.get('model_calls', 0)}, cache hits {run_stats.get('cache_hits', 0)}; "
              f"wrote {out_dir}/results.json, attempts.jsonl, report.html")
