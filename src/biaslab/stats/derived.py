"""Metrics derived from others, with intervals and p values that agree because they are derived too.

Some headline numbers are functions of signed gaps, not means themselves: the size of a gap
(``diff_abs_*``, ``disparity = |masculine_rate - 0.5|``) and the largest of several gaps
(``max_diff``). A percentile bootstrap of such a number cannot reach its null (an absolute value
or a maximum is never below 0 in any resample), so its interval excludes 0 even when there is no
gap at all, and it disagrees with the test of "no gap". Here the interval is the image of the
signed gaps' intervals and the p value is the signed gaps' p, so the two agree whenever the
signed ones do (as every result of :mod:`biaslab.stats.clustered` and
:mod:`biaslab.stats.two_sample` does):

* :func:`fold_abs`: the interval of ``|x - centre|`` from the interval ``[lo, hi]`` of ``x``:
  ``[0, max(|lo - c|, |hi - c|)]`` when it covers the centre, else ``[min(..), max(..)]``; the
  p value of ``x = centre``. It excludes 0 exactly when the signed interval excludes the centre.
* :func:`max_of_gaps`: the largest absolute gap of ``m`` gaps, each computed by the caller at
  confidence ``1 - alpha / m`` (Bonferroni). The interval runs from the largest distance of a gap
  interval from 0 to the largest absolute end; ``p = min(1, m * min p_i)``. It excludes 0 exactly
  when some gap's interval does, i.e. when some ``p_i < alpha / m``, i.e. when ``p < alpha``. The
  intervals hold simultaneously with probability at least ``1 - alpha``, so the max's interval
  covers the true largest gap at least that often (a conservative interval: Bonferroni, not the
  permutation distribution of the maximum).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from biaslab.stats.ranges import abs_range, within_range

__all__ = ["fold_abs", "max_of_gaps", "bonferroni_confidence"]

_KEEP = ("n", "n_clusters", "unit", "too_small", "degenerate")


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def bonferroni_confidence(m: int, confidence: float = 0.95) -> float:
    """The confidence each of ``m`` gaps is computed at so that their maximum has ``confidence``."""
    return 1 - (1 - confidence) / max(1, int(m))


def fold_abs(
    signed: Mapping[str, Any], *, centre: float = 0.0, value_range: tuple[float, float] | None = None
) -> dict[str, Any]:
    """``|x - centre|`` of a signed metric ``x`` (a dict with ``value``, ``ci_low``, ``ci_high``,
    ``p``), its interval folded from ``x``'s and ``x``'s p value; null 0. No interval where ``x``
    has none (its ``reason`` is kept). ``value_range``: the range of ``x``; the result's is
    :func:`~biaslab.stats.ranges.abs_range` of it, and its interval is clipped to that."""
    out = _fold_abs(signed, centre)
    return out if value_range is None else within_range(out, abs_range(value_range, centre))


def _fold_abs(signed: Mapping[str, Any], centre: float) -> dict[str, Any]:
    out: dict[str, Any] = {k: signed[k] for k in _KEEP if k in signed}
    v = signed.get("value")
    if not _finite(v):
        out.update(value=None, ci_low=None, ci_high=None, p=None, reason=signed.get("reason") or "undefined")
        return out
    assert v is not None  # _finite(None) is False
    out.update(value=abs(float(v) - centre), null=0.0, p=signed.get("p"))
    method = signed.get("method") or signed.get("test")
    out["method"] = f"folded from the signed value's interval ({method})" if method else "folded from the signed value"
    lo, hi = signed.get("ci_low"), signed.get("ci_high")
    if not (_finite(lo) and _finite(hi)):
        out.update(ci_low=None, ci_high=None, reason=signed.get("reason") or "the signed value has no interval")
        return out
    assert lo is not None and hi is not None
    a, b = float(lo) - centre, float(hi) - centre
    far = max(abs(a), abs(b))
    near = 0.0 if a <= 0.0 <= b else min(abs(a), abs(b))
    out.update(ci_low=near, ci_high=far)
    return out


def max_of_gaps(
    gaps: Sequence[Mapping[str, Any]],
    *,
    span: float | None = None,
    confidence: float = 0.95,
    value_range: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The largest ``|gap|`` of ``gaps`` (each a dict with ``value``, ``ci_low``, ``ci_high``, ``p``,
    computed at :func:`bonferroni_confidence` ``(len(gaps), confidence)``); see the module docstring.

    A gap without an interval counts as ``[-span, span]`` (it could be anything up to the scale's
    width; None: the maximum gets no interval). Gaps without a value are left out; none left: no value.
    ``value_range``: the range of the largest gap (``(0, 1)`` for gaps between rates): the interval is
    clipped to it.
    """
    out = _max_of_gaps(gaps, span, confidence)
    return out if value_range is None else within_range(out, value_range)


def _max_of_gaps(gaps: Sequence[Mapping[str, Any]], span: float | None, confidence: float) -> dict[str, Any]:
    m = len(gaps)
    defined = [g for g in gaps if _finite(g.get("value"))]
    out: dict[str, Any] = {"null": 0.0, "n_gaps": m, "confidence": confidence}
    if not defined:
        out.update(value=None, ci_low=None, ci_high=None, p=None, reason="no gap is defined")
        return out
    out["value"] = max(abs(float(g["value"])) for g in defined)
    ps = [float(g["p"]) for g in defined if _finite(g.get("p"))]
    out["p"] = min(1.0, m * min(ps)) if ps else None
    out["method"] = f"largest of {m} gaps, Bonferroni ({100 * bonferroni_confidence(m, confidence):.4g}% each)"
    near, far = 0.0, 0.0
    for g in defined:
        lo, hi = g.get("ci_low"), g.get("ci_high")
        if not (_finite(lo) and _finite(hi)):
            if span is None:
                out.update(ci_low=None, ci_high=None, reason="a gap has no interval: " + str(g.get("reason") or ""))
                return out
            far = max(far, float(span))
            continue
        lo, hi = float(lo), float(hi)  # type: ignore[arg-type]
        far = max(far, abs(lo), abs(hi))
        near = max(near, 0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi)))
    out.update(ci_low=near, ci_high=far)
    return out
