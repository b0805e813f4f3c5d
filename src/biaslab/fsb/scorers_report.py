"""report.html of ``fsb scorers``: the agreement table, the ceiling, and a scatter per scorer.

The scatters are inline SVG drawn with presentation attributes only (no scripts, no style
attributes, no external resources), so the report works offline and under a strict CSP.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

W, H = 380, 300
LEFT, RIGHT, TOP, BOTTOM = 52, 14, 14, 44


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=raw)
    start = math.ceil(lo / step) * step
    return [round(start + k * step, 10) for k in range(int((hi - start) / step + 1e-9) + 1)]


def _fmt_tick(v: float) -> str:
    return f"{v:.3g}"


def scatter_svg(
    human: Sequence[float], scores: Sequence[float], *, label: str, intercept: float | None, slope: float | None
) -> Markup:
    """The scorer's score (x) against the human score (y, [0, 1]), with the least-squares line of
    the human score on the scorer's score (the fit whose MAE the table reports)."""
    h, s = np.asarray(human, dtype=float), np.asarray(scores, dtype=float)
    ok = np.isfinite(h) & np.isfinite(s)
    h, s = h[ok], s[ok]
    xlo, xhi = (float(s.min()), float(s.max())) if s.size else (0.0, 1.0)
    if xhi <= xlo:
        xlo, xhi = xlo - 0.5, xhi + 0.5
    pad = 0.04 * (xhi - xlo)
    xlo, xhi = xlo - pad, xhi + pad
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (x - xlo) / (xhi - xlo) * pw

    def py(y: float) -> float:
        return TOP + ph - (y + 0.02) / 1.04 * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="human score against {escape(label)}">',
        f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#ffffff" stroke="#c9ced6"/>',
    ]
    for t in _ticks(xlo, xhi):
        parts.append(
            f'<line x1="{px(t):.1f}" y1="{TOP + ph}" x2="{px(t):.1f}" y2="{TOP + ph + 4}" stroke="#5a6270"/>'
            f'<text x="{px(t):.1f}" y="{TOP + ph + 16}" font-size="10" text-anchor="middle" '
            f'fill="#5a6270">{_fmt_tick(t)}</text>'
        )
    for t in _ticks(0.0, 1.0):
        parts.append(
            f'<line x1="{LEFT - 4}" y1="{py(t):.1f}" x2="{LEFT}" y2="{py(t):.1f}" stroke="#5a6270"/>'
            f'<text x="{LEFT - 6}" y="{py(t) + 3:.1f}" font-size="10" text-anchor="end" '
            f'fill="#5a6270">{_fmt_tick(t)}</text>'
        )
    parts.append(
        f'<text x="{LEFT + pw / 2:.1f}" y="{H - 8}" font-size="11" text-anchor="middle" fill="#1d2330">'
        f"{escape(label)}</text>"
    )
    parts.append(
        f'<text x="12" y="{TOP + ph / 2:.1f}" font-size="11" text-anchor="middle" fill="#1d2330" '
        f'transform="rotate(-90 12 {TOP + ph / 2:.1f})">human score (BWS, normalised)</text>'
    )
    parts += [
        f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.2" fill="#3b6ea8" fill-opacity="0.4"/>' for x, y in zip(s, h)
    ]
    if intercept is not None and slope is not None:
        ends = [(x, intercept + slope * x) for x in (xlo, xhi)]
        parts.append(
            f'<line x1="{px(ends[0][0]):.1f}" y1="{py(ends[0][1]):.1f}" x2="{px(ends[1][0]):.1f}" '
            f'y2="{py(ends[1][1]):.1f}" stroke="#1d2330" stroke-width="1.5"/>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if math.isfinite(value) else "n/a"
    return str(value)


def _spread(sd: Any) -> str:
    """An SD over random splits: 4 decimals, or two significant digits below 0.00005 (never "0.0000")."""
    if not isinstance(sd, (int, float)) or not math.isfinite(sd):
        return "n/a"
    return f"{sd:.4f}" if sd >= 0.00005 else f"{sd:.2g}"


def render_scorers_report(results: dict[str, Any], rated, columns: dict[str, list[float]], title: str) -> str:
    plots = []
    for s in results["scorers"]:
        plots.append(
            {
                "scorer": s["scorer"],
                "svg": scatter_svg(
                    rated.human,
                    columns[s["scorer"]],
                    label=s["scorer"],
                    intercept=s["fit"]["intercept"],
                    slope=s["fit"]["slope"],
                ),
            }
        )
    env = Environment(loader=PackageLoader("biaslab.fsb", "templates"), autoescape=select_autoescape(["html", "j2"]))
    env.filters["fmt"] = _fmt
    env.filters["spread"] = _spread
    return env.get_template("scorers.html.j2").render(r=results, plots=plots, title=title)
