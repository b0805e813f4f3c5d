"""``biaslab olympics ...``: score annotated results files, extract medals from generated text."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import typer

from biaslab.errors import ConfigError

app = typer.Typer(
    name="olympics",
    help="Olympic results probe (\"Sports and Women's Sports\"): score annotated files, extract medals.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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


def _console():
    from rich.console import Console

    return Console(highlight=False)


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


def _check_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} exists and is not a directory; pass a directory for results.json")


def _model_name(specified: Path, underspecified: Path) -> str:
    return specified.stem if specified.stem == underspecified.stem else f"{specified.stem}+{underspecified.stem}"


def _disciplines_markdown(rows: list[dict[str, Any]], title: str) -> str:
    lines = [f"# {title}", "",
             "Mean per-text bias score on underspecified prompts by discipline (paper Table 2); "
             "positive favours men.", "",
             "| Discipline | mean score | share positive | scores | explicit | implicit | texts |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        share = "-" if r["share_positive"] is None or not math.isfinite(r["share_positive"]) \
            else f"{100 * r['share_positive']:.1f}%"
        mean = "-" if r["mean_score"] is None or not math.isfinite(r["mean_score"]) else f"{r['mean_score']:.2f}"
        lines.append(f"| {r['Discipline']} | {mean} | {share} | {r['n_scores']} | {r['n_explicit']} | "
                     f"{r['n_implicit']} | {r['n_texts']} |")
    return "\n".join(lines) + "\n"


def _metrics_table(title: str, metrics: dict[str, dict[str, Any]]):
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for col, just in [("metric", "left"), ("value", "right"), ("95% CI", "right"), ("p", "right"),
                      ("q (BH)", "right"), ("", "left")]:
        table.add_column(col, justify=just)
    for name, m in metrics.items():
        share = name in SHARES
        ci = "-" if m.get("ci_low") is None else f"[{_fmt(m['ci_low'], share)}, {_fmt(m['ci_high'], share)}]"
        table.add_row(METRIC_LABELS.get(name, name), _fmt(m.get("value"), share), ci,
                      _fmt_p(m.get("p")) if "p" in m else "", _fmt_p(m.get("q")) if "q" in m else "",
                      _stars(m.get("q")))
    return table


def _disciplines_table(rows: list[dict[str, Any]]):
    from rich.table import Table

    table = Table(title="Bias by discipline (underspecified prompts; + favours men)", title_justify="left")
    for col in ["discipline", "mean", "share > 0", "scores", "explicit", "implicit"]:
        table.add_column(col, justify="left" if col == "discipline" else "right")
    for r in rows:
        share = r["share_positive"]
        table.add_row(str(r["Discipline"]), _fmt(r["mean_score"]),
                      "-" if share is None or not math.isfinite(share) else f"{100 * share:.1f}%",
                      str(r["n_scores"]), str(r["n_explicit"]), str(r["n_implicit"]))
    return table


@app.command("score-annotated")
def score_annotated_cmd(
    specified: Path = typer.Option(..., "--specified", help="Annotated results for the specified prompts (TSV)."),
    underspecified: Path = typer.Option(..., "--underspecified",
                                        help="Annotated results for the underspecified prompts (TSV)."),
    out: Path = typer.Option(..., "--out", help="Directory for results.json and disciplines.tsv/.md."),
    permutations: int = typer.Option(10_000, "--permutations", help="Permutations per permutation test."),
    seed: int = typer.Option(0, "--seed", help="Seed for permutations and bootstrap."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples (over events) for 95% CIs."),
    drop_unsure: bool = typer.Option(False, "--drop-unsure",
                                     help="Report the variant without 'unsure' texts as the main metrics."),
    allow_unknown_codes: bool = typer.Option(
        False, "--allow-unknown-codes",
        help="Score cells whose NOC code biaslab does not know as written (they are counted and listed) "
             "instead of stopping. Every current and historical IOC team code is known."),
) -> None:
    """Compute the paper's metrics (Table 1, Table 6, Table 2) from annotated results files."""
    import pandas as pd

    from biaslab.data.registry import sha256_of
    from biaslab.probing.results import atomic_write_text, build_results, write_results
    from biaslab.probes.olympics.annotated import read_annotated
    from biaslab.probes.olympics.score import score_annotated

    if permutations < 1:
        raise ConfigError(f"--permutations must be at least 1, got {permutations}")
    if bootstrap < 0:
        raise ConfigError(f"--bootstrap must be 0 or more, got {bootstrap}")
    _check_out_dir(out)

    spec_df = read_annotated(specified, "specified", allow_unknown_codes=allow_unknown_codes)
    und_df = read_annotated(underspecified, "underspecified", allow_unknown_codes=allow_unknown_codes)
    unknown = spec_df.attrs["unknown_codes"] + und_df.attrs["unknown_codes"]
    scored = score_annotated(spec_df, und_df, drop_unsure=drop_unsure, n_permutations=permutations, seed=seed,
                             n_bootstrap=bootstrap, validate=False)

    results = build_results(
        probe="olympics",
        probe_version="1",
        model={"name": _model_name(specified, underspecified), "source": "annotated"},
        parameters=scored["parameters"],
        data={str(specified): sha256_of(specified), str(underspecified): sha256_of(underspecified)},
        metrics=scored["metrics"],
        n_items=scored["counts"]["n_events"],
        n_attempts=scored["counts"]["n_texts"],
        tests=scored["tests"],
        counts=scored["counts"],
        unknown_codes=dict(sorted(unknown.items())),
        disciplines=scored["disciplines"],
        metrics_without_unsure=scored["metrics_without_unsure"],
        tests_without_unsure=scored["tests_without_unsure"],
        counts_without_unsure=scored["counts_without_unsure"],
    )
    disc = pd.DataFrame(scored["disciplines"])
    disc_tsv = disc.to_csv(sep="\t", index=False, float_format="%.6g", lineterminator="\n")
    disc_md = _disciplines_markdown(scored["disciplines"], f"olympics: {results['model']['name']}")

    try:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "disciplines.tsv", disc_tsv)
        atomic_write_text(out / "disciplines.md", disc_md)
        path = write_results(out, results)
    except OSError as exc:
        raise ConfigError(f"cannot write results to {out} ({exc.strerror or type(exc).__name__}); "
                          f"pass a writable --out directory") from None

    console = _console()
    if unknown:
        listed = ", ".join(f"{code} ({n})" for code, n in sorted(unknown.items()))
        console.print(f"[yellow]note:[/] {sum(unknown.values())} cells held codes biaslab does not know, "
                      f"{len(unknown)} distinct, scored as written: {listed}")
    c = scored["counts"]
    console.print(f"[bold]olympics[/] {results['model']['name']}: {c['n_events']} events, "
                  f"{c['n_specified']} specified + {c['n_underspecified']} underspecified texts "
                  f"({c['n_explicit']} explicit, {c['n_implicit']} implicit, {c['n_no_results']} without results)")
    main_title = "Metrics without 'unsure' texts" if drop_unsure else "Metrics (paper Table 1)"
    console.print(_metrics_table(main_title, scored["metrics"]))
    if not drop_unsure:
        cw = scored["counts_without_unsure"]
        console.print(_metrics_table(
            f"Without 'unsure' texts (paper Table 6; {cw['n_specified']} + {cw['n_underspecified']} texts)",
            scored["metrics_without_unsure"]))
    console.print(f"p: permutation tests ({permutations}) for knowledge-based and implicit, binomial for explicit; "
                  f"q: Benjamini-Hochberg; * q<0.05, ** q<0.01, *** q<0.001. CIs: {bootstrap} bootstrap "
                  f"resamples of events, seed {seed}.")
    console.print(_disciplines_table(scored["disciplines"]))
    console.print(f"wrote {path}, {out / 'disciplines.tsv'}, {out / 'disciplines.md'}")


