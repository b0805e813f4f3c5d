"""A plain report page of tables and figures (predicate study, benchmark comparison).

Each table is ``{"title", "header": [...], "rows": [[...]], "note", "numeric": [column indexes]}``;
each figure ``{"title", "png_base64" or "svg", "caption"}``. Cells are escaped by Jinja2.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from biaslab.io import atomic_write_text
from biaslab.report.style import CSS


def render_tables_page(
    title: str, tables: Sequence[dict[str, Any]], figures: Sequence[dict[str, Any]] = (), meta: Sequence[str] = ()
) -> str:
    env = Environment(loader=PackageLoader("biaslab.report", "templates"), autoescape=select_autoescape(["html", "j2"]))
    tables = [{"note": "", "numeric": list(range(1, len(t["header"]))), **t} for t in tables]
    return env.get_template("tables.html.j2").render(
        title=title, tables=tables, figures=list(figures), meta=list(meta), css=CSS
    )


def write_tables_page(
    path: Path,
    title: str,
    tables: Sequence[dict[str, Any]],
    figures: Sequence[dict[str, Any]] = (),
    meta: Sequence[str] = (),
) -> Path:
    atomic_write_text(Path(path), render_tables_page(title, tables, figures, meta))
    return Path(path)


def fmt(value: Any, digits: int = 2, percent: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.{digits}f}" if percent else f"{value:.{digits}f}"


def fmt_ci(ci: Sequence[Any] | None, digits: int = 2, percent: bool = False) -> str:
    if not ci or ci[0] is None:
        return ""
    return f"[{fmt(ci[0], digits, percent)}, {fmt(ci[1], digits, percent)}]"
