"""Pearson's correlation, the one implementation every metric uses.

:func:`pearson` is r itself, NaN where it is undefined (fewer than two pairs, or one side
constant); it imports nothing beyond numpy, so metrics that use it start fast.
:func:`pearson_inference` gives r with an interval and a p value from one procedure (Fisher's z),
so that "the interval excludes the null" and "p < 0.05" always agree, and ``None`` where r is
undefined (the JSON form of "n/a") with the reason.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["pearson", "pearson_inference"]


def pearson(x, y) -> float:
    """Pearson's r of two equally long sequences; NaN for fewer than 2 pairs or a constant side.

    Values are ``numpy.corrcoef``'s to the last bit. Spearman's rho is this on ranks
    (``pearson(rankdata(x), rankdata(y))``, average ranks for ties).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"pearson: x has shape {x.shape} and y {y.shape}; they must be paired")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def pearson_inference(x, y, *, null: float = 0.0, confidence: float = 0.95, label: str = "pairs") -> dict[str, Any]:
    """``{"value", "ci_low", "ci_high", "p", "null", "n", "method", "confidence"}`` for Pearson's r of
    independent pairs, interval and p from Fisher's z: ``z = atanh(r)`` is close to normal with
    standard error ``1 / sqrt(n - 3)``, so the interval is ``tanh(z -+ z_crit se)`` and
    ``p = 2 P(Z > |z - atanh(null)| / se)``; the interval excludes ``null`` exactly when
    ``p < 1 - confidence``. Fewer than 4 pairs: no interval (``too_small``); a constant side: no
    value; ``|r| = 1``: no interval (``degenerate``). Every case without an interval has a ``reason``.
    """
    from statistics import NormalDist

    from biaslab.stats.intervals import units_text

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    r = pearson(x, y)
    out: dict[str, Any] = {
        "value": None if math.isnan(r) else r,
        "ci_low": None,
        "ci_high": None,
        "p": None,
        "null": null,
        "n": n,
        "method": "Fisher z",
        "confidence": confidence,
    }
    if math.isnan(r):
        out["reason"] = f"undefined: {'a side is constant' if n >= 2 else units_text(n, label)}"
        return out
    if n < 4:
        out.update(too_small=True, reason=f"{units_text(n, label)}: too few for an interval (Fisher's z needs 4)")
        return out
    if abs(r) >= 1 - 1e-12:
        out.update(degenerate=True, reason=f"r = {r:.0f}: every pair lies on one line, no spread to estimate")
        return out
    se = 1 / math.sqrt(n - 3)
    z = math.atanh(r)
    crit = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    out.update(ci_low=math.tanh(z - crit * se), ci_high=math.tanh(z + crit * se))
    out["method"] = f"Fisher z ({units_text(n, label)})"
    out["p"] = float(min(1.0, 2 * NormalDist().cdf(-abs(z - math.atanh(null)) / se)))
    return out
