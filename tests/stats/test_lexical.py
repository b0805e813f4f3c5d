"""PMI per group and log-odds with a Dirichlet prior, against hand computations."""

import math

import numpy as np
import pytest

from biaslab.stats.lexical import log_odds_dirichlet, pmi_by_group, tokenize, top_terms


def test_tokenize_keeps_runs_of_two_word_characters():
    assert tokenize("A well-groomed man's DOG, a cat.") == ["well", "groomed", "man", "dog", "cat"]


def test_pmi_by_hand_with_tie_break_and_min_count():
    texts = ["red red blue", "red green", "blue blue green"]
    groups = [1, 1, 2]
    # tokens: group 1: red 3, blue 1, green 1 (5); group 2: blue 2, green 1 (3); all: 8
    got = pmi_by_group(texts, groups)
    g1 = {w: (p, c, t) for w, p, c, t in got[1]}
    assert g1["red"][0] == pytest.approx(math.log2((3 / 5) / (3 / 8)))
    assert g1["blue"][0] == pytest.approx(math.log2((1 / 5) / (3 / 8)))
    assert g1["green"][0] == pytest.approx(math.log2((1 / 5) / (2 / 8)))
    assert [w for w, *_ in got[1]] == ["red", "green", "blue"]
    assert [w for w, *_ in got[2]] == ["blue", "green"]
    # ties at the same PMI: larger count in the group first, then alphabetical
    tied = pmi_by_group(["zeta zeta alpha beta", "other"], [1, 2])
    assert [w for w, *_ in tied[1]] == ["zeta", "alpha", "beta"]
    assert [w for w, *_ in pmi_by_group(["zeta zeta alpha beta", "other"], [1, 2], min_count=2)[1]] == ["zeta"]


def test_log_odds_by_hand():
    ya, yb = np.array([10.0, 2.0, 5.0]), np.array([1.0, 8.0, 5.0])
    z = log_odds_dirichlet(ya, yb, 0.5)
    na, nb, a0 = 17.0, 14.0, 1.5
    d0 = math.log((10.5) / (na + a0 - 10.5)) - math.log(1.5 / (nb + a0 - 1.5))
    assert z[0] == pytest.approx(d0 / math.sqrt(1 / 10.5 + 1 / 1.5))
    assert z[0] > 0 > z[1]
    informative = log_odds_dirichlet(ya, yb, np.array([1.1, 1.0, 1.0]))
    d0 = math.log(11.1 / (17 + 3.1 - 11.1)) - math.log(2.1 / (14 + 3.1 - 2.1))
    assert informative[0] == pytest.approx(d0 / math.sqrt(1 / 11.1 + 1 / 2.1))
    # "z" has equal counts, but corpus b is smaller, so its share there is larger: z < 0
    assert z[2] < 0
    a, b = top_terms(["x", "y", "z"], z, 2)
    assert [t for t, _ in a] == ["x"] and [t for t, _ in b] == ["y", "z"]
