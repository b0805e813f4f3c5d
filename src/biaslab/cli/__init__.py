"""The ``biaslab`` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from biaslab.errors import BiaslabError, ConfigError

app = typer.Typer(
    name="biaslab",
    help="Measure social bias in large language models: run probes, score annotations, compare runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
console = Console(stderr=True)
out_console = Console()

MODEL_HELP = ("Model spec: smollm2 (default, embedded), gemma3-270m, hf/<hub id or dir>, gguf/<path>, "
              "openai/<model> (with --base-url for vLLM, llama.cpp, Ollama...), scripted/<rule>. See `biaslab models`.")


@app.command()
def run(
    probe: str = typer.Argument(..., help="Probe to run: jobs-lum, olympics, fsb-judge, winosemitism, "
                                          "gpt-winosemitism, gpt-winoqueer, winoqueer-human or pairs."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help=MODEL_HELP, envvar="BIASLAB_MODEL"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Base URL of an OpenAI-compatible server.", envvar="BIASLAB_BASE_URL"),
    repetitions: int = typer.Option(1, "--repetitions", "-r", help="Samples per prompt (each with its own seed)."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Run only N items, evenly spread over the probe."),
    seed: int = typer.Option(0, "--seed", help="Run seed: every request's sampling seed derives from it."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output directory (default runs/<probe>/<model>)."),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="Sampling temperature (default: the model's)."),
    top_p: Optional[float] = typer.Option(None, "--top-p", help="Nucleus sampling top-p (default: the model's)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="Maximum new tokens per answer (default: the probe's)."),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Parallel requests to an HTTP server."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Where the response cache lives (default: user cache; env BIASLAB_CACHE_DIR)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    items: Optional[Path] = typer.Option(None, "--items", help="Evaluate these items instead of the probe's own "
                                         "(fsb-judge: a CSV with id,text,score in [0, 1])."),
    pairs: Optional[Path] = typer.Option(None, "--pairs", help="Paired-sentence probes: score this CSV (sent_more, "
                                         "sent_less[, target_ID, predicate_id]) instead of building the benchmark."),
    scoring: Optional[str] = typer.Option(None, "--scoring", help="Paired-sentence probes: shared-tokens (default, "
                                          "the original's) or full-sentence (lm-evaluation-harness's)."),
) -> None:
    """Run a probe on a model; write results.json, attempts.jsonl and report.html to --out.

    Every model answer is cached: re-running the same command makes no model calls, and a run
    that was interrupted resumes where it stopped.
    """
    from biaslab.models.base import GenerationParams
    from biaslab.cli.run import execute_run

    params = GenerationParams(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
    probe_options = {k: v for k, v in (("items_file", items), ("pairs", pairs), ("scoring", scoring)) if v is not None}
    execute_run(probe, model=model, base_url=base_url, repetitions=repetitions, limit=limit, seed=seed, out=out,
                params=params, max_concurrency=max_concurrency, cache_dir=cache_dir, quiet=quiet,
                console=console, out_console=out_console, probe_options=probe_options)


@app.command()
def models() -> None:
    """List model backends and aliases."""
    from biaslab.models.registry import ALIASES, BACKENDS, DEFAULT_MODEL

    table = Table(title="Model specs")
    table.add_column("spec")
    table.add_column("what it is")
    for name, alias in ALIASES.items():
        table.add_row(name + (" (default)" if name == DEFAULT_MODEL else ""), alias.summary)
    for prefix, entry in BACKENDS.items():
        table.add_row(f"{prefix}/<name>", f"{entry.summary}  [pip extra: {entry.extra}]")
    out_console.print(table)


@app.command()
def report(run_dir: Path = typer.Argument(..., help="A run directory with results.json and attempts.jsonl.")) -> None:
    """Re-render report.html of a finished run from its written results (no model needed)."""
    from biaslab.report.html import rebuild_report

    path = rebuild_report(run_dir)
    out_console.print(f"wrote {path}")


@app.command()
def compare(
    run_dirs: List[Path] = typer.Argument(..., help="Run directories (or results.json files) to compare."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Also write the table here (.md, .tsv or .html by extension)."),
    against: Optional[List[Path]] = typer.Option(None, "--against", help="Benchmark comparison: runs of a second "
                                                 "benchmark on the same models (repeat the flag per run)."),
    metric: str = typer.Option("bias_score", "--metric", help="Benchmark comparison: the metric to correlate "
                               "(per group: <metric>:<group>)."),
) -> None:
    """One table across runs, for runs whose results share metric names (significance marks: * q<0.05).

    Runs of two benchmarks on the same models (or RUN_DIRS of one benchmark and --against runs of
    another) give a benchmark comparison instead: scores side by side, Pearson r over models
    overall and per group with a bootstrap CI, and scatter plots in the --out .html report.
    """
    from biaslab.compare.runs import compare_runs, compare_two_benchmarks
    from biaslab.compare.benchmarks import load_runs, split_two_benchmarks

    if against or split_two_benchmarks(load_runs(run_dirs), metric) is not None:
        compare_two_benchmarks(run_dirs, list(against) if against else None, metric=metric, out=out,
                               console=out_console)
        return
    compare_runs(run_dirs, out=out, console=out_console)


@app.command()
def data(
    fetch: bool = typer.Option(False, "--fetch", help="Download (or verify) every registered file now."),
) -> None:
    """List the research data files biaslab uses, where each comes from, and whether it is available."""
    from biaslab.data.registry import FILES, data_path

    table = Table(title="Data files (BIASLAB_DATA_DIR or downloaded at run time, sha256 checked)")
    for col in ("file", "upstream", "license", "status"):
        table.add_column(col)
    failures = 0
    for name, df in FILES.items():
        if fetch:
            try:
                status = str(data_path(name))
            except BiaslabError as exc:
                status, failures = f"missing: {exc}", failures + 1
        else:
            status = "-"
        table.add_row(name, f"{df.repo[0]}@{df.repo[1][:7]}:{df.upstream}", df.license, status)
    out_console.print(table)
    if failures:
        raise typer.Exit(1)


def _mount_subapps() -> None:
    if getattr(_mount_subapps, "done", False):
        return
    from biaslab.cli.annotate import app as annotate_app

    app.add_typer(annotate_app, name="annotate", help="Best-worst scaling annotation server: init, add-annotator, serve, status, export.")
    from biaslab.cli.olympics import app as olympics_app

    app.add_typer(olympics_app, name="olympics", help="Olympic results probe: extract medals, score annotated files.")
    from biaslab.cli.bws import app as bws_app
    from biaslab.cli.fsb import app as fsb_app

    app.add_typer(bws_app, name="bws", help="Best-worst scaling: design tuples, score annotations, split-half reliability.")
    app.add_typer(fsb_app, name="fsb", help="Fifty Shades of Bias: generate graded texts; analyse scored ones (bins, PMI, log-odds).")
    from biaslab.cli.wino import app as wino_app

    app.add_typer(wino_app, name="wino", help="Paired-sentence benchmarks (WinoSemitism, WinoQueer, custom): build pairs.")
    from biaslab.cli.wino_predicates import register as register_predicates

    register_predicates(wino_app)  # extract-predicates, flag-predicates, predicate-quality, review
    _mount_subapps.done = True  # type: ignore[attr-defined]


def main() -> None:
    """Entry point: one-line errors for user mistakes, no tracebacks."""
    try:
        _mount_subapps()
        rv = app(standalone_mode=False)
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except BiaslabError as exc:
        console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: finished attempts are cached; run the same command again to resume")
        sys.exit(130)
    except typer.Abort:
        sys.exit(1)
    except Exception as exc:  # usage errors from click (or the copy of click that Typer vendors)
        if callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()  # "Usage: ... Error: Invalid value for '--limit': ..."
            sys.exit(exc.exit_code)
        if type(exc).__name__ == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
