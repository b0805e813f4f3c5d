"""Best-worst scores by counting, with confidence intervals from the item's appearances or over tuples.

Counting (Orme 2009; Kiritchenko & Mohammad 2016): an item's score is
``(times chosen best - times chosen worst) / times it appeared in an annotated tuple``, in
[-1, 1]; ``score_normalized = (score + 1) / 2`` is in [0, 1]. Higher = more of the property.

Confidence intervals of ``score`` (columns ``ci_low, ci_high``, with ``interval`` naming the
method and ``note`` saying why an item has none):

* ``score`` (:func:`add_score_ci`, the default): each of the item's ``n`` appearances is a trial
  that ends best, worst or neither, and the score is the difference of the best and worst shares;
  the interval is the score interval of that difference (:mod:`biaslab.stats.trinomial`). It
  depends on ``n`` -- two appearances, both best, give [-0.315, 1], never [1, 1] -- and treats the
  appearances as independent given the tuples (annotator effects are not modelled); when the
  chance of best/worst differs between the item's tuples it is conservative.
* ``bootstrap`` (:func:`add_bootstrap_ci`): resample *tuples* (each with all of its annotations)
  with replacement and take percentile intervals of each item's score (an item missing from a
  resample is skipped for that resample). An item in fewer than
  :func:`~biaslab.stats.clustered.min_clusters` tuples (6 at 95%: with fewer, no test over tuples
  can reach p < 0.05), or whose bootstrap interval has no width (every resample gave the same
  score), gets the score interval instead.

Items with fewer than :data:`MIN_APPEARANCES` appearances get no interval: "too few judgements".
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from biaslab.bws.data import BwsData, index_annotations, read_annotations, validate_annotations

__all__ = [
    "score_counting",
    "read_annotations",
    "counting_scores",
    "tuple_count_matrices",
    "bootstrap_ci",
    "add_bootstrap_ci",
    "add_score_ci",
    "score_ci",
    "tuples_per_item",
    "SCORE_COLUMNS",
    "MIN_APPEARANCES",
]

SCORE_COLUMNS = ["id", "score", "score_normalized", "n_best", "n_worst", "n_appearances"]
MIN_APPEARANCES = 2  # fewer appearances: no interval ("too few judgements")


def counting_scores(data: BwsData, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_best, n_worst, n_appearances) per item, over the annotations selected by ``mask``."""
    n = data.n_items
    best, worst, items = data.best, data.worst, data.items
    if mask is not None:
        best, worst, items = best[mask], worst[mask], items[mask]
    return (np.bincount(best, minlength=n), np.bincount(worst, minlength=n), np.bincount(items.ravel(), minlength=n))


def score_counting(df: pd.DataFrame, *, decimals: int | None = None, source: str = "annotations") -> pd.DataFrame:
    """Counting scores of every item in an annotations frame (released layout).

    Returns columns ``id, score, score_normalized, n_best, n_worst, n_appearances``, sorted by
    score (highest first, then id). With ``decimals`` the score is rounded first and the
    normalised score computed from the rounded one, as in the Fifty Shades of Bias release.
    """
    data = index_annotations(validate_annotations(df, source=source))
    return counting_frame(data, decimals)


