"""CR2 variance and Bell-McCaffrey degrees of freedom: the closed forms against a dense matrix
implementation of the definitions, the equal-size case against the one-sample t test."""

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import sqrtm

from biaslab.stats.robust import cr2_inference


def dense_cr2(values, cluster, stratum):
    """CR2 standard error and Bell-McCaffrey df of the pooled mean, straight from the definitions:
    regression on stratum indicators, A_c = (I - H_cc)^(-1/2), G's columns (I - H)_c A_c X_c (X'X)^-1 l."""
    n = len(values)
    levels = np.unique(stratum)
    x = (stratum[:, None] == levels[None, :]).astype(float)
    xtx_inv = np.linalg.inv(x.T @ x)
    beta = xtx_inv @ x.T @ values
    resid = values - x @ beta
    hat = x @ xtx_inv @ x.T
    ell = x.sum(axis=0) / n  # the pooled mean = sum_s (N_s / N) beta_s
    var, g = 0.0, []
    for c in np.unique(cluster):
        idx = np.flatnonzero(cluster == c)
        a_c = np.real(np.linalg.inv(sqrtm(np.eye(idx.size) - hat[np.ix_(idx, idx)])))
        var += float(ell @ xtx_inv @ x[idx].T @ a_c @ resid[idx]) ** 2
        g.append((np.eye(n) - hat)[:, idx] @ a_c @ x[idx] @ xtx_inv @ ell)
    g = np.array(g).T
    m = g.T @ g
    return float(ell @ beta), np.sqrt(var), np.trace(m) ** 2 / np.trace(m @ m)


@pytest.mark.parametrize("seed", range(8))
def test_closed_forms_match_the_definitions(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(5, 12))
    n_strata = 1 + seed % 3
    sizes = rng.integers(1, 6, k)
    cluster_stratum = np.arange(k) % n_strata
    cluster = np.repeat(np.arange(k), sizes)
    stratum = np.repeat(cluster_stratum, sizes)
    values = rng.normal(size=cluster.size) + rng.normal(size=k)[cluster]
    est, se, df = dense_cr2(values, cluster, stratum)
    got = cr2_inference(
        np.bincount(cluster, weights=values), sizes, cluster_stratum if n_strata > 1 else None, null=0.0
    )
    assert got.estimate == pytest.approx(est) and got.se == pytest.approx(se, rel=1e-9)
    assert got.df == pytest.approx(df, rel=1e-9) and got.df <= k - n_strata + 1e-9
    assert got.stratified == (n_strata > 1)


def test_equal_sizes_is_the_t_test_of_cluster_means():
    rng = np.random.default_rng(1)
    means = rng.normal(0.3, 1.0, 9)
    sizes = np.full(9, 4.0)
    got = cr2_inference(means * sizes, sizes, null=0.0)
    ref = stats.ttest_1samp(means, 0.0)
    ci = ref.confidence_interval(0.95)
    assert got.df == pytest.approx(8) and got.p == pytest.approx(ref.pvalue)
    assert (got.ci_low, got.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_p_and_interval_agree():
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 9, 30).astype(float)
    totals = rng.normal(1, 2, 30) * sizes
    r = cr2_inference(totals, sizes, null=0.0)
    for null in np.linspace(r.ci_low - 1, r.ci_high + 1, 41):
        p = cr2_inference(totals, sizes, null=null).p
        assert (p < 0.05) == (null < r.ci_low or null > r.ci_high)
    assert cr2_inference(totals, sizes, null=r.ci_high).p == pytest.approx(0.05)


def test_single_cluster_strata_are_pooled_and_no_spread_is_reported():
    sizes = np.array([2.0, 3.0, 4.0, 5.0])
    totals = np.array([1.0, 2.0, 4.0, 1.0])
    pooled = cr2_inference(totals, sizes, None, null=0.0)
    with_singleton = cr2_inference(totals, sizes, np.array(["a", "a", "a", "b"]), null=0.0)
    assert not with_singleton.stratified and with_singleton == pooled
    flat = cr2_inference(sizes * 0.5, sizes, null=0.0)
    assert flat.se == 0 and np.isnan(flat.p)