def _unmapped_items(value: Any) -> list[str]:
    """The unmapped country strings of one row (a list, or a string joined by ';', '|' or tabs)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value).strip()
    if not text:
        return []
    if text.startswith("["):
        import json

        try:
            parsed = json.loads(text)
            if isinstance(parsed, list):
                return [str(v).strip() for v in parsed if str(v).strip()]
        except ValueError:
            pass
    for sep in (";", "|", "\t"):
        if sep in text:
            return [t.strip() for t in text.split(sep) if t.strip()]
    return [text]


def _flagged(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return len(value) > 0
    return bool(str(value).strip())


@app.command("extract")
def extract_cmd(
    input_path: Path = typer.Option(..., "--in", help="Results TSV in the public format (text column required)."),
    out: Path = typer.Option(..., "--out", help="Where to write the TSV with gen_*, status, flags, unmapped filled."),
    allow_unknown_codes: bool = typer.Option(False, "--allow-unknown-codes",
                                             help="Accept gold cells with NOC codes biaslab does not know."),
) -> None:
    """Extract medalist NOCs from the generated texts of a results file (no annotation needed)."""
    from biaslab.probes.olympics.annotated import read_annotated, write_annotated

    if out.exists() and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; pass a file name such as {out / 'extracted.tsv'}")
    if out.resolve() == input_path.resolve():
        raise ConfigError("--out must differ from --in (the input would be overwritten)")
    df = read_annotated(input_path, check_generated=False, allow_unknown_codes=allow_unknown_codes)
    kind = df.attrs["kind"]
    try:
        from biaslab.probes.olympics.extract import extract_frame
    except ImportError as exc:  # pragma: no cover - only while the extractor is missing
        raise ConfigError(f"the medal extractor is not available ({exc})") from None
    result = extract_frame(df)
    try:
        write_annotated(out, result, kind)
    except OSError as exc:
        raise ConfigError(f"cannot write {out} ({exc.strerror or type(exc).__name__}); "
                          f"pass a writable --out file") from None

    flagged = sum(_flagged(v) for v in result["flags"]) if "flags" in result.columns else 0
    unmapped: Counter[str] = Counter()
    if "unmapped" in result.columns:
        for v in result["unmapped"]:
            unmapped.update(_unmapped_items(v))
    console = _console()
    console.print(f"[bold]extract[/] {input_path} ({kind}): {len(result)} rows, {flagged} flagged rows, "
                  f"{sum(unmapped.values())} unmapped country strings ({len(unmapped)} distinct)")
    if unmapped:
        from rich.table import Table

        table = Table(title="Unmapped country strings", title_justify="left")
        table.add_column("string")
        table.add_column("count", justify="right")
        for s, n in unmapped.most_common():
            table.add_row(s, str(n))
        console.print(table)
    console.print(f"wrote {out}")
