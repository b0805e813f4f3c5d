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


def scatter_svg(human: Sequence[float], scores: Sequence[float], *, label: str, intercept: float | None,
                slope: float | None) -> Markup:
    """Human score (x, [0, 1]) against the scorer's score (y), with the linear fit of human on scorer."""
    h, s = np.asarray(human, dtype=float), np.asarray(scores, dtype=float)
    ok = np.isfinite(h) & np.isfinite(s)
    h, s = h[ok], s[ok]
    ylo, yhi = (float(s.min()), float(s.max())) if s.size else (0.0, 1.0)
    if yhi <= ylo:
        ylo, yhi = ylo - 0.5, yhi + 0.5
    pad = 0.04 * (yhi - ylo)
    ylo, yhi = ylo - pad, yhi + pad
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (x + 0.02) / 1.04 * pw

    def py(y: float) -> float:
        return TOP + ph - (y - ylo) / (yhi - ylo) * ph

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
             f'aria-label="{escape(label)} against human score">',
             f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#ffffff" stroke="#c9ced6"/>']
    for t in _ticks(0.0, 1.0):
        parts.append(f'<line x1="{px(t):.1f}" y1="{TOP + ph}" x2="{px(t):.1f}" y2="{TOP + ph + 4}" stroke="#5a6270"/>'
                     f'<text x="{px(t):.1f}" y="{TOP + ph + 16}" font-size="10" text-anchor="middle" '
                     f'fill="#5a6270">{_fmt_tick(t)}</text>')
    for t in _ticks(ylo, yhi):
        parts.append(f'<line x1="{LEFT - 4}" y1="{py(t):.1f}" x2="{LEFT}" y2="{py(t):.1f}" stroke="#5a6270"/>'
                     f'<text x="{LEFT - 6}" y="{py(t) + 3:.1f}" font-size="10" text-anchor="end" '
                     f'fill="#5a6270">{_fmt_tick(t)}</text>')
    parts.append(f'<text x="{LEFT + pw / 2:.1f}" y="{H - 8}" font-size="11" text-anchor="middle" fill="#1d2330">'
                 f'human score (BWS, normalised)</text>')
    parts.append(f'<text x="12" y="{TOP + ph / 2:.1f}" font-size="11" text-anchor="middle" fill="#1d2330" '
                 f'transform="rotate(-90 12 {TOP + ph / 2:.1f})">{escape(label)}</text>')
    parts += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.2" fill="#3b6ea8" fill-opacity="0.4"/>'
              for x, y in zip(h, s)]
    if intercept is not None and slope is not None and slope != 0:
        # the fit is human = a + b * scorer; drawn as scorer = (human - a) / b, clipped to the plot
        xs = np.array([0.0, 1.0])
        ys = (xs - intercept) / slope
        ys = np.clip(ys, ylo, yhi)
        xs = intercept + slope * ys
        parts.append(f'<line x1="{px(xs[0]):.1f}" y1="{py(ys[0]):.1f}" x2="{px(xs[1]):.1f}" y2="{py(ys[1]):.1f}" '
                     f'stroke="#c0392b" stroke-width="1.5"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if math.isfinite(value) else "n/a"
    return str(value)


def render_scorers_report(results: dict[str, Any], rated, columns: dict[str, list[float]], title: str) -> str:
    plots = []
    for s in results["scorers"]:
        plots.append({"scorer": s["scorer"], "svg": scatter_svg(rated.human, columns[s["scorer"]], label=s["scorer"],
                                                                 intercept=s["fit"]["intercept"],
                                                                 slope=s["fit"]["slope"])})
    env = Environment(loader=PackageLoader("biaslab.fsb", "templates"), autoescape=select_autoescape(["html", "j2"]))
    env.filters["fmt"] = _fmt
    return env.get_template("scorers.html.j2").render(r=results, plots=plots, title=title)
