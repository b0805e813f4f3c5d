"""Make any metric dict honest before it is shown: no zero-width interval, a reason for every missing
one, no cluster-level claim the clusters cannot support.

:func:`honest_metric` takes a metric as the probes and comparisons write it (``{"value",
"ci_low", "ci_high", "n"[, "p", "q", "n_clusters", ...]}``) and returns a copy in which:

1. a value that is undefined has no interval, with a reason;
2. **clustered units** (``independent=False``) with ``k`` clusters: a p value below
   ``2^(1-k)``, which no test of ``k`` exchangeable clusters can give (it came from a test that
   ignored the clustering), is withdrawn (``p`` and ``q`` None, ``p_reason`` says why); fewer than
   :func:`~biaslab.stats.clustered.min_clusters` clusters (6 at 95%) get no interval
   (``too_small``, with the reason "2 predicates: too few to estimate spread ...");
   **independent units**: fewer than :data:`~biaslab.stats.intervals.MIN_UNITS` get no interval;
3. a zero-width interval (``ci_high - ci_low`` within rounding of 0) is replaced: for a
   proportion (``scale`` 1, or 100 for percentages) whose value sits at 0 or ``scale`` -- every
   unit on one side -- by the exact Clopper-Pearson interval over the ``n`` units when they are
   independent, or over the ``k`` clusters taken as trials when they are not (valid whatever the
   correlation within clusters: see :mod:`biaslab.stats.clustered`, step 3); with ``null`` given
   the p value is recomputed from the same binomial, so it agrees with the interval. Anything
   else gets no interval (``degenerate``) and a reason;
4. any metric still without an interval gets a ``reason`` if it has none.

The result keeps every other key. Intervals that are already honest are left untouched (this
helper does not re-derive intervals; :func:`~biaslab.stats.clustered.cluster_inference` does).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from biaslab.stats.clustered import attainable_min_p, min_clusters
from biaslab.stats.intervals import MIN_UNITS, binomial_central_p, clopper_pearson, units_text

__all__ = ["honest_metric", "undefined"]


def undefined(reason: str, *, null: float | None = None) -> dict[str, Any]:
    """A metric with no value on these data, and why."""
    out: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "p": None, "reason": reason}
    if null is not None:
        out["null"] = null
    return out


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _no_interval(out: dict[str, Any], reason: str, **flags: bool) -> dict[str, Any]:
    out.update(ci_low=None, ci_high=None, reason=reason, **flags)
    return out


def honest_metric(
    metric: Mapping[str, Any],
    *,
    scale: float | None = None,
    independent: bool = True,
    n_clusters: int | None = None,
    label: str = "clusters",
    null: float | None = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """A copy of ``metric`` that follows the rules of the module docstring.

    ``scale``: 1 for a proportion, 100 for a percentage, None for any other value. ``independent``:
    whether the ``n`` units are independent; if not, ``n_clusters`` (or the metric's own
    ``n_clusters``) is the number of clusters and ``label`` names them ("predicates"). ``null``:
    the value a replaced exact interval's p value is computed against.
    """
    out = dict(metric)
    value = out.get("value")
    if not _finite(value):
        return _no_interval(out, out.get("reason") or "no value: the metric is undefined on these data")
    assert value is not None  # _finite(None) is False
    value = float(value)
    n = out.get("n")
    k = n_clusters if n_clusters is not None else out.get("n_clusters")
    if not independent and k is not None:
        k = int(k)
        p_min = attainable_min_p(k)
        if _finite(out.get("p")) and float(out["p"]) < p_min * (1 - 1e-9):
            out.update(
                p=None,
                p_reason=f"p {float(out['p']):.2g} is below {p_min:.3g}, the smallest p any test on "
                f"{units_text(k, label)} can give (its test ignored the clustering)",
            )
            if "q" in out:
                out["q"] = None
        if k < min_clusters(confidence):
            return _no_interval(
                out,
                f"{units_text(k, label)}: too few to estimate spread (the smallest p any test "
                f"on {units_text(k, label)} can give is {p_min:.3g})",
                too_small=True,
            )
    elif independent and n is not None and int(n) < MIN_UNITS:
        return _no_interval(out, f"{units_text(int(n))}: too few to estimate spread", too_small=True)
    lo, hi = out.get("ci_low"), out.get("ci_high")
    if lo is None or hi is None:
        if lo is not None or hi is not None:
            return _no_interval(out, "only one end of the interval is defined")
        out.setdefault("reason", "no interval was computed for this metric")
        return out
    if not (_finite(lo) and _finite(hi)) or float(hi) < float(lo):
        return _no_interval(out, "the interval is not finite")
    tol = 1e-12 * max(1.0, abs(value), scale or 1.0)
    if float(hi) - float(lo) > tol:
        return out
    at_low = scale is not None and abs(value) <= tol
    at_high = scale is not None and abs(value - scale) <= tol
    trials = (int(n) if n is not None else None) if independent else k
    if (at_low or at_high) and trials:
        assert scale is not None  # at_low and at_high need a scale
        c_lo, c_hi = clopper_pearson(trials if at_high else 0, trials, confidence)
        out.update(ci_low=c_lo * scale, ci_high=c_hi * scale, interval="clopper-pearson")
        out.pop("reason", None)
        if not independent:
            out["interval_note"] = f"exact, {units_text(trials, label)} as trials (every unit at {value:g})"
        if null is not None:
            out["p"] = binomial_central_p(trials if at_high else 0, trials, min(1.0, max(0.0, null / scale)))
        return out
    where = units_text(trials, label if not independent else "units") if trials else "the units"
    return _no_interval(
        out, f"zero-width interval: {where} show no spread, so its width cannot be estimated", degenerate=True
    )
