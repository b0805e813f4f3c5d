"""`biaslab compare`: one table across runs whose results share metric names.

For the Olympic probe this is the paper's Table 1 layout (model, Avg F1, knowledge-based,
explicit % and score, implicit % and score); significance marks come from the BH q values
stored in results.json (* q < 0.05, ** q < 0.01, *** q < 0.001).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from biaslab.errors import ConfigError
from biaslab.probing.results import atomic_write_text, read_results


def _mark(q: float | None) -> str:
    if q is None:
        return ""
    return "***" if q < 0.001 else "**" if q < 0.01 else "*" if q < 0.05 else ""


def _cell(name: str, metric: dict[str, Any] | None) -> str:
    if not metric or metric.get("value") is None:
        return "n/a"
    v = metric["value"]
    text = f"{100 * v:.0f}%" if name.endswith("_share") else f"{v:.2f}"
    return text + _mark(metric.get("q"))


def _model_name(results: dict[str, Any], path: Path) -> str:
    m = results.get("model", {})
    return str(m.get("model") or m.get("name") or path.name)


def comparison_rows(run_dirs: list[Path]) -> tuple[list[str], list[list[str]]]:
    loaded = [(Path(d), read_results(Path(d))) for d in run_dirs]
    probes = {r["probe"] for _, r in loaded}
    names = [n for n in loaded[0][1]["metrics"] if all(n in r["metrics"] for _, r in loaded)]
    if not names:
        raise ConfigError(f"the runs share no metric names (probes: {', '.join(sorted(probes))}); compare runs of the same probe")
    header = ["model"] + names
    rows = [[_model_name(r, d)] + [_cell(n, r["metrics"].get(n)) for n in names] for d, r in loaded]
    return header, rows


def compare_runs(run_dirs: list[Path], *, out: Path | None = None, console: Console | None = None) -> tuple[list[str], list[list[str]]]:
    header, rows = comparison_rows(run_dirs)
    table = Table(title="Comparison (* q<0.05, ** q<0.01, *** q<0.001, Benjamini-Hochberg)")
    for h in header:
        table.add_column(h.replace("_", " "), justify="left" if h == "model" else "right", overflow="fold")
    for row in rows:
        table.add_row(*row)
    (console or Console()).print(table)
    if out is not None:
        atomic_write_text(Path(out), render_table(header, rows, Path(out).suffix.lower()))
    return header, rows


def render_table(header: list[str], rows: list[list[str]], suffix: str) -> str:
    if suffix == ".tsv":
        return "\n".join("\t".join(r) for r in [header, *rows]) + "\n"
    if suffix in (".html", ".htm"):
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def compare_two_benchmarks(a_dirs: list[Path], b_dirs: list[Path] | None = None, *, metric: str = "bias_score",
                           out: Path | None = None, console: Console | None = None) -> dict[str, Any]:
    """Runs of two benchmarks on the same models: scores side by side, Pearson r overall and per
    group with a bootstrap CI over models, scatter plots in the HTML report (``--out x.html``).

    With ``b_dirs`` None, ``a_dirs`` must hold runs of exactly two benchmarks on the same models.
    """
    from biaslab.compare.benchmarks import compare_benchmarks, load_runs, scatter_figures, split_two_benchmarks, table_rows

    runs = load_runs(a_dirs)
    if b_dirs is None:
        split = split_two_benchmarks(runs, metric)
        if split is None:
            raise ConfigError("a benchmark comparison needs runs of exactly two benchmarks on the same models "
                              "(or give the second benchmark's runs with --against)")
        a_runs, b_runs = split
    else:
        a_runs, b_runs = runs, load_runs(b_dirs)
    cmp = compare_benchmarks(a_runs, b_runs, metric=metric)
    head, rows, chead, crows = table_rows(cmp)
    con = console or Console()
    t = Table(title=f"{cmp['metric']}: {cmp['benchmark_a']} vs {cmp['benchmark_b']}")
    for h in head:
        t.add_column(h, justify="left" if h == "model" else "right")
    for r in rows:
        t.add_row(*[escape_markup(c) for c in r])
    con.print(t)
    c = Table(title="Pearson r between the benchmarks over models (95% bootstrap CI over models)")
    for h in chead:
        c.add_column(h, justify="left" if h == "scope" else "right")
    for r in crows:
        c.add_row(*[escape_markup(x) for x in r])
    con.print(c)
    for side, names in (("first", cmp["only_a"]), ("second", cmp["only_b"])):
        if names:
            con.print(f"note: only in the {side} benchmark's runs (left out): {', '.join(names)}")
    if out is not None:
        out = Path(out)
        if out.suffix.lower() in (".html", ".htm"):
            from biaslab.report.tables import write_tables_page

            write_tables_page(out, f"Benchmark comparison: {cmp['benchmark_a']} vs {cmp['benchmark_b']}",
                              [{"title": "Scores per model", "header": head, "rows": rows},
                               {"title": "Correlation between the benchmarks", "header": chead, "rows": crows,
                                "note": "Pearson r over models; 95% percentile bootstrap CI with models resampled."}],
                              scatter_figures(cmp), [f"metric {cmp['metric']}; {len(rows)} models"])
        else:
            atomic_write_text(out, render_table(head, rows, out.suffix.lower()) + "\n"
                              + render_table(chead, crows, out.suffix.lower()))
    return cmp


def escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