def counting_frame(data: BwsData, decimals: int | None) -> pd.DataFrame:
    nb, nw, na = counting_scores(data)
    score = (nb - nw) / na
    if decimals is not None:
        score = np.round(score, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    out = pd.DataFrame(
        {
            "id": data.ids.astype(str),
            "score": score,
            "score_normalized": (score + 1) / 2,
            "n_best": nb,
            "n_worst": nw,
            "n_appearances": na,
        }
    )
    return sorted_by_score(out)


def sorted_by_score(out: pd.DataFrame) -> pd.DataFrame:
    # ids are in natural order already; a stable sort on score keeps that order among ties
    order = np.argsort(-out["score"].to_numpy(), kind="stable")
    return out.iloc[order].reset_index(drop=True)


def tuple_count_matrices(data: BwsData):
    """Sparse (tuples x items) matrices of best-minus-worst counts and of appearances."""
    from scipy import sparse

    t, n = data.n_tuples, data.n_items
    ones = np.ones(data.n_annotations)
    diff = (
        sparse.coo_matrix((ones, (data.tuple_of, data.best)), shape=(t, n))
        - sparse.coo_matrix((ones, (data.tuple_of, data.worst)), shape=(t, n))
    ).tocsc()
    k = data.items.shape[1]
    app = sparse.coo_matrix(
        (np.ones(data.items.size), (np.repeat(data.tuple_of, k), data.items.ravel())), shape=(t, n)
    ).tocsc()
    return diff, app


def bootstrap_ci(
    data: BwsData, *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95, max_cells: int = 20_000_000
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile CI of each item's counting score (item order of ``data.ids``), resampling tuples."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    t, n = data.n_tuples, data.n_items
    draws = rng.integers(0, t, size=(n_resamples, t))
    # one row per resample; repeated tuple indices in a row add up in the products below
    weights = sparse.csr_matrix(
        (np.ones(draws.size), draws.ravel(), np.arange(0, draws.size + 1, t)), shape=(n_resamples, t)
    )
    diff, app = tuple_count_matrices(data)
    alpha = (1 - confidence) / 2
    low, high = np.full(n, np.nan), np.full(n, np.nan)
    chunk = max(1, max_cells // max(1, n_resamples))
    for start in range(0, n, chunk):
        sl = slice(start, min(n, start + chunk))
        num = (weights @ diff[:, sl]).toarray()
        den = (weights @ app[:, sl]).toarray()
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(den > 0, num / den, np.nan)
        lo, hi = np.quantile(s, [alpha, 1 - alpha], axis=0)  # NaN where an item missed a resample
        missed = np.flatnonzero(np.isnan(lo))
        if missed.size:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an item absent from every resample
                lo[missed] = np.nanquantile(s[:, missed], alpha, axis=0)
                hi[missed] = np.nanquantile(s[:, missed], 1 - alpha, axis=0)
        low[sl], high[sl] = lo, hi
    return low, high


def score_ci(data: BwsData, *, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(low, high, note)`` per item (order of ``data.ids``): the score interval of each item's
    counting score from its appearances; NaN and a note for items below :data:`MIN_APPEARANCES`."""
    from biaslab.stats.trinomial import difference_score_interval

    nb, nw, na = counting_scores(data)
    low, high = difference_score_interval(nb, nw, np.maximum(na, 1), confidence)
    few = na < MIN_APPEARANCES
    low[few], high[few] = np.nan, np.nan
    return low, high, [too_few_judgements(int(k)) if k < MIN_APPEARANCES else "" for k in na]


def tuples_per_item(data: BwsData) -> np.ndarray:
    """How many distinct tuples each item appears in (order of ``data.ids``)."""
    k = data.items.shape[1]
    pairs = np.unique(np.stack([np.repeat(data.tuple_of, k), data.items.ravel()], axis=1), axis=0)
    return np.bincount(pairs[:, 1], minlength=data.n_items)


def too_few_judgements(n: int) -> str:
    return f"too few judgements ({n} appearance{'' if n == 1 else 's'}; an interval needs {MIN_APPEARANCES})"


def add_score_ci(scores: pd.DataFrame, data: BwsData, *, confidence: float = 0.95) -> pd.DataFrame:
    """``scores`` with ``ci_low, ci_high, interval, note`` from :func:`score_ci`, matched by id."""
    low, high, note = score_ci(data, confidence=confidence)
    kind = np.where(np.isnan(low), "", "score")
    ci = pd.DataFrame({"id": data.ids.astype(str), "ci_low": low, "ci_high": high, "interval": kind, "note": note})
    return scores.merge(ci, on="id", how="left")


def add_bootstrap_ci(scores: pd.DataFrame, data: BwsData, *, confidence: float = 0.95, **kwargs) -> pd.DataFrame:
    """``scores`` with ``ci_low, ci_high, interval, note`` (counting scores, tuple bootstrap), matched by
    id; an item whose bootstrap interval has no width gets its score interval (``interval`` says so)."""
    from biaslab.stats.clustered import min_clusters

    low, high = bootstrap_ci(data, confidence=confidence, **kwargs)
    s_low, s_high, note = score_ci(data, confidence=confidence)
    few_tuples = tuples_per_item(data) < min_clusters(confidence)
    collapsed = ~(high - low > 1e-12)  # NaN or zero width
    kind = np.where(
        few_tuples,
        f"score (in fewer than {min_clusters(confidence)} tuples: no bootstrap)",
        np.where(collapsed, "score (the bootstrap had no spread)", "bootstrap"),
    )
    swap = few_tuples | collapsed
    low, high = np.where(swap, s_low, low), np.where(swap, s_high, high)
    few = np.isnan(s_low)
    low[few], high[few] = np.nan, np.nan
    kind[few] = ""
    ci = pd.DataFrame({"id": data.ids.astype(str), "ci_low": low, "ci_high": high, "interval": kind, "note": note})
    return scores.merge(ci, on="id", how="left")


def score_file(path: str | Path, *, decimals: int | None = None) -> pd.DataFrame:
    """Counting scores of an annotations file."""
    return counting_frame(index_annotations(read_annotations(path)), decimals)
