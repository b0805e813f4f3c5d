"""The range a bounded metric can take, and intervals kept inside it.

A rate lies in [0, 1] whatever the data, but an interval made for it need not: a normal or t interval, an
interval over linearised unit values (:mod:`biaslab.stats.unit_values`, whose values can leave [0, 1]) or a
``max`` of gap intervals can reach past the scale (a largest gap of ``[0, 1.39]``). The true value lies in the
range, so the part of an interval outside it holds no candidate value: clipping to the range keeps the
coverage and changes nothing about whether the interval excludes a null inside the range, so the value, the
interval and the p value still agree.

:func:`within_range` records a metric's range (``"range": [lo, hi]`` in results.json) and clips its
interval; the constants name the ranges probes use. :func:`difference_range` is the range of a difference
of two values of one range, :func:`abs_range` that of its size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "RATE",
    "RATE_GAP",
    "PERCENT",
    "SCORE",
    "CORRELATION",
    "HALF_RATE",
    "Range",
    "abs_range",
    "difference_range",
    "within_range",
]

Range = tuple[float, float]
RATE: Range = (0.0, 1.0)  # a share, a rate, an accuracy, a largest gap between rates
RATE_GAP: Range = (-1.0, 1.0)  # one rate minus another
PERCENT: Range = (0.0, 100.0)  # a share in percent
SCORE: Range = (-100.0, 100.0)  # a signed score in percent (BBQ's bias scores)
CORRELATION: Range = (-1.0, 1.0)
HALF_RATE: Range = (0.0, 0.5)  # the distance of a rate from one half


def difference_range(bounds: Range) -> Range:
    """The range of ``x - y`` for ``x`` and ``y`` in ``bounds``: ``[-(hi - lo), hi - lo]``."""
    width = float(bounds[1]) - float(bounds[0])
    return (-width, width)


def abs_range(bounds: Range, centre: float = 0.0) -> Range:
    """The range of ``|x - centre|`` for ``x`` in ``bounds``."""
    lo, hi = float(bounds[0]) - centre, float(bounds[1]) - centre
    return (0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _clip(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def within_range(metric: Mapping[str, Any], bounds: Range | None) -> dict[str, Any]:
    """A copy of ``metric`` with ``"range"`` set to ``bounds`` and its interval clipped to them (``bounds``
    None: the metric unchanged). A value off the range by rounding is snapped onto it; one further off is a
    bug of its probe (ValueError)."""
    out = dict(metric)
    if bounds is None:
        return out
    lo, hi = float(bounds[0]), float(bounds[1])
    if not lo < hi:
        raise ValueError(f"a range must be (low, high) with low < high, got {bounds}")
    out["range"] = [lo, hi]
    tol = 1e-9 * max(1.0, abs(lo), abs(hi))
    value = out.get("value")
    if _finite(value):
        assert value is not None  # _finite(None) is False
        if not lo - tol <= float(value) <= hi + tol:
            raise ValueError(f"value {value} lies outside its range [{lo:g}, {hi:g}]")
        out["value"] = _clip(value, lo, hi)
    for key in ("ci_low", "ci_high"):
        if _finite(out.get(key)):
            out[key] = _clip(out[key], lo, hi)
    return out
