"""Bradley-Terry scores from best-worst annotations.

Each annotation of a K-tuple gives the pairwise outcomes it implies: the best item beats each
of the other K-1, and each middle item beats the worst (2K-3 outcomes, 5 for 4-tuples). The
Bradley-Terry model ``P(i beats j) = sigmoid(theta_i - theta_j)`` is fitted by maximum a
posteriori with the Gaussian penalty ``alpha * sum(theta^2)`` (the objective of
``choix.opt_pairwise``). The penalty keeps the strengths finite for items that always (or never)
win. The fit is a logistic regression without intercept on rows ``e_winner - e_loser``, solved by
scikit-learn's L-BFGS (the same optimum as ``choix.opt_pairwise``, much faster on thousands of
comparisons; the tests check the two agree).

**Connectedness.** Strengths are comparable only between items linked by a chain of
comparisons. When the comparison graph (items joined by every implied outcome) falls apart into
several components, the likelihood says nothing about how one component stands against another:
the penalty alone puts each component's mean at 0, so a ranking across components is an artefact.
Each item's ``component`` is reported (1 = the largest, then by size), ``score`` is centred and
``score_normalized`` min-max rescaled *within* its component, rows are sorted by component and
then score, and the frame's ``attrs["components"]`` lists every component's ids: callers must say
so instead of printing one ranking.

``score`` is the centred log-strength, rounded to 4 decimals: the solver agrees with choix to about
3e-5, so further digits are solver noise (they printed as values like -1.2e-06 for items at 0).
CIs resample tuples, as for counting (centred within components likewise); an item gets none
(``note`` says why) with fewer than 2 appearances, in fewer tuples than a 95% interval over tuples
needs (:func:`~biaslab.stats.clustered.min_clusters`, 6), or when every resample gave it the same
score.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biaslab.bws.data import BwsData
from biaslab.bws.score import counting_scores, sorted_by_score

__all__ = [
    "pairwise_outcomes",
    "fit_bradley_terry",
    "score_bradley_terry",
    "comparison_components",
    "DEFAULT_ALPHA",
    "DECIMALS",
]

DEFAULT_ALPHA = 0.01
DECIMALS = 4


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


def fit_bradley_terry(
    n_items: int,
    winners: np.ndarray,
    losers: np.ndarray,
    *,
    alpha: float = DEFAULT_ALPHA,
    weights: np.ndarray | None = None,
    init: np.ndarray | None = None,
) -> np.ndarray:
    """Centred MAP log-strengths for the outcomes ``winners[i]`` beat ``losers[i]`` (optionally weighted)."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    m = winners.size
    rows = np.arange(m)
    x = sparse.csr_matrix(
        (np.r_[np.ones(m), -np.ones(m)], (np.r_[rows, rows], np.r_[winners, losers])), shape=(m, n_items)
    )
    # each outcome once as "row wins" (label 1) and once mirrored (label 0): the two classes carry
    # the same likelihood, so the penalty is scaled to match alpha * sum(theta^2) on one copy
    X = sparse.vstack([x, -x]).tocsr()
    y = np.r_[np.ones(m), np.zeros(m)]
    w = None if weights is None else np.r_[weights, weights]
    model = LogisticRegression(
        C=1 / (4 * alpha), fit_intercept=False, tol=1e-8, max_iter=10_000, warm_start=init is not None
    )
    if init is not None:
        model.coef_ = np.asarray(init, dtype=float).reshape(1, -1).copy()
        model.intercept_ = np.zeros(1)
        model.classes_ = np.array([0.0, 1.0])
    model.fit(X, y, sample_weight=w)
    theta = model.coef_.ravel()
    return theta - theta.mean()


def comparison_components(n_items: int, winners: np.ndarray, losers: np.ndarray) -> np.ndarray:
    """Component number (1 = the most items; ties by first item) of every item in the undirected
    graph joining each winner to its loser. Items never compared each form their own component."""
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    graph = sparse.coo_matrix((np.ones(winners.size), (winners, losers)), shape=(n_items, n_items))
    _, labels = connected_components(graph, directed=False)
    sizes = np.bincount(labels)
    first = np.full(sizes.size, n_items)
    np.minimum.at(first, labels, np.arange(n_items))
    order = np.lexsort((first, -sizes))  # biggest first, then by first item
    rank = np.empty(sizes.size, dtype=int)
    rank[order] = np.arange(1, sizes.size + 1)
    return rank[labels]


