"""Bradley-Terry scores: implied outcomes, agreement with choix, recovery of a latent order."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from biaslab.bws.bradley_terry import (
    comparison_components,
    fit_bradley_terry,
    pairwise_outcomes,
    score_bradley_terry,
)
from biaslab.bws.data import index_annotations
from tests.bws.simulate import simulate


def test_outcomes_implied_by_one_annotation():
    df = pd.DataFrame(
        [["a", "b", "c", "d", "b", "d"]], columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"]
    )
    data = index_annotations(df)
    w, lose, ann = pairwise_outcomes(data)
    names = data.ids
    got = sorted((names[i], names[j]) for i, j in zip(w, lose))
    # best beats the other three, the two middle items beat the worst: 5 outcomes
    assert got == sorted([("b", "a"), ("b", "c"), ("b", "d"), ("a", "d"), ("c", "d")])
    assert (ann == 0).all()


def test_same_optimum_as_choix():
    choix = pytest.importorskip("choix")
    df, _ = simulate(n_items=60, per_tuple=2, seed=4)
    data = index_annotations(df)
    w, lose, _ = pairwise_outcomes(data)
    ours = fit_bradley_terry(data.n_items, w, lose, alpha=0.05)
    ref = choix.opt_pairwise(data.n_items, list(zip(w.tolist(), lose.tolist())), alpha=0.05, tol=1e-9)
    assert np.allclose(ours, ref - ref.mean(), atol=1e-3)


def test_weights_equal_repeated_outcomes():
    df, _ = simulate(n_items=40, per_tuple=1, seed=5)
    data = index_annotations(df)
    w, lose, _ = pairwise_outcomes(data)
    weighted = fit_bradley_terry(data.n_items, w, lose, weights=np.full(w.size, 2.0))
    doubled = fit_bradley_terry(data.n_items, np.r_[w, w], np.r_[lose, lose])
    assert np.allclose(weighted, doubled, atol=1e-4)


def test_recovers_latent_order_and_cis_bracket():
    df, latent = simulate(n_items=120, per_tuple=3, seed=6)
    data = index_annotations(df)
    scores = score_bradley_terry(data, n_resamples=30, seed=0)
    assert spearmanr(scores["score"], [latent[i] for i in scores["id"]])[0] > 0.9
    assert scores["score_normalized"].min() == 0 and scores["score_normalized"].max() == 1
    assert abs(scores["score"].mean()) < 1e-4  # centred, then rounded to 4 decimals
    assert (scores["component"] == 1).all() and scores.attrs["components"] == [sorted(latent, key=str)]
    inside = (scores.ci_low <= scores.score + 1e-9) & (scores.score <= scores.ci_high + 1e-9)
    assert inside.mean() > 0.95 and (scores.interval == "bootstrap").all() and (scores.note == "").all()


ISSUE = pd.DataFrame(  # two tuples that share no item: the issue's "few judgements" case
    [["a", "b", "c", "d", "a", "d"], ["b", "a", "d", "c", "a", "d"], ["e", "f", "g", "h", "e", "h"]],
    columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"],
)


def test_disconnected_graph_is_scored_per_component_and_said_so():
    data = index_annotations(ISSUE)
    w, lose, _ = pairwise_outcomes(data)
    assert comparison_components(data.n_items, w, lose).tolist() == [1, 1, 1, 1, 2, 2, 2, 2]
    scores = score_bradley_terry(data, n_resamples=20)
    assert scores.attrs["components"] == [["a", "b", "c", "d"], ["e", "f", "g", "h"]]
    assert scores["id"].tolist() == ["a", "b", "c", "d", "e", "f", "g", "h"]  # by component, then score
    assert scores["component"].tolist() == [1, 1, 1, 1, 2, 2, 2, 2]
    by_id = scores.set_index("id")
    for comp in ("abcd", "efgh"):  # each component centred and rescaled on its own
        assert by_id.loc[list(comp), "score"].sum() == pytest.approx(0, abs=2e-4)
        assert by_id.loc[list(comp), "score_normalized"].tolist() == [1.0, 0.5, 0.5, 0.0]
    # never-picked middle items sit exactly at 0 (no -1.2e-06 solver noise) and the twice-best item on top
    assert by_id.loc["b", "score"] == 0.0 and not np.signbit(by_id.loc["b", "score"])
    assert by_id.loc["a", "score"] > by_id.loc["b", "score"]
    # one tuple per item: no bootstrap interval, each with its reason
    assert scores.ci_low.isna().all() and (scores.interval == "").all()
    assert by_id.loc["a", "note"] == "too few judgements for a bootstrap over tuples (in 1 tuple; needs 6)"
    assert by_id.loc["e", "note"] == "too few judgements (1 appearance; an interval needs 2)"


def test_isolated_items_are_their_own_components():
    w, lose = np.array([0, 1]), np.array([1, 2])
    assert comparison_components(5, w, lose).tolist() == [1, 1, 1, 2, 3]
