"""The range of every bounded metric of a probe (``Probe.metric_ranges``), recorded in results.json and kept by
its interval.

A probe declares ``metric_ranges``: a metric's name, or a pattern of names (``*_success_rate``), mapped to the
range its values lie in (the constants of :mod:`biaslab.stats.ranges`); a per-group metric ``name:<group>``
takes its base's range, and the undetected and tie rates every probe may report are rates without being
declared. An exact name wins over a pattern, and patterns are tried in the order declared. Unbounded metrics
(log-likelihood differences, counts) are left out and get no range. Before a run's metrics are written,
:func:`declare_ranges` gives each bounded metric its ``range`` and clips its interval to it
(:func:`biaslab.stats.ranges.within_range`), whichever helper made the interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from biaslab.stats.ranges import RATE, Range, within_range

if TYPE_CHECKING:
    from biaslab.stats.estimand import Estimand, Kind

__all__ = ["COMMON_RANGES", "declare_ranges", "declared_estimand", "range_of"]

COMMON_RANGES: dict[str, Range] = {
    "undetected_rate_attempts": RATE,
    "undetected_rate_items": RATE,
    "undetected_rate": RATE,
    "tie_rate": RATE,
}


def range_of(ranges: Mapping[str, Range], metric: str) -> Range | None:
    """The range of ``metric`` under the declarations ``ranges`` (module docstring); None: unbounded."""
    base = metric.partition(":")[0]
    for name in (metric, base):
        if name in ranges:
            return ranges[name]
    for pattern, bounds in ranges.items():
        if "*" in pattern and fnmatchcase(base, pattern):
            return bounds
    return COMMON_RANGES.get(base)


def declare_ranges(metrics: Mapping[str, Any], ranges: Mapping[str, Range]) -> dict[str, Any]:
    """``metrics`` with every bounded one given its ``range`` and its interval clipped to it."""
    out = dict(metrics)
    for name, m in metrics.items():
        bounds = range_of(ranges, name)
        if isinstance(m, Mapping) and bounds is not None:
            out[name] = within_range(m, bounds)
    return out


def declared_estimand(ranges: Mapping[str, Range], metric: str, kind: Kind, **fields: Any) -> Estimand:
    """:class:`~biaslab.stats.estimand.Estimand` ``metric`` with its range from the declarations ``ranges`` (a
    probe's ``metric_ranges``); ``fields``: the estimand's other fields (``unit``, ``null``, ``bounds``)."""
    from biaslab.stats.estimand import Estimand

    return Estimand(metric, kind, range=range_of(ranges, metric), **fields)