def _within(values: np.ndarray, component: np.ndarray, how: str) -> np.ndarray:
    """Centre (``how="centre"``) or min-max rescale (``"minmax"``) ``values`` within each component."""
    out = np.empty_like(values, dtype=float)
    for c in np.unique(component):
        m = component == c
        v = values[m]
        if how == "centre":
            out[m] = v - v.mean()
        else:
            span = v.max() - v.min()
            out[m] = (v - v.min()) / span if span > 0 else 0.5
    return out


def score_bradley_terry(
    data: BwsData, *, alpha: float = DEFAULT_ALPHA, n_resamples: int = 0, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """Bradley-Terry scores (and, with ``n_resamples``, tuple-bootstrap percentile CIs of ``score``)."""
    winners, losers, ann = pairwise_outcomes(data)
    component = comparison_components(data.n_items, winners, losers)
    theta = _within(fit_bradley_terry(data.n_items, winners, losers, alpha=alpha), component, "centre")
    nb, nw, na = counting_scores(data)
    score = np.round(theta, DECIMALS) + 0.0  # + 0.0: no -0.0
    out = pd.DataFrame(
        {
            "id": data.ids.astype(str),
            "score": score,
            "score_normalized": _within(score, component, "minmax"),
            "n_best": nb,
            "n_worst": nw,
            "n_appearances": na,
            "component": component,
        }
    )
    if n_resamples:
        rng = np.random.default_rng(seed)
        tuple_of_outcome = data.tuple_of[ann]
        samples = np.empty((n_resamples, data.n_items))
        for r in range(n_resamples):
            drawn = np.bincount(rng.integers(0, data.n_tuples, size=data.n_tuples), minlength=data.n_tuples)
            weights = drawn[tuple_of_outcome].astype(float)
            keep = weights > 0
            fit = fit_bradley_terry(
                data.n_items, winners[keep], losers[keep], alpha=alpha, weights=weights[keep], init=theta
            )
            # an item absent from the resample sits at its prior mean: leave it out of its interval
            present = np.bincount(np.r_[winners[keep], losers[keep]], minlength=data.n_items) > 0
            samples[r] = np.where(present, _within(fit, component, "centre"), np.nan)
        q = (1 - confidence) / 2
        low = np.round(np.nanquantile(samples, q, axis=0), DECIMALS) + 0.0
        high = np.round(np.nanquantile(samples, 1 - q, axis=0), DECIMALS) + 0.0
        note = bootstrap_notes(data, low, high, confidence)
        bad = np.array([bool(x) for x in note])
        low[bad], high[bad] = np.nan, np.nan
        out["ci_low"], out["ci_high"] = low, high
        out["interval"] = np.where(bad, "", "bootstrap")
        out["note"] = note
    ids = data.ids.astype(str)
    out.attrs["components"] = [ids[component == c].tolist() for c in range(1, int(component.max()) + 1)]
    return _by_component(out)


def bootstrap_notes(data: BwsData, low: np.ndarray, high: np.ndarray, confidence: float = 0.95) -> list[str]:
    """Per item (order of ``data.ids``), why its tuple-bootstrap interval is not shown ("" if it is):
    too few appearances, too few tuples to resample (fewer than
    :func:`~biaslab.stats.clustered.min_clusters`: no test over so few tuples reaches p < 0.05), or
    no spread over the resamples."""
    from biaslab.bws.score import MIN_APPEARANCES, too_few_judgements, tuples_per_item
    from biaslab.stats.clustered import min_clusters

    _, _, na = counting_scores(data)
    k = tuples_per_item(data)
    need = min_clusters(confidence)
    notes = []
    for i in range(data.n_items):
        if na[i] < MIN_APPEARANCES:
            notes.append(too_few_judgements(int(na[i])))
        elif k[i] < need:
            notes.append(
                f"too few judgements for a bootstrap over tuples (in {k[i]} tuple{'' if k[i] == 1 else 's'}; "
                f"needs {need})"
            )
        elif not high[i] - low[i] > 1e-12:
            notes.append("no interval: every bootstrap resample gave the same score")
        else:
            notes.append("")
    return notes


def _by_component(out: pd.DataFrame) -> pd.DataFrame:
    """Rows by component, then highest score first (ties in natural id order, as ``sorted_by_score``)."""
    attrs = dict(out.attrs)
    ranked = sorted_by_score(out)
    ranked = ranked.iloc[np.argsort(ranked["component"].to_numpy(), kind="stable")].reset_index(drop=True)
    ranked.attrs.update(attrs)
    return ranked
