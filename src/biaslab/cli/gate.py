"""``biaslab gate``: is the candidate no more biased than the baseline, by more than a margin? (exit 0: yes on
every metric; 1: not shown on some; 2: a usage error)."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import console


def gate(
    baseline: Path = typer.Argument(
        ..., help="The baseline: a run folder (`biaslab run --out`) or a suite folder (`biaslab suite --out`)."
    ),
    candidate: Path = typer.Argument(..., help="The candidate: a run of the same probe, or a suite."),
    margin: list[str] | None = typer.Option(
        None,
        "--margin",
        help="METRIC=DELTA: the candidate may be worse "
        "than the baseline by less than DELTA, in the metric's units (repeat; "
        "suites: PROBE:METRIC=DELTA). Every headline not given one gets its "
        "probe's default margin.",
    ),
    alpha: float = typer.Option(
        0.05, "--alpha", help="The one-sided level of each test, after Holm's adjustment across the margins."
    ),
    equivalence: bool = typer.Option(
        False,
        "--equivalence",
        help="Two-sided margins: show that the metric moved by less than DELTA either way (two one-sided tests).",
    ),
    junit: Path | None = typer.Option(
        None,
        "--junit",
        help="Write a JUnit XML file: one testcase per metric, a failure for each not shown non-inferior.",
    ),
    markdown: Path | None = typer.Option(None, "--markdown", help="Write a Markdown summary (for a pull request)."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full result as JSON."),
    baseline_model: str | None = typer.Option(
        None, "--baseline-model", help="The baseline suite's model, when it has several."
    ),
    candidate_model: str | None = typer.Option(
        None, "--candidate-model", help="The candidate suite's model, when it has several."
    ),
    power: float = typer.Option(
        0.8, "--power", help="The power behind the 'items that would settle it' of an inconclusive metric."
    ),
    resamples: int = typer.Option(
        2000, "--resamples", help="Bootstrap resamples (raised when many margins need finer p values)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap draws."),
    require: list[str] | None = typer.Option(
        None,
        "--require",
        help="METRIC<=VALUE (or >=, <, >): an absolute condition on the candidate's own number, met when its "
        "95% interval lies on the required side (repeat; suites: PROBE:METRIC<=VALUE).",
    ),
    min_mark: str | None = typer.Option(
        None,
        "--min-mark",
        help="A-D: every headline's mark of the candidate (the mark of its interval's worse end) at least this; "
        "not shown where the interval also touches this mark or better (the worse one not ruled out at this size).",
    ),
) -> int:
    """Release gate: a non-inferiority test per metric (candidate not worse than baseline by the margin or more).

    Paired on the runs' shared items (the probe's pairing, its clusters resampled within strata, as in
    `compare`), unpaired from the runs' intervals otherwise; Holm's step-down adjustment across the margins.
    Every p value is recalibrated to the units it rests on (too few, or runs that agree on too few, are
    "too small"). Exit 0 when every metric is shown non-inferior and every --require / --min-mark is met, 1 when
    any is not (regressed, inconclusive, too small or not tested: the output says which and what would settle
    it), 2 for a usage error.
    """
    from biaslab.errors import ConfigError
    from biaslab.gate import render
    from biaslab.gate.decide import run_gate
    from biaslab.io import atomic_write_text

    if not 0 < power < 1:
        raise ConfigError(f"--power must lie between 0 and 1 (got {power:g})")
    result = run_gate(
        baseline,
        candidate,
        list(margin or []),
        alpha=alpha,
        equivalence_mode=equivalence,
        power=power,
        seed=seed,
        n_resamples=resamples,
        baseline_model=baseline_model,
        candidate_model=candidate_model,
        require=list(require or []),
        min_mark=min_mark,
    )
    con = console()
    render.print_gate(result, con)
    for path, text in ((junit, render.junit_xml), (markdown, render.markdown), (json_out, render.to_json)):
        if path is not None:
            atomic_write_text(path, text(result))
            con.print(f"wrote {path}")
    return 0 if result["passed"] else 1
