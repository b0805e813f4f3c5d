"""The check every probe's run report must pass: an interval excludes its null exactly when p < 0.05."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def disagreements(metrics: Mapping[str, Any], null_of: Callable[[str], float]) -> list[str]:
    """Metrics (of a results.json) with an interval and a p value whose "interval excludes the null" and
    "p < 0.05" differ; ``null_of(name)`` is the probe's unbiased value for a metric (KeyError: a p value
    whose null the test does not know, reported too). Also fails a metric with both and zero width."""
    bad = []
    for name, m in metrics.items():
        if not isinstance(m, Mapping) or m.get("p") is None or m.get("ci_low") is None or m.get("ci_high") is None:
            continue
        lo, hi, p = float(m["ci_low"]), float(m["ci_high"]), float(m["p"])
        try:
            null = null_of(name)
        except KeyError:
            bad.append(f"{name}: a p value without a known null")
            continue
        excludes = null < lo - 1e-9 or null > hi + 1e-9
        if excludes != (p < 0.05) or hi - lo <= 1e-12:
            bad.append(f"{name}: [{lo:.6g}, {hi:.6g}] vs null {null:g}, p {p:.4g}")
    return bad


def checked(metrics: Mapping[str, Any]) -> int:
    """How many metrics carry both an interval and a p value (a scan that checks none proves nothing)."""
    return sum(
        isinstance(m, Mapping) and m.get("p") is not None and m.get("ci_low") is not None for m in metrics.values()
    )


def no_zero_width(metrics: Mapping[str, Any]) -> bool:
    """True when no metric shows an interval of zero width (with or without a p value)."""
    return all(
        float(m["ci_high"]) - float(m["ci_low"]) > 1e-12
        for m in metrics.values()
        if isinstance(m, Mapping) and m.get("ci_low") is not None and m.get("ci_high") is not None
    )
