"""The last check before a run's metrics are written: no zero-width interval leaves a run.

A probe's own inference should never produce an interval of zero width (``ci_low == ci_high``), but a
percentile bootstrap collapses when every resample agrees (every pair tied, one sentiment value per
group). :func:`no_zero_width` passes every such metric through :func:`biaslab.stats.honest.honest_metric`:
a share at a bound of its scale gets the exact Clopper-Pearson interval (over its ``n`` units, or over its
``n_clusters`` clusters taken as trials when the metric says it is clustered), anything else no interval
and a ``reason``. The scale is read from the metric's name (``*rate*``, ``*accuracy*``, ``*share*``: 0-1;
``pct_*``, ``bias_score*``: 0-100); a metric of unknown scale is never given an invented interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biaslab.stats.honest import honest_metric

SHARE_WORDS = ("rate", "accuracy", "share")
PERCENT_PREFIXES = ("pct_", "bias_score")


def _scale(name: str, value: Any) -> float | None:
    base = name.partition(":")[0]
    if any(w in base for w in SHARE_WORDS) and value in (0, 1):
        return 1.0
    if base.startswith(PERCENT_PREFIXES) and value in (0, 100):
        return 100.0
    return None


def no_zero_width(metrics: Mapping[str, Any], n_items: int | None = None) -> dict[str, Any]:
    """``metrics`` with every zero-width interval replaced (module docstring); other metrics untouched.
    ``n_items``: the run's items (the units a probe's intervals resample), for a metric that states no ``n``."""
    out = dict(metrics)
    for name, m in metrics.items():
        if not isinstance(m, Mapping):
            continue
        lo, hi, v = m.get("ci_low"), m.get("ci_high"), m.get("value")
        if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and isinstance(v, (int, float))) or abs(
            float(hi) - float(lo)
        ) > 1e-12 * max(1.0, abs(float(v))):
            continue
        clustered = isinstance(m.get("n_clusters"), int) and m.get("n_clusters") != m.get("n")
        if m.get("n") is None and not clustered:
            m = {**m, "n": m.get("n_pairs") or m.get("n_questions") or n_items}
        fixed = honest_metric(
            m, scale=_scale(name, v), independent=not clustered, label=str(m.get("cluster_unit") or "clusters")
        )
        if fixed.get("ci_low") is None and fixed.get("p") is not None and fixed["p"] < 0.05:
            fixed["p"] = None  # never a significant p without its interval
        out[name] = fixed
    return out
