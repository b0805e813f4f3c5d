"""Bradley-Terry scores from best-worst annotations.

Each annotation of a K-tuple gives the pairwise outcomes it implies: the best item beats each
of the other K-1, and each middle item beats the worst (2K-3 outcomes, 5 for 4-tuples). The
Bradley-Terry model ``P(i beats j) = sigmoid(theta_i - theta_j)`` is fitted by maximum a
posteriori with the Gaussian penalty ``alpha * sum(theta^2)`` (the objective of
``choix.opt_pairwise``). The penalty keeps the strengths finite for items that always (or never)
win. The fit is a logistic regression without intercept on rows ``e_winner - e_loser``, solved by
scikit-learn's L-BFGS (the same optimum as ``choix.opt_pairwise``, much faster on thousands of
comparisons; the tests check the two agree).

``score`` is the centred log-strength; ``score_normalized`` rescales it to [0, 1] by min-max
over the items. CIs resample tuples, as for counting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biaslab.bws.data import BwsData
from biaslab.bws.score import _sorted, counting_scores

__all__ = ["pairwise_outcomes", "fit_bradley_terry", "score_bradley_terry", "DEFAULT_ALPHA"]

DEFAULT_ALPHA = 0.01


def pairwise_outcomes(data: BwsData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(winner, loser, annotation index) of every implied pairwise outcome."""
    k = data.items.shape[1]
    a = data.n_annotations
    idx = np.repeat(np.arange(a), k)
    other = data.items.ravel()
    best, worst = data.best[idx], data.worst[idx]
    beat_by_best = other != best  # best > every other item (worst included)
    beats_worst = (other != best) & (other != worst)  # middle items > worst
    winners = np.concatenate([best[beat_by_best], other[beats_worst]])
    losers = np.concatenate([other[beat_by_best], worst[beats_worst]])
    ann = np.concatenate([idx[beat_by_best], idx[beats_worst]])
    return winners, losers, ann


def fit_bradley_terry(n_items: int, winners: np.ndarray, losers: np.ndarray, *, alpha: float = DEFAULT_ALPHA,
                      weights: np.ndarray | None = None, init: np.ndarray | None = None) -> np.ndarray:
    """Centred MAP log-strengths for the outcomes ``winners[i]`` beat ``losers[i]`` (optionally weighted)."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    m = winners.size
    rows = np.arange(m)
    x = sparse.csr_matrix((np.r_[np.ones(m), -np.ones(m)], (np.r_[rows, rows], np.r_[winners, losers])),
                          shape=(m, n_items))
    # each outcome once as "row wins" (label 1) and once mirrored (label 0): the two classes carry
    # the same likelihood, so the penalty is scaled to match alpha * sum(theta^2) on one copy
    X = sparse.vstack([x, -x]).tocsr()
    y = np.r_[np.ones(m), np.zeros(m)]
    w = None if weights is None else np.r_[weights, weights]
    model = LogisticRegression(C=1 / (4 * alpha), fit_intercept=False, tol=1e-8, max_iter=10_000,
                               warm_start=init is not None)
    if init is not None:
        model.coef_ = np.asarray(init, dtype=float).reshape(1, -1).copy()
        model.intercept_ = np.zeros(1)
        model.classes_ = np.array([0.0, 1.0])
    model.fit(X, y, sample_weight=w)
    theta = model.coef_.ravel()
    return theta - theta.mean()


def _normalise(theta: np.ndarray) -> np.ndarray:
    span = theta.max() - theta.min()
    return (theta - theta.min()) / span if span > 0 else np.full_like(theta, 0.5)


def score_bradley_terry(data: BwsData, *, alpha: float = DEFAULT_ALPHA, n_resamples: int = 0, seed: int = 0,
                        confidence: float = 0.95) -> pd.DataFrame:
    """Bradley-Terry scores (and, with ``n_resamples``, tuple-bootstrap percentile CIs of ``score``)."""
    winners, losers, ann = pairwise_outcomes(data)
    theta = fit_bradley_terry(data.n_items, winners, losers, alpha=alpha)
    nb, nw, na = counting_scores(data)
    out = pd.DataFrame({"id": data.ids.astype(str), "score": theta, "score_normalized": _normalise(theta),
                        "n_best": nb, "n_worst": nw, "n_appearances": na})
    if n_resamples:
        rng = np.random.default_rng(seed)
        tuple_of_outcome = data.tuple_of[ann]
        samples = np.empty((n_resamples, data.n_items))
        for r in range(n_resamples):
            drawn = np.bincount(rng.integers(0, data.n_tuples, size=data.n_tuples), minlength=data.n_tuples)
            weights = drawn[tuple_of_outcome].astype(float)
            keep = weights > 0
            fit = fit_bradley_terry(data.n_items, winners[keep], losers[keep], alpha=alpha, weights=weights[keep],
                                    init=theta)
            # an item absent from the resample sits at its prior mean: leave it out of its interval
            present = np.bincount(np.r_[winners[keep], losers[keep]], minlength=data.n_items) > 0
            samples[r] = np.where(present, fit, np.nan)
        q = (1 - confidence) / 2
        out["ci_low"] = np.nanquantile(samples, q, axis=0)
        out["ci_high"] = np.nanquantile(samples, 1 - q, axis=0)
    return _sorted(out)
