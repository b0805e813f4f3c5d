"""Small helpers shared by the resampling code of several probes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import numpy as np


def sum_arrays(arrays: Iterable[np.ndarray]) -> np.ndarray:
    """The element-wise sum of equal-shaped arrays, added in order (exactly ``sum(arrays)``; typed as an array)."""
    return cast(np.ndarray, sum(arrays))
