"""Sample sizes from the normal approximation: how many units a two-sided level-``alpha`` test needs to detect an
effect with a given power, when the estimate's standard error falls as ``1 / sqrt(n)``.

:func:`normal_n` is used both before a run (``biaslab plan``, which sizes probes) and after one (how many
items would settle an inconclusive non-inferiority test, :func:`biaslab.stats.noninferiority.items_to_settle`).
"""

from __future__ import annotations

import functools
import math

__all__ = ["normal_quantile", "normal_n"]


@functools.lru_cache(maxsize=64)
def normal_quantile(q: float) -> float:
    """The standard normal quantile ``z_q`` (what ``scipy.stats.norm.ppf`` computes)."""
    from scipy.special import ndtri

    return float(ndtri(q))


def normal_n(effect: float, se1: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """n with ``|effect| / (se1 / sqrt(n)) = z_{1-alpha/2} + z_power`` (``se1``: the SE at n = 1); at least 2."""
    return max(2, math.ceil((se1 * (normal_quantile(1 - alpha / 2) + normal_quantile(power)) / abs(effect)) ** 2))
