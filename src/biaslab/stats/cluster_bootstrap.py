"""The stratified cluster bootstrap: percentile intervals of rates and means over clustered observations. (The
analytic procedure for a mean over clustered units -- sign-flip test, cluster-robust t, and intervals that agree
with their p values -- is :mod:`biaslab.stats.clustered`.)

Observations that share a cluster (the pairs built from one predicate) are not independent, so
the *cluster* is the resampling unit. Clusters are resampled with replacement within their
stratum (the target group), which keeps the benchmark's design -- how many predicates each group
has -- fixed, like a stratified sample.

Every statistic here is a ratio of sums over observations (a rate, a mean), so a cluster is
summarised by its column sums and a resample by count-weighted sums: R resamples cost one
matrix product per stratum.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def stratified_cluster_sums(
    strata: np.ndarray, columns: Mapping[str, np.ndarray], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, dict[str, np.ndarray]]:
    """Per stratum, the column sums of ``n_resamples`` cluster resamples: ``{stratum: {column: (R,)}}``.

    ``strata`` and every column hold one value per cluster (columns: the cluster's sums).
    """
    strata = np.asarray(strata, dtype=object)
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, np.ndarray]] = {}
    for stratum in sorted(set(strata.tolist()), key=str):
        idx = np.flatnonzero(strata == stratum)
        k = idx.size
        counts = rng.multinomial(k, np.full(k, 1.0 / k), size=n_resamples).astype(float)  # (R, k)
        out[stratum] = {name: counts @ np.asarray(col, dtype=float)[idx] for name, col in columns.items()}
    return out


def percentile_ci(samples: np.ndarray, confidence: float = 0.95) -> tuple[float | None, float | None]:
    arr = np.asarray(samples, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size < 10:
        return None, None
    alpha = (1 - confidence) / 2
    return float(np.quantile(arr, alpha)), float(np.quantile(arr, 1 - alpha))
