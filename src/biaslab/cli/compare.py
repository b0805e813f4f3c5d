"""``biaslab compare``: paired comparison of runs, one table across runs, or two benchmarks on the same models."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import console


def compare(
    run_dirs: list[Path] = typer.Argument(
        ..., help="Run directories (or results.json files); the first is A, every other is compared with it."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Also write the comparison here (.json, .md, .tsv or .html by extension)."
    ),
    table: bool = typer.Option(
        False,
        "--table",
        help="One table of the runs' reported metrics instead (significance marks from each run's q values).",
    ),
    against: list[Path] | None = typer.Option(
        None,
        "--against",
        help="Benchmark comparison: runs of a second benchmark on the same models (repeat the flag per run).",
    ),
    metric: str = typer.Option(
        "bias_score", "--metric", help="Benchmark comparison: the metric to correlate (per group: <metric>:<group>)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and permutation draws."),
) -> None:
    """Compare runs with the first: for every shared metric the difference B - A, a 95% CI and a p value.

    Runs of the same probe on the same items are compared paired: a metric that is a mean over the
    items (rates, bias scores, linearised ratios, slopes, correlations) is tested on the items'
    differences with the run report's procedure, clustered as the report clusters them (exact
    binomial or sign-flip test with few clusters, cluster-robust t with many, none under 6); the rest
    (largest gaps, rates whose items differ between the runs) by the paired bootstrap over the same
    units, its p never below 2^(1-k) over k units. Other runs are compared unpaired. q:
    Benjamini-Hochberg across all comparisons. Runs of two benchmarks on the same models (or --against) give a benchmark
    comparison instead: Pearson r over models with a bootstrap CI.
    """
    from biaslab.compare.benchmarks import compare_two_benchmarks, load_runs, split_two_benchmarks

    if against or split_two_benchmarks(load_runs(run_dirs), metric) is not None:
        compare_two_benchmarks(run_dirs, list(against) if against else None, metric=metric, out=out, console=console())
        return
    if table:
        from biaslab.compare.runs import compare_runs

        compare_runs(run_dirs, out=out, console=console())
        return
    from biaslab.compare.paired import compare_all
    from biaslab.compare.render import print_comparison, write_comparison

    cmp = compare_all(list(run_dirs), seed=seed)
    print_comparison(cmp, console())
    if out is not None:
        console().print(f"wrote {write_comparison(cmp, out)}")
