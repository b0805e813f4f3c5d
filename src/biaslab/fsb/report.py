"""Write ``fsb analyze`` outputs: results.json, CSV tables, report.html with figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from biaslab import __version__
from biaslab.io import all_or_nothing, atomic_write_text, json_safe
from biaslab.report.plots import fig_to_base64, new_figure
from biaslab.spreadsheet_cells import safe_cell

__all__ = ["build_results", "write_outputs"]

SCHEMA = "biaslab.fsb.analyze/1"


def build_results(analysis: dict, *, inputs: dict, parameters: dict, n_unscored: int, top: int) -> dict:
    pmi = analysis["pmi"]
    pmi_top = {
        int(b): g.head(top)[["word", "pmi", "count_in_bin", "count_total"]].to_dict("records")
        for b, g in pmi.groupby("bin", sort=True)
    }
    comparisons = []
    for c in analysis["log_odds"]:
        comparisons.append(
            {
                "a": c["a"],
                "b": c["b"],
                "file": _lo_name(c["a"], c["b"]),
                "vocabulary": int(len(c["table"])),
                "top_a": [{"ngram": t, "z": z} for t, z in c["top_a"]],
                "top_b": [{"ngram": t, "z": z} for t, z in c["top_b"]],
            }
        )
    crosstabs = {
        col: {str(v): {k: int(x) for k, x in row.items()} for v, row in ct.iterrows()}
        for col, ct in analysis["crosstabs"].items()
    }
    return json_safe(
        {
            "schema": SCHEMA,
            "biaslab_version": __version__,
            "inputs": inputs,
            "parameters": parameters,
            "n_items": int(analysis["bins"]["count"].sum()),
            "n_unscored": n_unscored,
            "bins": analysis["bins"].to_dict("records"),
            "histogram": analysis["histogram"].to_dict("records"),
            "crosstabs": crosstabs,
            "pmi_top": pmi_top,
            "log_odds": comparisons,
        }
    )


def _lo_name(a: int, b: int) -> str:
    return f"logodds_bin{a}_vs_bin{b}.csv"


def _csv(df: pd.DataFrame, index: bool = False) -> str:
    """A table as CSV; its text cells (words of the texts, values of their columns) never spreadsheet formulas."""

    def safe(v: Any) -> Any:
        return safe_cell(v) if isinstance(v, str) else v

    df = df.map(safe).rename(index=safe, columns=safe)
    return df.to_csv(index=index, lineterminator="\n", float_format="%.6g")


def _histogram_figure(hist: pd.DataFrame, thresholds) -> str:
    fig, ax = new_figure(7.0, 3.6)
    labels = [f"{lo:.1f}-{hi:.1f}" for lo, hi in zip(hist["low"], hist["high"])]
    ax.bar(range(len(hist)), hist["count"], color="#4c78a8")
    ax.set_xticks(range(len(hist)), labels, rotation=0, fontsize=8)
    for i, c in enumerate(hist["count"]):
        ax.text(i, c, str(int(c)), ha="center", va="bottom", fontsize=8)
    for t in thresholds:  # bin thresholds, in histogram-bar units
        ax.axvline(t * len(hist) - 0.5, color="#1d2330", ls="--", lw=1.2, zorder=3)
    ax.set_xlabel("normalised score (bins of 0.1; dashed: thresholds of the score bins)")
    ax.set_ylabel("texts")
    return fig_to_base64(fig)


def _stacked_figure(ct: pd.DataFrame, col: str) -> str:
    fig, ax = new_figure(7.0, 3.6)
    cmap = __import__("matplotlib").colormaps["tab10"]
    bottom = np.zeros(ct.shape[1])
    x = np.arange(ct.shape[1])
    for i, (value, row) in enumerate(ct.iterrows()):
        ax.bar(x, row.to_numpy(), bottom=bottom, label=str(value), color=cmap(i % 10))
        bottom += row.to_numpy()
    ax.set_xticks(x, [c.replace("bin", "bin ") for c in ct.columns])
    ax.set_ylabel("texts")
    ax.legend(title=col, fontsize=8, frameon=False, bbox_to_anchor=(1.01, 1), loc="upper left")
    return fig_to_base64(fig)


def _crosstab_html(ct: pd.DataFrame) -> str:
    shares = ct.div(ct.sum(axis=1).replace(0, np.nan), axis=0)
    rows = []
    for value, row in ct.iterrows():
        cells = "".join(
            f'<td class="num">{int(n)} ({100 * s:.0f}%)</td>' if np.isfinite(s) else f'<td class="num">{int(n)}</td>'
            for n, s in zip(row, shares.loc[value])
        )
        rows.append(f'<tr><td>{_esc(value)}</td>{cells}<td class="num">{int(row.sum())}</td></tr>')
    head = "".join(f'<th class="num">{c.replace("bin", "bin ")}</th>' for c in ct.columns)
    total = "".join(f'<td class="num"><b>{int(v)}</b></td>' for v in ct.sum(axis=0))
    return (
        f'<table><tr><th>{_esc(ct.index.name)}</th>{head}<th class="num">total</th></tr>{"".join(rows)}'
        f'<tr><td><b>total</b></td>{total}<td class="num"><b>{int(ct.values.sum())}</b></td></tr></table>'
        f'<p class="meta">Counts (share of the row).</p>'
    )


def _esc(value: Any) -> str:
    from markupsafe import escape

    return str(escape(str(value)))


def render_html(results: dict, analysis: dict, title: str) -> str:
    figures = [
        {
            "title": "Histogram of scores",
            "png": _histogram_figure(analysis["histogram"], results["parameters"]["thresholds"]),
            "caption": "Texts per 0.1-wide score interval (paper Figure 1).",
            "table": "",
        }
    ]
    for col, ct in analysis["crosstabs"].items():
        figures.append(
            {
                "title": f"{col} by score bin",
                "png": _stacked_figure(ct, col),
                "caption": f"Texts of each {col} in each score bin (paper Figures 2 and 3 for seed and prompt type).",
                "table": _crosstab_html(ct),
            }
        )
    env = Environment(loader=PackageLoader("biaslab.fsb", "templates"), autoescape=select_autoescape(["html", "j2"]))
    return env.get_template("analyze.html.j2").render(r=results, figures=figures, title=title)


def write_outputs(out: Path, analysis: dict, results: dict, title: str) -> list[Path]:
    """Write every file into ``out``; return their paths (results.json last)."""
    files: dict[str, str] = {
        "bins.csv": _csv(analysis["bins"]),
        "histogram.csv": _csv(analysis["histogram"]),
        "pmi.csv": _csv(analysis["pmi"]),
    }
    for col, ct in analysis["crosstabs"].items():
        files[f"crosstab_{_safe(col)}.csv"] = _csv(ct, index=True)
    for c in analysis["log_odds"]:
        files[_lo_name(c["a"], c["b"])] = _csv(c["table"].sort_values("z", ascending=False, kind="stable"))
    files["report.html"] = render_html(results, analysis, title)
    files["results.json"] = json.dumps(results, indent=2, ensure_ascii=False) + "\n"
    paths = []
    with all_or_nothing():  # every file, or (one cannot be written) none: an earlier analysis stays whole
        for name, text in files.items():
            atomic_write_text(out / name, text)
            paths.append(out / name)
    return paths


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(name))
