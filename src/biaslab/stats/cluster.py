"""Uncertainty for clustered data: a stratified cluster bootstrap and a cluster sign-flip test.

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

from biaslab.stats.significance import TestResult, paired_permutation_test


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


def cluster_sign_flip_test(
    cluster_differences: np.ndarray, *, n_permutations: int = 10_000, seed: int = 0
) -> TestResult:
    """Two-sided test that the clusters' summed differences are centred on zero.

    Under the null, which member of each pair is which does not matter to the model, so each
    cluster's difference (e.g. stereotypical minus counter-stereotypical decisions over its pairs)
    flips sign with probability 1/2, all pairs of a cluster together. Exact when there are few
    clusters (``2^(k-1) <= n_permutations + 1``), Monte Carlo otherwise; never below ``2^(1-k)``.
    :func:`biaslab.stats.clustered.cluster_inference` adds the interval from the same test.
    """
    res = paired_permutation_test(
        np.asarray(cluster_differences, dtype=float), n_permutations=n_permutations, seed=seed
    )
    return TestResult(res.statistic, res.p, res.n, res.method.replace("paired sign-flip", "cluster sign-flip"))
