"""Coverage of cluster_inference's 95% intervals, by simulation, at 3, 5, 10 and 50 clusters.

Data have intra-cluster correlation and unequal cluster sizes: bias indicators (0/100) of pairs
whose predicates differ in how stereotyped they are (ICC 0.15), normal values with a cluster
effect (ICC 0.3), and paired two-run differences, continuous and binary. Each scenario is
simulated R = 2,000 times from a fixed seed; the coverage must be within 4 standard errors of
0.95 (SE = sqrt(0.95 * 0.05 / 2000) = 0.0049, tolerance 0.02). With 3 and 5 clusters no test can
reach p < 0.05 (2^(1-k) >= 0.0625), so no interval is ever given; the check there is that the
exact sign-flip p value is valid: P(p <= level) <= level at the attainable levels.
"""

import numpy as np
import pytest

from biaslab.stats.clustered import cluster_inference, paired_cluster_inference

R = 2000
TOL = 4 * np.sqrt(0.95 * 0.05 / R)


def binary_pairs(rng, k):
    mean, icc = 0.65, 0.15
    s = 1 / icc - 1
    p = rng.beta(mean * s, (1 - mean) * s, k)
    sizes = rng.integers(10, 31, k)
    cl = np.repeat(np.arange(k), sizes)
    return 100.0 * (rng.random(cl.size) < p[cl]), cl, 100 * mean


def normal_values(rng, k):
    sizes = rng.integers(5, 25, k)
    cl = np.repeat(np.arange(k), sizes)
    return rng.normal(0, np.sqrt(0.3), k)[cl] + rng.normal(0, np.sqrt(0.7), cl.size), cl, 0.0


def paired_normal(rng, k):
    sizes = rng.integers(5, 25, k)
    cl = np.repeat(np.arange(k), sizes)
    a = rng.normal(0, 1, k)[cl] + rng.normal(size=cl.size)
    b = a + 0.2 + rng.normal(0, 0.4, k)[cl] + rng.normal(0, 0.5, cl.size)
    return (a, b), cl, 0.2


def _paired_binary_draw(rng, k):
    p = rng.beta(4, 3, k)
    delta = rng.normal(0.04, 0.08, k)
    return p, np.clip(p + delta, 0, 1)


_truth_rng = np.random.default_rng(99)
_p, _q = _paired_binary_draw(_truth_rng, 2_000_000)
PAIRED_BINARY_TRUTH = 100 * float(np.mean(_q - _p))  # E[B - A] per pair, by a large draw


def paired_binary(rng, k):
    """Two runs' decisions on the same pairs: a latent draw per pair, each run's threshold per predicate."""
    p, q = _paired_binary_draw(rng, k)
    sizes = rng.integers(10, 31, k)
    cl = np.repeat(np.arange(k), sizes)
    u = rng.random(cl.size)
    return (100.0 * (u < p[cl]), 100.0 * (u < q[cl])), cl, PAIRED_BINARY_TRUTH


SCENARIOS = {
    "binary pairs": (binary_pairs, (0, 100)),
    "normal values": (normal_values, None),
    "paired normal": (paired_normal, None),
    "paired binary": (paired_binary, (0, 100)),
}


def simulate(name, k, reps=R):
    gen, bounds = SCENARIOS[name]
    rng = np.random.default_rng(1000 * k + len(name))
    out = []
    for _ in range(reps):
        data, cl, truth = gen(rng, k)
        if isinstance(data, tuple):
            r = paired_cluster_inference(*data, cl, null=truth, bounds=bounds)
        else:
            r = cluster_inference(data, cl, null=truth, bounds=bounds)
        out.append(r)
    return out, truth


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("k", [10, 50])
def test_coverage_is_nominal(name, k):
    results, truth = simulate(name, k)
    with_interval = [r for r in results if r["ci_low"] is not None]
    assert len(with_interval) >= 0.99 * R
    covered = np.mean([r["ci_low"] <= truth <= r["ci_high"] for r in with_interval])
    rejected = np.mean([r["p"] is not None and r["p"] < 0.05 for r in results])
    print(
        f"{name}, {k} clusters: coverage {covered:.4f}, rejection of the true value {rejected:.4f}, "
        f"method {with_interval[0]['method']}"
    )
    assert abs(covered - 0.95) <= TOL
    assert abs(rejected - 0.05) <= TOL + 0.01  # rejecting the true value is the complement, up to no-interval cases


@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("k", [3, 5])
def test_few_clusters_never_claim_an_interval_and_keep_p_valid(name, k):
    results, _ = simulate(name, k, reps=R // 2)
    assert all(r["ci_low"] is None and r["too_small"] and r["reason"] for r in results)
    p = np.array([r["p"] for r in results])
    floor = 2.0 ** (1 - k)
    assert (p >= floor * (1 - 1e-12)).all()
    # the exact test's size at its attainable levels: P(p <= 2 m / 2^k) <= 2 m / 2^k
    for level in sorted({floor, 2 * floor, 0.5}):
        print(f"{name}, {k} clusters: P(p <= {level:.4g}) = {np.mean(p <= level + 1e-12):.4f}")
        assert np.mean(p <= level + 1e-12) <= level + 4 * np.sqrt(level * (1 - level) / p.size)
