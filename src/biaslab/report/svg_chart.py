"""Interval charts as inline SVG: one row per group, a dot for the value, a bar for its 95% CI.

The paired-sentence, BOLD and HolisticBias reports draw this chart. Written as SVG text it needs
no plotting library (matplotlib's import alone is most of a second on two cores, which a short
run would pay in its report), stays sharp at any zoom, and its labels are real text that a
reader can search and copy. Every label is escaped; the page's CSP allows inline SVG (no script).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

ROW_PX = 26
LABEL_PX = 7.0  # rough width of one label character at 12 px
PLOT_PX = 420
FONT = "font-family='system-ui,-apple-system,Segoe UI,Roboto,sans-serif' font-size='12'"


@dataclass(frozen=True)
class Marker:
    """An extra mark on a row (e.g. the value after a correction), drawn as a cross."""

    value: float
    color: str = "#c0392b"  # red: the marks the charts draw are results with q < 0.05


@dataclass(frozen=True)
class IntervalRow:
    label: str
    value: float
    low: float | None = None
    high: float | None = None
    color: str = "#3b6ea8"
    markers: Sequence[Marker] = field(default_factory=tuple)


def _nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of ten)."""
    span = hi - lo
    if span <= 0 or not math.isfinite(span):
        return [lo]
    raw = span / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [round(i * step, 10) + 0.0 for i in range(first, last + 1)]  # + 0.0: no "-0"


def _fmt(v: float) -> str:
    return f"{v:g}"


def _limits(
    rows: Sequence[IntervalRow], xlim: tuple[float, float] | None, reference: float | None
) -> tuple[float, float]:
    if xlim is not None:
        return xlim
    values = [v for r in rows for v in (r.value, r.low, r.high, *(m.value for m in r.markers)) if v is not None]
    if reference is not None:
        values.append(reference)
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.05 or abs(hi) * 0.05 or 1.0
    return lo - pad, hi + pad


def interval_chart(
    rows: Sequence[IntervalRow],
    *,
    xlabel: str,
    title: str,
    xlim: tuple[float, float] | None = None,
    reference: float | None = None,
) -> str:
    """The chart as an ``<svg>`` element (see the module); ``reference`` draws a dotted vertical line."""
    lo, hi = _limits(rows, xlim, reference)
    label_w = min(320, 12 + LABEL_PX * max((len(r.label) for r in rows), default=0))
    top, bottom = 10, 48
    width = int(label_w + PLOT_PX + 20)
    height = int(top + ROW_PX * len(rows) + bottom)

    def x(v: float) -> float:
        v = min(max(v, lo), hi)
        return round(label_w + (v - lo) / (hi - lo) * PLOT_PX, 2)

    axis_y = top + ROW_PX * len(rows)
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' role='img' viewBox='0 0 {width} {height}' "
        f"width='{width}' style='max-width:100%;height:auto' {FONT}>",
        f"<title>{html.escape(title)}</title>",
    ]
    for t in _nice_ticks(lo, hi):
        out.append(
            f"<line x1='{x(t)}' y1='{top}' x2='{x(t)}' y2='{axis_y}' stroke='#e3e5e8'/>"
            f"<text x='{x(t)}' y='{axis_y + 16}' text-anchor='middle' fill='#444'>{_fmt(t)}</text>"
        )
    out.append(f"<line x1='{label_w}' y1='{axis_y}' x2='{label_w + PLOT_PX}' y2='{axis_y}' stroke='#888'/>")
    if reference is not None and lo <= reference <= hi:
        out.append(
            f"<line x1='{x(reference)}' y1='{top}' x2='{x(reference)}' y2='{axis_y}' stroke='grey' "
            "stroke-dasharray='2,3' stroke-width='1.2'/>"
        )
    for i, r in enumerate(rows):
        y = top + ROW_PX * i + ROW_PX / 2
        out.append(f"<text x='{label_w - 8}' y='{y + 4}' text-anchor='end' fill='#222'>{html.escape(r.label)}</text>")
        if r.low is not None and r.high is not None:
            out.append(
                f"<line x1='{x(r.low)}' y1='{y}' x2='{x(r.high)}' y2='{y}' stroke='{r.color}' "
                "stroke-width='3' stroke-opacity='0.8'/>"
            )
        out.append(
            f"<circle cx='{x(r.value)}' cy='{y}' r='4.5' fill='{r.color}'>"
            f"<title>{html.escape(r.label)}: {r.value:.4g}</title></circle>"
        )
        for m in r.markers:
            mx = x(m.value)
            out.append(
                f"<path d='M{mx - 4},{y - 4}L{mx + 4},{y + 4}M{mx - 4},{y + 4}L{mx + 4},{y - 4}' "
                f"stroke='{m.color}' stroke-width='1.8'/>"
            )
    out.append(
        f"<text x='{label_w + PLOT_PX / 2}' y='{axis_y + 38}' text-anchor='middle' fill='#222'>"
        f"{html.escape(xlabel)}</text></svg>"
    )
    return "".join(out)
