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

from biaslab.compare.families import as_read
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


def pval(p: Any) -> str:
    if p is None:
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def ci_cell(c: dict[str, Any]) -> str:
    if c.get("ci_low") is not None and c.get("ci_high") is not None:
        return f"[{num(c['ci_low'])}, {num(c['ci_high'])}]"
    return "too small" if c.get("too_small") else "no interval" if c.get("diff") is not None else ""


def pair_comparisons(cmp: dict[str, Any], k: int, diagnostic: bool | None = None) -> list[dict[str, Any]]:
    """The rows of the k-th pair (tested metrics first, then diagnostics; or only one kind)."""
    b = cmp["runs"][k]["label"]
    rows = [c for c in cmp["comparisons"] if c["run_b"] == b]
    if diagnostic is not None:
        return [c for c in rows if bool(c.get("diagnostic")) == diagnostic]
    return [c for c in rows if not c.get("diagnostic")] + [c for c in rows if c.get("diagnostic")]


def row_cells(c: dict[str, Any]) -> list[str]:
    q = "diagnostic" if c.get("diagnostic") else pval(c.get("q"))
    r = as_read(c)
    return [c["metric"], num(r["a"]), num(r["b"]), num(r["diff"], signed=True), ci_cell(r), pval(c["p"]), q]


def pair_rows(cmp: dict[str, Any], k: int) -> list[list[str]]:
    return [row_cells(c) for c in pair_comparisons(cmp, k)]


def families_text(cmp: dict[str, Any]) -> str:
    """The footnote: the q families, the diagnostic rows (only when some are shown) and the reading scales."""
    fams = cmp.get("families") or {}
    parts = [f"{name} ({n})" for name, n in fams.items()]
    text = (
        "q: Benjamini-Hochberg within each family: " + "; ".join(parts) + "."
        if parts
        else "q: Benjamini-Hochberg (no tested rows)."
    )
    rows = cmp.get("comparisons") or []
    if any(c.get("diagnostic") for c in rows):
        text += " Rows marked diagnostic measure no bias direction: no q, never flagged."
    scales: dict[float, list[str]] = {}
    for c in rows:
        base = c["metric"].split(":")[0]
        if float(c.get("scale") or 1.0) != 1.0 and base not in scales.get(c["scale"], []):
            scales.setdefault(c["scale"], []).append(base)
    for s, names in scales.items():
        text += f" {', '.join(names)}: values x {s:g}, as the verdicts read them."
    return text


def pair_title(cmp: dict[str, Any], k: int) -> str:
    pair = cmp["pairs"][k - 1]
    return f"B = {cmp['runs'][k]['label']}  vs  A = {cmp['runs'][0]['label']}: {pair['design']} ({pair['note']})"


def print_comparison(cmp: dict[str, Any], console: Console) -> None:
    for k in range(1, len(cmp["runs"])):
        console.print(escape(pair_title(cmp, k)), soft_wrap=False)
        b = cmp["runs"][k]["label"]
        for v in cmp.get("verdicts") or []:
            if v["run_b"] == b:
                console.print(escape("verdict: " + v["text"]))
        for diagnostic in (False, True):
            rows = [row_cells(c) for c in pair_comparisons(cmp, k, diagnostic)]
            if not rows:
                continue
            if diagnostic:
                console.print("diagnostics (no bias direction; not tested for bias):")
            t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 0))
            for h in HEADER:  # names fold onto further lines, never cut: two names never look alike
                t.add_column(
                    h,
                    justify="left" if h == "metric" else "right",
                    overflow="fold",
                    min_width=min(30, max(len(r[0]) for r in rows)) if h == "metric" else None,
                )
            for row in rows:
                t.add_row(*[escape(c) for c in row])
            console.print(t)
    console.print(escape(families_text(cmp)) + " Tests per metric in the JSON output.")


def render_text(cmp: dict[str, Any], suffix: str) -> str:
    """Markdown (default) or TSV: one table with the runs and the test of every comparison."""
    header = ["run B", *HEADER, "test", "n shared"]
    rows = []
    for k in range(1, len(cmp["runs"])):
        b = cmp["runs"][k]["label"]
        cs = pair_comparisons(cmp, k)
        rows += [[b, *r, c["test"], str(c["n_shared"])] for r, c in zip(pair_rows(cmp, k), cs)]
    if suffix == ".tsv":
        return "\n".join("\t".join(r) for r in [header, *rows]) + "\n"
    lines = [f"A = {cmp['runs'][0]['label']}", ""]
    lines += [f"- {pair_title(cmp, k)}" for k in range(1, len(cmp["runs"]))] + [""]
    lines += [f"- verdict: {v['text']}" for v in cmp.get("verdicts") or []] + ["", families_text(cmp), ""]
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
        cards.append(
            {
                "title": pair_title(cmp, k),
                "header": HEADER + ["test"],
                "numeric": [1, 2, 3, 4, 5, 6],
                "rows": [[*r, c["test"]] for r, c in zip(pair_rows(cmp, k), pair_comparisons(cmp, k))],
            }
        )
    plots = {
        "title": "",
        "svgs": forest_plots(cmp["comparisons"], several_pairs=several),
        "note": "Dots: difference B - A; bars: 95% CI; red: q < 0.05 within its family; hollow grey dots: "
        "too small for an interval; dashed line: no difference. Diagnostics are not drawn.",
    }
    verdicts = (
        [
            {
                "title": "Verdicts",
                "header": ["verdict"],
                "numeric": [],
                "rows": [[v["text"]] for v in cmp.get("verdicts") or []],
            }
        ]
        if cmp.get("verdicts")
        else []
    )
    return [
        {"title": "Differences", "intro": cmp["method"] + ". " + families_text(cmp), "cards": verdicts + cards},
        {"title": "Forest plots", "cards": [plots]},
    ]


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
