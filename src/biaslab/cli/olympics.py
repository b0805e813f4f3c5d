"""``biaslab olympics ...``: score annotated results files, extract medals from generated text
(:mod:`biaslab.probes.olympics.annotated_run`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer

from biaslab.cli.common import console, new_app
from biaslab.errors import ConfigError
from biaslab.out_lock import hold_out_dir

app = new_app(
    "olympics", 'Olympic results probe ("Sports and Women\'s Sports"): score annotated files, extract medals.'
)

METRIC_LABELS = {
    "avg_f1": "Avg F1",
    "knowledge_based": "knowledge-based",
    "explicit_share": "explicit-ambiguous share",
    "explicit_score": "explicit-ambiguous score",
    "implicit_share": "implicit-ambiguous share",
    "implicit_score": "implicit-ambiguous score",
}
SHARES = ("explicit_share", "implicit_share")
ALPHA = 0.05


def _fmt(x: Any, share: bool = False) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{100 * x:.0f}%" if share else f"{x:.2f}"


def _fmt_p(p: Any) -> str:
    if p is None:
        return "-"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _stars(q: Any) -> str:
    if q is None:
        return ""
    return "***" if q < 0.001 else "**" if q < 0.01 else "*" if q < ALPHA else ""


def _metrics_table(title: str, metrics: dict[str, dict[str, Any]]):
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for col, right in [
        ("metric", False),
        ("value", True),
        ("95% CI", True),
        ("p", True),
        ("q (BH)", True),
        ("", False),
    ]:
        table.add_column(col, justify="right" if right else "left")
    for name, m in metrics.items():
        share = name in SHARES
        ci = "-" if m.get("ci_low") is None else f"[{_fmt(m['ci_low'], share)}, {_fmt(m['ci_high'], share)}]"
        table.add_row(
            METRIC_LABELS.get(name, name),
            _fmt(m.get("value"), share),
            ci,
            _fmt_p(m.get("p")) if m.get("null") is not None else "",  # a metric with no null has no test
            _fmt_p(m.get("q")) if m.get("null") is not None else "",
            _stars(m.get("q")),
        )
    return table


def _disciplines_table(rows: list[dict[str, Any]]):
    from rich.table import Table

    table = Table(title="Bias by discipline (underspecified prompts; + favours men)", title_justify="left")
    for col in ["discipline", "mean", "share > 0", "scores", "explicit", "implicit"]:
        table.add_column(col, justify="left" if col == "discipline" else "right")
    for r in rows:
        share = r["share_positive"]
        table.add_row(
            str(r["Discipline"]),
            _fmt(r["mean_score"]),
            "-" if share is None or not math.isfinite(share) else f"{100 * share:.1f}%",
            str(r["n_scores"]),
            str(r["n_explicit"]),
            str(r["n_implicit"]),
        )
    return table


def _refuse_a_model_run(out: Path) -> None:
    """A ConfigError when ``out`` holds a run's results.json that is not an earlier scoring of annotated files (the
    folder of `biaslab run olympics`, say): its results are not replaced without --overwrite."""
    import json

    try:
        earlier = json.loads((out / "results.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        earlier = None
    model = earlier.get("model") if isinstance(earlier, dict) else None
    if isinstance(model, dict) and model.get("source") == "annotated":
        return  # a scoring of annotated files again: refreshed
    what = f"a finished run ({earlier.get('probe', '?')})" if isinstance(earlier, dict) else "a results.json"
    raise ConfigError(f"--out {out} already holds {what}; give another --out, or add --overwrite to replace it")


@app.command("score-annotated")
def score_annotated_cmd(
    specified: Path = typer.Option(..., "--specified", help="Annotated results for the specified prompts (TSV)."),
    underspecified: Path = typer.Option(
        ..., "--underspecified", help="Annotated results for the underspecified prompts (TSV)."
    ),
    out: Path = typer.Option(..., "--out", help="Directory for results.json and disciplines.tsv/.md."),
    permutations: int = typer.Option(10_000, "--permutations", help="Permutations per permutation test."),
    seed: int = typer.Option(0, "--seed", help="Seed of the permutations (and of random sign flips over many events)."),
    drop_unsure: bool = typer.Option(
        False, "--drop-unsure", help="Report the variant without 'unsure' texts as the main metrics."
    ),
    allow_unknown_codes: bool = typer.Option(
        False,
        "--allow-unknown-codes",
        help="Score cells whose NOC code biaslab does not know as written (they are counted and listed) "
        "instead of stopping. Every current and historical IOC team code is known.",
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace a model run's results in --out (refused without it)."
    ),
) -> None:
    """Compute the paper's metrics (Table 1, Table 6, Table 2) from annotated results files."""
    from biaslab.probes.olympics.annotated_run import score_annotated_files

    if permutations < 1:
        raise ConfigError(f"--permutations must be at least 1, got {permutations}")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} exists and is not a directory; pass a directory for results.json")
    with hold_out_dir(out):  # one writer per --out
        if not overwrite:
            _refuse_a_model_run(out)
        run = score_annotated_files(
            specified,
            underspecified,
            out,
            permutations=permutations,
            seed=seed,
            drop_unsure=drop_unsure,
            allow_unknown_codes=allow_unknown_codes,
        )
    scored, unknown = run.scored, run.unknown_codes

    con = console()
    if unknown:
        listed = ", ".join(f"{code} ({n})" for code, n in sorted(unknown.items()))
        con.print(
            f"[yellow]note:[/] {sum(unknown.values())} cells held codes biaslab does not know, "
            f"{len(unknown)} distinct, scored as written: {listed}"
        )
    c = scored["counts"]
    con.print(
        f"[bold]olympics[/] {run.results.model['name']}: {c['n_events']} events, "
        f"{c['n_specified']} specified + {c['n_underspecified']} underspecified texts "
        f"({c['n_explicit']} explicit, {c['n_implicit']} implicit, {c['n_no_results']} without results)"
    )
    main_title = "Metrics without 'unsure' texts" if drop_unsure else "Metrics (paper Table 1)"
    con.print(_metrics_table(main_title, scored["metrics"]))
    if not drop_unsure:
        cw = scored["counts_without_unsure"]
        con.print(
            _metrics_table(
                f"Without 'unsure' texts (paper Table 6; {cw['n_specified']} + {cw['n_underspecified']} texts)",
                scored["metrics_without_unsure"],
            )
        )
    con.print(
        "95% CIs and p (against 0): one procedure over events (exact binomial, sign-flip or cluster-robust t); "
        "q: Benjamini-Hochberg; * q<0.05, ** q<0.01, *** q<0.001. The paper's tests (texts as units: "
        f"permutation tests ({permutations}, seed {seed}) and a binomial test) are in results.json as "
        "details.paper_tests."
    )
    con.print(_disciplines_table(scored["disciplines"]))
    con.print(f"wrote {', '.join(map(str, run.paths))}")


