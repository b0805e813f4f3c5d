"""Significance tests against hand-computed values."""

import math
import time

import numpy as np
import pytest
from scipy import stats

from biaslab.stats.significance import (
    binomial_test,
    paired_permutation_test,
    permutation_test_means,
)


def test_two_sample_exact_by_hand():
    # pooled [1, 2, 3, 5]; the 6 ways to pick group a give mean differences
    # -2.5, -1.5, 0.5, -0.5, 1.5, 2.5  -> |T| >= 2.5 in 2 of 6
    res = permutation_test_means([1, 2], [3, 5])
    assert res.statistic == pytest.approx(-2.5)
    assert res.p == pytest.approx(2 / 6)
    assert res.n == 4 and "exact" in res.method


def test_two_sample_exact_unequal_sizes_by_hand():
    # pooled [0, 0, 1]; a = [1] vs b = [0, 0]: T = 1; arrangements: a=[0] (T=-0.5) twice, a=[1] (T=1) once
    res = permutation_test_means([1], [0, 0])
    assert res.statistic == pytest.approx(1.0)
    assert res.p == pytest.approx(1 / 3)


def test_paired_sign_flip_exact_by_hand():
    # d = [1, 2, -0.5], sum 2.5; the 8 sign patterns give sums +-3.5, +-2.5, +-1.5, +-0.5
    # -> |sum| >= 2.5 in 4 of 8
    res = paired_permutation_test([1, 2, -0.5])
    assert res.statistic == pytest.approx(2.5 / 3)
    assert res.p == pytest.approx(0.5)
    # all differences positive: only the all-plus and all-minus patterns are as extreme
    assert paired_permutation_test([1, 1, 1]).p == pytest.approx(2 / 8)


def test_monte_carlo_is_seeded_bounded_and_agrees_with_scipy():
    rng = np.random.default_rng(5)
    a, b = rng.random(120), rng.random(150) + 0.08
    r1 = permutation_test_means(a, b, n_permutations=10_000, seed=3)
    r2 = permutation_test_means(a, b, n_permutations=10_000, seed=3)
    assert r1 == r2 and "random" in r1.method
    ref = stats.permutation_test(
        (a, b), lambda x, y, axis: x.mean(axis) - y.mean(axis), vectorized=True, n_resamples=10_000, random_state=0
    ).pvalue
    assert abs(r1.p - ref) < 0.02

    d = rng.normal(0.1, 1, 80)
    p1 = paired_permutation_test(d, n_permutations=10_000, seed=1)
    ref = stats.permutation_test(
        (d,),
        lambda x, axis: x.mean(axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
        random_state=0,
    ).pvalue
    assert abs(p1.p - ref) < 0.02


def test_monte_carlo_p_is_never_zero():
    res = permutation_test_means(np.ones(50), np.zeros(50), n_permutations=999, seed=0)
    assert res.p == pytest.approx(1 / 1000)
    res = paired_permutation_test(np.ones(40), n_permutations=999, seed=0)
    assert res.p == pytest.approx(1 / 1000)


def test_undefined_cases_give_nan():
    assert math.isnan(permutation_test_means([], [1.0]).p)
    assert math.isnan(paired_permutation_test([]).p)
    assert math.isnan(binomial_test(0, 0).p)


def test_binomial_by_hand():
    # k=0 of 3: P(X=0) = 1/8, two-sided doubles it
    assert binomial_test(0, 3).p == pytest.approx(0.25)
    # k=1 of 5: P(X<=1) = 6/32, two-sided 12/32
    assert binomial_test(1, 5).p == pytest.approx(12 / 32)
    # k=5 of 10 is the most likely outcome
    assert binomial_test(5, 10).p == pytest.approx(1.0)
    assert binomial_test(1, 4).statistic == pytest.approx(0.25)


def test_ten_thousand_permutations_are_fast():
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    permutation_test_means(rng.random(169), rng.random(169), n_permutations=10_000, seed=0)
    paired_permutation_test(rng.random(169) - 0.5, n_permutations=10_000, seed=0)
    assert time.perf_counter() - t < 2.0
