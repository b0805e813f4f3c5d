"""``biaslab compare``: one table across runs, or two benchmarks on the same models."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import console


def compare(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories (or results.json files) to compare."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Also write the table here (.md, .tsv or .html by "
                                    "extension)."),
    against: list[Path] | None = typer.Option(None, "--against", help="Benchmark comparison: runs of a second "
                                              "benchmark on the same models (repeat the flag per run)."),
    metric: str = typer.Option("bias_score", "--metric", help="Benchmark comparison: the metric to correlate "
                               "(per group: <metric>:<group>)."),
) -> None:
    """One table across runs, for runs whose results share metric names (significance marks: * q<0.05).

    Runs of two benchmarks on the same models (or RUN_DIRS of one benchmark and --against runs of
    another) give a benchmark comparison instead: scores side by side, Pearson r over models
    overall and per group with a bootstrap CI, and scatter plots in the --out .html report.
    """
    from biaslab.compare.benchmarks import compare_two_benchmarks, load_runs, split_two_benchmarks
    from biaslab.compare.runs import compare_runs

    if against or split_two_benchmarks(load_runs(run_dirs), metric) is not None:
        compare_two_benchmarks(run_dirs, list(against) if against else None, metric=metric, out=out,
                               console=console())
        return
    compare_runs(run_dirs, out=out, console=console())