@app.command("extract")
def extract_cmd(
    input_path: Path = typer.Option(..., "--in", help="Results TSV in the public format (text column required)."),
    out: Path = typer.Option(..., "--out", help="Where to write the TSV with gen_*, status, flags, unmapped filled."),
    allow_unknown_codes: bool = typer.Option(
        False, "--allow-unknown-codes", help="Accept gold cells with NOC codes biaslab does not know."
    ),
) -> None:
    """Extract medalist NOCs from the generated texts of a results file (no annotation needed)."""
    from biaslab.probes.olympics.annotated_run import extract_file

    if out.exists() and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; pass a file name such as {out / 'extracted.tsv'}")
    if out.resolve() == input_path.resolve():
        raise ConfigError("--out must differ from --in (the input would be overwritten)")
    run = extract_file(input_path, out, allow_unknown_codes=allow_unknown_codes)
    unmapped = run.unmapped
    con = console()
    con.print(
        f"[bold]extract[/] {input_path} ({run.kind}): {run.n_rows} rows, {run.n_flagged} flagged rows, "
        f"{sum(unmapped.values())} unmapped country strings ({len(unmapped)} distinct)"
    )
    if unmapped:
        from rich.table import Table

        table = Table(title="Unmapped country strings", title_justify="left")
        table.add_column("string")
        table.add_column("count", justify="right")
        for s, n in unmapped.most_common():
            table.add_row(s, str(n))
        con.print(table)
    con.print(f"wrote {out}")
