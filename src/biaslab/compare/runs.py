"""`biaslab compare --table`: one table across runs whose results share metric names.

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
from biaslab.io import atomic_write_text
from biaslab.probing.results import read_results
from biaslab.probing.schema import RunResults


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


def _model_name(results: RunResults, path: Path) -> str:
    m = results.model
    return str(m.get("model") or m.get("name") or path.name)


def comparison_rows(run_dirs: list[Path]) -> tuple[list[str], list[list[str]]]:
    loaded = [(Path(d), read_results(Path(d))) for d in run_dirs]
    probes = {r.probe for _, r in loaded}
    names = [n for n in loaded[0][1].metrics if all(n in r.metrics for _, r in loaded)]
    if not names:
        raise ConfigError(
            f"the runs share no metric names (probes: {', '.join(sorted(probes))}); compare runs of the same probe"
        )
    header = ["run", "probe", "model"] + names
    rows = [
        [(d if d.is_dir() else d.parent).name, r.probe, _model_name(r, d)] + [_cell(n, r.metric(n)) for n in names]
        for d, r in loaded
    ]
    return header, rows


def compare_runs(
    run_dirs: list[Path], *, out: Path | None = None, console: Console | None = None
) -> tuple[list[str], list[list[str]]]:
    header, rows = comparison_rows(run_dirs)
    table = Table(title="Comparison (* q<0.05, ** q<0.01, *** q<0.001, Benjamini-Hochberg)")
    for h in header:
        left = h in ("run", "probe", "model")
        table.add_column(h.replace("_", " "), justify="left" if left else "right", overflow="fold")
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


def escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
