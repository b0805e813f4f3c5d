"""How a comparison is shown: the terminal table (metrics as rows, fits 80 columns), Markdown or
TSV, JSON (cmp.json), and an HTML page styled like the run reports with forest plots."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from biaslab.io import atomic_write_text, json_safe
from biaslab.report.style import CSS

HEADER = ["metric", "A", "B", "B - A", "95% CI", "p", "q"]


def num(v: Any, signed: bool = False) -> str:
    """Three significant digits, at most three decimals (float noise such as 4e-16 shows as 0)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    v = float(v)
    a = abs(v)
    digits = 1 if a >= 10 else 2 if a >= 1 else 3
    v = round(v, digits) + 0.0
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


def ci_cell(c: dict[str, Any]) -> str:
    return f"[{num(c['ci_low'])}, {num(c['ci_high'])}]" if c.get("ci_low") is not None else ""


def pval(p: Any) -> str:
    if p is None:
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"




def pair_rows(cmp: dict[str, Any], k: int) -> list[list[str]]:
    b = cmp["runs"][k]["label"]
    return [[c["metric"], num(c["a"]), num(c["b"]), num(c["diff"], signed=True), ci_cell(c), pval(c["p"]), pval(c["q"])]
            for c in cmp["comparisons"] if c["run_b"] == b]


def pair_title(cmp: dict[str, Any], k: int) -> str:
    pair = cmp["pairs"][k - 1]
    return f"B = {cmp['runs'][k]['label']}  vs  A = {cmp['runs'][0]['label']}: {pair['design']} ({pair['note']})"


def print_comparison(cmp: dict[str, Any], console: Console) -> None:
    for k in range(1, len(cmp["runs"])):
        console.print(escape(pair_title(cmp, k)), soft_wrap=False)
        rows = pair_rows(cmp, k)
        t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 0))
        width = min(26, max([len(r[0]) for r in rows] + [6]))
        for h in HEADER:
            t.add_column(h, justify="left" if h == "metric" else "right", overflow="fold",
                         min_width=width if h == "metric" else None)
        for row in rows:
            t.add_row(*[escape(c) for c in row])
        console.print(t)
    console.print("q: Benjamini-Hochberg across all comparisons above; tests per metric in the JSON output.")


def render_text(cmp: dict[str, Any], suffix: str) -> str:
    """Markdown (default) or TSV: one table with the runs and the test of every comparison."""
    header = ["run B", *HEADER, "test", "n shared"]
    rows = []
    for k in range(1, len(cmp["runs"])):
        b = cmp["runs"][k]["label"]
        cs = [c for c in cmp["comparisons"] if c["run_b"] == b]
        rows += [[b, *r, c["test"], str(c["n_shared"])] for r, c in zip(pair_rows(cmp, k), cs)]
    if suffix == ".tsv":
        return "\n".join("\t".join(r) for r in [header, *rows]) + "\n"
    lines = [f"A = {cmp['runs'][0]['label']}", ""]
    lines += [f"- {pair_title(cmp, k)}" for k in range(1, len(cmp["runs"]))] + [""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def render_page(title: str, sections: Sequence[dict[str, Any]], meta: Sequence[str] = ()) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("biaslab.compare", "templates"), autoescape=select_autoescape(["j2"]))
    return env.get_template("page.html.j2").render(title=title, sections=list(sections), meta=list(meta), css=CSS)


def html_sections(cmp: dict[str, Any]) -> list[dict[str, Any]]:
    from biaslab.compare.forest import forest_plots

    several = len(cmp["runs"]) > 2
    cards = []
    for k in range(1, len(cmp["runs"])):
        cards.append({"title": pair_title(cmp, k), "header": HEADER + ["test"], "numeric": [1, 2, 3, 4, 5, 6],
                      "rows": [[*r, c["test"]] for r, c in
                               zip(pair_rows(cmp, k), [c for c in cmp["comparisons"]
                                                       if c["run_b"] == cmp["runs"][k]["label"]])]})
    plots = {"title": "", "svgs": forest_plots(cmp["comparisons"], several_pairs=several),
             "note": "Dots: difference B - A; bars: 95% CI; red: q < 0.05; dashed line: no difference."}
    return [{"title": "Differences", "intro": cmp["method"], "cards": cards},
            {"title": "Forest plots", "cards": [plots]}]


def write_comparison(cmp: dict[str, Any], out: Path) -> Path:
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix == ".json":
        text = json.dumps(json_safe(cmp), indent=2, ensure_ascii=False) + "\n"
    elif suffix in (".html", ".htm"):
        meta = [f"A = {cmp['runs'][0]['label']} ({cmp['runs'][0]['path']})"]
        meta += [f"B = {r['label']} ({r['path']})" for r in cmp["runs"][1:]]
        text = render_page("Comparison of runs", html_sections(cmp), meta)
    else:
        text = render_text(cmp, suffix)
    atomic_write_text(out, text)
    return out
