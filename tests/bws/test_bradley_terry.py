"""Bradley-Terry scores: implied outcomes, agreement with choix, recovery of a latent order."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from biaslab.bws.bradley_terry import fit_bradley_terry, pairwise_outcomes, score_bradley_terry
from biaslab.bws.data import index_annotations
from tests.bws.simulate import simulate


def test_outcomes_implied_by_one_annotation():
    df = pd.DataFrame([["a", "b", "c", "d", "b", "d"]],
                      columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"])
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
    assert abs(scores["score"].mean()) < 1e-6
    inside = (scores.ci_low <= scores.score + 1e-9) & (scores.score <= scores.ci_high + 1e-9)
    assert inside.mean() > 0.95
