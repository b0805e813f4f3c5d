"""The gap between two conditions' pooled ratios on shared units, with interval and p from one procedure.

A rate pooled over units, ``r = sum(num) / sum(den)`` (a true positive rate over posts, the share of an
emotion among one gender's answers over events), is not a mean of unit values; its linearisation
(:mod:`biaslab.stats.unit_values`) is: ``u_i = r + (num_i - r den_i) / mean(den)`` has mean exactly ``r``.
The gap between two conditions asked on the same units (the
same post with the author's gender stated as male and as female) is then the pooled mean of the paired
differences ``u_i(a) - u_i(b)``, and :func:`biaslab.stats.clustered.paired_cluster_inference` gives its
interval and p value from one procedure (a sign-flip test inverted when few units differ, a cluster-robust
t otherwise), so that the interval excludes 0 exactly when p < alpha. Under "the condition does not
matter" a unit's two answers are exchangeable, which is what the sign-flip assumes.
:func:`masked_gap_units` gives the same paired differences over the rows of an item table, for a pairing's
unit values (the gate and ``compare`` test two runs' gaps on them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from biaslab.stats.clustered import paired_cluster_inference
from biaslab.stats.unit_values import bounds_if_inside, ratio_units

__all__ = ["linearized_ratio", "masked_gap_units", "ratio_gap"]


def linearized_ratio(
    num: np.ndarray, den: np.ndarray, *, empty: float | None = None
) -> tuple[float | None, np.ndarray]:
    """``(r, u)``: the pooled ratio and per-unit values whose mean is ``r``
    (:func:`biaslab.stats.unit_values.ratio_units`). With no denominator at all ``r`` is ``empty`` (None:
    undefined) and ``u`` is ``empty`` for every unit (NaN when None)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    u = ratio_units(num, den)
    if u is None:
        return empty, np.full(num.shape, np.nan if empty is None else float(empty))
    return float(num.sum() / den.sum()), u


def ratio_gap(
    num_a: np.ndarray,
    den_a: np.ndarray,
    num_b: np.ndarray,
    den_b: np.ndarray,
    *,
    clusters: Any = None,
    confidence: float = 0.95,
    label: str = "units",
    empty: float | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """``r_a - r_b`` (pooled ratios on the same units, one row per unit) with its interval and p value
    (null 0) at ``confidence``; the result of :func:`paired_cluster_inference` plus ``a`` and ``b``,
    the two ratios. ``empty``: the ratio of a condition without any denominator (None: the gap is
    undefined)."""
    ra, ua = linearized_ratio(num_a, den_a, empty=empty)
    rb, ub = linearized_ratio(num_b, den_b, empty=empty)
    if ra is None or rb is None or ua.size == 0:
        return {"value": None, "ci_low": None, "ci_high": None, "p": None, "a": ra, "b": rb, "n": int(ua.size),
                "reason": "a condition has no answer to compute its rate from"}  # fmt: skip
    out = paired_cluster_inference(ub, ua, clusters, null=0.0, confidence=confidence, label=label, seed=seed)
    out.update(a=ra, b=rb, value=ra - rb)  # the pooled mean of ua - ub, exactly; written from the ratios
    return out


def masked_gap_units(
    num_a: np.ndarray,
    den_a: np.ndarray,
    num_b: np.ndarray,
    den_b: np.ndarray,
    rows: np.ndarray | None = None,
    bounds: tuple[float, float] | None = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray, tuple[float, float] | None] | None:
    """``(values, mask, gap bounds)`` of the gap ``r_a - r_b`` over every row: ``mask`` the rows (of ``rows``,
    where given) where either ratio has a denominator, ``values`` there each side's :func:`linearized_ratio` over
    them, a minus b (mean exactly ``r_a - r_b``), NaN elsewhere; the gap bounds ``(lo - hi, hi - lo)`` where both
    sides' values stay inside ``bounds`` (the range of a side's values), else None. None where a side has no
    denominator on those rows."""
    num_a, den_a = np.asarray(num_a, dtype=float), np.asarray(den_a, dtype=float)
    num_b, den_b = np.asarray(num_b, dtype=float), np.asarray(den_b, dtype=float)
    mask = (den_a > 0) | (den_b > 0)
    if rows is not None:
        mask &= np.asarray(rows, dtype=bool)
    ra, ua = linearized_ratio(num_a[mask], den_a[mask])
    rb, ub = linearized_ratio(num_b[mask], den_b[mask])
    if ra is None or rb is None:
        return None
    inside = None if bounds is None else bounds_if_inside(bounds, ua, ub)
    values = np.full(num_a.shape, np.nan)
    values[mask] = ua - ub
    return values, mask, None if inside is None else (inside[0] - inside[1], inside[1] - inside[0])
