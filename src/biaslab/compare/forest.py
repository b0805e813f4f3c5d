"""Forest plots of differences as inline SVG (no scripts, no external resources).

One plot per metric (``bias_score`` with its ``bias_score:<group>`` rows, ``mean_ll_diff``, ...),
so that every plot has one unit on its x axis; diagnostics (``diagnostic: true``) are not drawn. A row
is a difference with its 95% CI; red rows have q < 0.05 within their family; a row without an interval
("too small") is a hollow grey dot labelled as such, never drawn at full weight; the dashed line is 0
(no difference). Long labels are wrapped, never cut.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from biaslab.compare.families import as_read

ROW = 22
LEFT = 270
PLOT = 380
RIGHT = 130
TOP = 26


def _x(v: float, lo: float, hi: float) -> float:
    return LEFT + (v - lo) / (hi - lo) * PLOT


def _lines(label: str, width: int = 42) -> list[str]:
    """A row label in lines that fit left of the plot (about 6 px a character at font size 11), nothing cut."""
    return [label[i : i + width] for i in range(0, len(label), width)] or [""]


def _nice(v: float) -> str:
    return f"{v:.3g}"


def forest_svg(rows: Sequence[dict[str, Any]], title: str) -> str:
    """``rows``: ``{"label", "diff", "ci_low", "ci_high", "q"}``; an SVG element as a string."""
    rows = [r for r in rows if r.get("diff") is not None and math.isfinite(r["diff"])]
    if not rows:
        return ""
    vals = [0.0] + [
        v for r in rows for v in (r["diff"], r.get("ci_low"), r.get("ci_high")) if v is not None and math.isfinite(v)
    ]
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.08 or 1.0
    lo, hi = lo - pad, hi + pad
    height = TOP + ROW * len(rows) + 30
    width = LEFT + PLOT + RIGHT
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{width}px" role="img" aria-label="{html.escape(title)}">',
        f'<text x="4" y="16" font-size="13" font-weight="600">{html.escape(title)}</text>',
    ]
    x0 = _x(0.0, lo, hi)
    bottom = TOP + ROW * len(rows)
    out.append(f'<line x1="{x0:.1f}" y1="{TOP - 4}" x2="{x0:.1f}" y2="{bottom}" stroke="#888" stroke-dasharray="4 3"/>')
    for i, r in enumerate(rows):
        y = TOP + ROW * i + ROW / 2
        sig = r.get("q") is not None and r["q"] < 0.05 and not r.get("diagnostic")
        color = "#c0392b" if sig else "#3b6ea8"
        lines = _lines(str(r["label"]))
        spans = "".join(
            f'<tspan x="{LEFT - 8}" dy="{0 if j == 0 else 11}">{html.escape(t)}</tspan>' for j, t in enumerate(lines)
        )
        out.append(
            f'<text x="{LEFT - 8}" y="{y + 4 - 5.5 * (len(lines) - 1):.1f}" font-size="11" '
            f'text-anchor="end">{spans}</text>'
        )
        has_ci = r.get("ci_low") is not None and r.get("ci_high") is not None
        if has_ci:
            out.append(
                f'<line x1="{_x(r["ci_low"], lo, hi):.1f}" y1="{y:.1f}" x2="{_x(r["ci_high"], lo, hi):.1f}" '
                f'y2="{y:.1f}" stroke="{color}" stroke-width="2.5"/>'
            )
            out.append(f'<circle cx="{_x(r["diff"], lo, hi):.1f}" cy="{y:.1f}" r="4" fill="{color}"/>')
            note = _nice(r["diff"])
        else:  # no interval: a hollow grey dot, the reason in its tooltip
            why = html.escape(str(r.get("reason") or "no interval"))
            out.append(
                f'<circle cx="{_x(r["diff"], lo, hi):.1f}" cy="{y:.1f}" r="4" fill="none" stroke="#999" '
                f'stroke-width="1.2"><title>{why}</title></circle>'
            )
            note = f"{_nice(r['diff'])} ({'too small' if r.get('too_small') else 'no interval'})"
        out.append(f'<text x="{LEFT + PLOT + 6}" y="{y + 4:.1f}" font-size="11">{html.escape(note)}</text>')
    for v in (lo + pad, 0.0, hi - pad):
        out.append(
            f'<text x="{_x(v, lo, hi):.1f}" y="{bottom + 16}" font-size="10" text-anchor="middle" '
            f'fill="#555">{_nice(v)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def forest_plots(comparisons: Sequence[dict[str, Any]], *, several_pairs: bool) -> list[str]:
    """One SVG per metric family of ``comparisons`` (rows of cmp.json)."""
    families: dict[str, list[dict[str, Any]]] = {}
    for c in comparisons:
        if c.get("diagnostic"):
            continue
        label = c["metric"] + (f"  ({c['run_b']})" if several_pairs else "")
        families.setdefault(c["metric"].split(":")[0], []).append({**as_read(c), "label": label})
    return [s for name, rows in families.items() if (s := forest_svg(rows, _title(name, rows[0].get("scale"))))]


def _title(metric: str, scale: Any) -> str:
    times = f" (x {float(scale):g})" if scale and float(scale) != 1.0 else ""
    return f"{metric}{times}: difference B - A with 95% CI"
