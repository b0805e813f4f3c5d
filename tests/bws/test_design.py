"""Tuple design: the guarantees hold on several N and seeds; infeasible sizes fail clearly."""

import random
from collections import Counter
from itertools import combinations

import pytest

from biaslab.bws.design import design_tuples, design_with_quality
from biaslab.errors import ConfigError


def check_design(tuples, ids, k, a, max_shared):
    assert all(len(t) == k for t in tuples)
    assert len(tuples) == len(ids) * a // k
    assert all(len(set(t)) == k for t in tuples), "an item twice in a tuple"
    counts = Counter(i for t in tuples for i in t)
    assert set(counts) == set(ids) and set(counts.values()) == {a}
    # no two tuples share more than max_shared items <=> no (max_shared+1)-subset is in two tuples
    subsets = Counter(s for t in tuples for s in combinations(sorted(t), max_shared + 1))
    assert max(subsets.values()) == 1


def brute_max_overlap(tuples):
    sets = [set(t) for t in tuples]
    return max(len(a & b) for a, b in combinations(sets, 2))


@pytest.mark.parametrize("n,seed", [(9, 0), (13, 1), (37, 2), (101, 3), (250, 4), (1003, 5)])
def test_guarantees_on_various_sizes(n, seed):
    ids = [f"x{i}" for i in range(n)]
    tuples, q = design_with_quality(ids, seed=seed, attempts=3 if n < 20 else 20)
    check_design(tuples, ids, 4, 8, 2)
    assert q.n_tuples == 2 * n and q.max_overlap <= 2
    if n <= 250:
        assert brute_max_overlap(tuples) == q.max_overlap


def test_guarantees_on_random_sizes_and_seeds():
    rng = random.Random(2024)
    for _ in range(6):
        n, seed = rng.randint(9, 400), rng.randint(0, 10**6)
        ids = [f"i{j}" for j in rng.sample(range(10**6), n)]
        check_design(design_tuples(ids, seed=seed, attempts=3), ids, 4, 8, 2)


@pytest.mark.parametrize("k,a,n", [(2, 3, 10), (3, 3, 12), (5, 4, 25), (4, 2, 30)])
def test_other_tuple_sizes_and_appearances(k, a, n):
    ids = [str(i) for i in range(n)]
    tuples = design_tuples(ids, tuple_size=k, appearances=a, seed=7, attempts=5)
    check_design(tuples, ids, k, a, min(2, k - 1))


def test_n_not_divisible_by_tuple_size_still_valid():
    # 4-tuples over 1001 items: groups straddle the joins of permutations and must be repaired
    ids = [str(i) for i in range(1001)]
    check_design(design_tuples(ids, seed=11, attempts=5), ids, 4, 8, 2)


def test_large_design_one_attempt():
    ids = [str(i) for i in range(20_000)]
    tuples, q = design_with_quality(ids, seed=1, attempts=1)
    check_design(tuples, ids, 4, 8, 2)
    assert q.max_overlap == 2 and q.pair_max <= 2


def test_deterministic_for_a_seed_and_independent_of_input_order():
    ids = [str(i) for i in range(200)]
    a = design_tuples(ids, seed=3, attempts=5)
    assert a == design_tuples(list(reversed(ids)), seed=3, attempts=5)
    assert a != design_tuples(ids, seed=4, attempts=5)


def test_best_of_attempts_has_smallest_pair_spread():
    ids = [str(i) for i in range(120)]
    one = design_with_quality(ids, seed=5, attempts=1)[1]
    many = design_with_quality(ids, seed=5, attempts=30)[1]
    assert many.pair_sd <= one.pair_sd
    # the first attempt of both runs is the same draw, so the 30-attempt design is at least as good
    assert many.attempts == 30


def test_pair_sd_is_population_sd_over_all_pairs():
    ids = [str(i) for i in range(40)]
    tuples, q = design_with_quality(ids, seed=0, attempts=2)
    co = Counter(frozenset(p) for t in tuples for p in combinations(t, 2))
    values = [co.get(frozenset(p), 0) for p in combinations(ids, 2)]
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    assert q.pair_sd == pytest.approx(sd)
    assert q.pair_max == max(values) and q.pairs_covered == pytest.approx(sum(v > 0 for v in values) / len(values))


@pytest.mark.parametrize(
    "n,kwargs,fragment",
    [
        (3, {}, "cannot fill a tuple"),
        (8, {}, "no valid design exists"),  # 16 tuples need 64 distinct triples; 8 items have 56
        (5, {"tuple_size": 4, "appearances": 3}, "not a multiple"),
        (10, {"tuple_size": 1}, "too small"),
        (10, {"appearances": 0}, "at least 1"),
    ],
)
def test_impossible_designs_raise_a_clear_error(n, kwargs, fragment):
    with pytest.raises(ConfigError, match=fragment) as err:
        design_tuples([str(i) for i in range(n)], **kwargs)
    assert "\n" not in str(err.value)


def test_duplicate_and_empty_ids_are_rejected():
    with pytest.raises(ConfigError, match="more than once"):
        design_tuples(["a", "b", "c", "d", "a"])
    with pytest.raises(ConfigError, match="empty id"):
        design_tuples(["a", ""])


def test_search_that_finds_nothing_says_so():
    # 9 items is feasible but tight; with no repair steps no attempt can be valid
    with pytest.raises(ConfigError, match="no valid design found"):
        design_with_quality([str(i) for i in range(9)], attempts=2, max_repair_steps=0)
