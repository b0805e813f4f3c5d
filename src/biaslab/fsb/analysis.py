"""The Fifty Shades of Bias analyses of graded texts, for any texts/scores pair.

Inputs: a texts table (an id column, a text column, optional metadata columns such as
``seed_type`` or ``prompt_type``) and a scores table (``id`` plus a score in [0, 1], by default
``score_normalized`` as written by ``biaslab bws score``). Outputs (plain data, see
:func:`analyze`): score bins with counts, metadata x bin tables, a 10-bin histogram, PMI of words
per bin and log-odds ratios with a Dirichlet prior of n-grams between pairs of bins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from biaslab.errors import ConfigError, DataError
from biaslab.stats.lexical import TOKEN_PATTERN, log_odds_dirichlet, pmi_by_group, top_terms

__all__ = ["AnalysisConfig", "join_texts_scores", "assign_bins", "analyze", "PAPER_THRESHOLDS", "guess_group_columns"]

PAPER_THRESHOLDS = (0.316, 0.579)


@dataclass
class AnalysisConfig:
    thresholds: Sequence[float] = PAPER_THRESHOLDS
    group_columns: Sequence[str] | None = None  # None: guess (few distinct values)
    pmi_min_count: int = 5  # rarer words all tie at a bin's maximum PMI (a word seen once ranks first)
    top: int = 10
    compare: Sequence[tuple[int, int]] | None = None  # None: every pair of adjacent bins
    prior: str = "uniform"  # or "informative"
    prior_value: float = 0.1  # uniform pseudo-count per n-gram (ConvoKit's default)
    prior_scale: float = 0.1  # informative: pseudo-counts = this x the n-gram's count in all texts
    min_df: int = 10
    max_df: float = 0.5
    max_features: int = 15_000
    ngram_range: tuple[int, int] = (1, 3)
    min_words: int = 2  # report n-grams of at least this many words (the paper reports bigrams/trigrams)

    def check(self) -> None:
        t = list(self.thresholds)
        if not t or any(not 0 < x < 1 for x in t) or any(b <= a for a, b in zip(t, t[1:])):
            raise ConfigError(
                f"--thresholds {','.join(map(str, t))} must be increasing values strictly between 0 and 1"
            )
        if self.prior not in ("uniform", "informative"):
            raise ConfigError(f"--prior {self.prior} is unknown; use uniform or informative")
        if self.prior_value <= 0 or self.prior_scale <= 0:
            raise ConfigError("--prior-value and --prior-scale must be positive")
        if self.top < 1 or self.pmi_min_count < 1 or self.min_df < 1:
            raise ConfigError("--top, --min-count and --min-df must be at least 1")
        if not 0 < self.max_df <= 1:
            raise ConfigError(f"--max-df must be in (0, 1], got {self.max_df}")
        lo, hi = self.ngram_range
        if not 1 <= lo <= hi or not lo <= self.min_words <= hi:
            raise ConfigError(
                f"--ngram-range {lo}-{hi} must satisfy 1 <= low <= high and contain --min-words {self.min_words}"
            )
        n_bins = len(t) + 1
        for a, b in self.compare or []:
            if a == b or not (1 <= a <= n_bins and 1 <= b <= n_bins):
                raise ConfigError(f"--compare {a},{b}: bins are numbered 1..{n_bins} and must differ")


def guess_group_columns(texts: pd.DataFrame, exclude: Sequence[str]) -> list[str]:
    """Metadata columns worth cross-tabulating: 2-20 distinct values, fewer than half the rows."""
    out = []
    for c in texts.columns:
        if c in exclude or str(c).startswith("Unnamed"):
            continue
        k = texts[c].nunique()
        if 2 <= k <= 20 and k < len(texts) / 2:
            out.append(c)
    return out


def join_texts_scores(
    texts: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    id_column: str,
    text_column: str,
    score_column: str,
    texts_source: str,
    scores_source: str,
) -> tuple[pd.DataFrame, list[str]]:
    """Texts with their scores (inner join on id); also the ids of texts that have no score.

    Raises DataError for a score whose id is not in the texts, a duplicated scored id, or a
    score that is missing or outside [0, 1].
    """
    for col in ("id", score_column):
        if col not in scores.columns:
            hint = " (counting scores in [-1, 1] are in 'score'; use score_normalized)" if col != "id" else ""
            raise DataError(
                f"{scores_source}: no {col!r} column (found: {', '.join(map(str, scores.columns))})"
                f"{hint}; pass --score-column"
            )
    if text_column not in texts.columns:
        raise DataError(
            f"{texts_source}: no {text_column!r} column (found: {', '.join(map(str, texts.columns))}); "
            f"pass --text-column"
        )
    sc = scores[["id", score_column]].copy()
    sc["id"] = sc["id"].astype(str).str.strip()
    dup = np.flatnonzero(sc["id"].duplicated().to_numpy())
    if dup.size:
        r = int(dup[0])
        raise DataError(f"{scores_source}: line {r + 2}: id {sc['id'].iat[r]} is scored twice; keep one score per id")
    values = pd.to_numeric(sc[score_column], errors="coerce")
    bad = np.flatnonzero(~((values >= 0) & (values <= 1)).to_numpy())
    if bad.size:
        r = int(bad[0])
        raise DataError(
            f"{scores_source}: line {r + 2}: {score_column} {sc[score_column].iat[r]!r} is not a number "
            f"in [0, 1]; bins need normalised scores"
        )
    sc[score_column] = values
    known = set(texts[id_column])
    unknown = np.flatnonzero(~sc["id"].isin(known).to_numpy())
    if unknown.size:
        r = int(unknown[0])
        raise DataError(
            f"{scores_source}: line {r + 2}: id {sc['id'].iat[r]} is not in {texts_source} "
            f"(column {id_column}); pass the texts that were scored"
        )
    merged = texts.merge(sc.rename(columns={"id": id_column, score_column: "_score"}), on=id_column, how="inner")
    unscored = sorted(set(texts[id_column]) - set(sc["id"]))
    if merged.empty:
        raise DataError(f"{scores_source}: no scored ids; nothing to analyse")
    return merged, unscored


def assign_bins(scores: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Bin number (1-based) of each score: bin i holds [t_{i-1}, t_i), the last bin includes 1."""
    return np.searchsorted(np.asarray(thresholds, dtype=float), scores, side="right") + 1


def _bin_ranges(thresholds: Sequence[float]) -> list[tuple[float, float]]:
    edges = [0.0, *map(float, thresholds), 1.0]
    return list(zip(edges[:-1], edges[1:]))


def histogram(scores: np.ndarray, n_bins: int = 10) -> pd.DataFrame:
    """Counts in ``n_bins`` equal bins over [0, 1] (each [low, high), the last one includes 1)."""
    edges = np.round(np.linspace(0, 1, n_bins + 1), 12)
    idx = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins)
    return pd.DataFrame({"low": edges[:-1], "high": edges[1:], "count": counts})


def _vectorizer(cfg: AnalysisConfig, vocabulary=None):
    from sklearn.feature_extraction.text import CountVectorizer

    if vocabulary is not None:
        return CountVectorizer(
            decode_error="ignore",
            ngram_range=tuple(cfg.ngram_range),
            vocabulary=vocabulary,
            token_pattern=TOKEN_PATTERN,
        )
    return CountVectorizer(
        decode_error="ignore",
        min_df=cfg.min_df,
        max_df=cfg.max_df,
        ngram_range=tuple(cfg.ngram_range),
        max_features=cfg.max_features,
        token_pattern=TOKEN_PATTERN,
    )


def log_odds_between(texts_a: list[str], texts_b: list[str], all_texts: list[str], cfg: AnalysisConfig) -> pd.DataFrame:
    """Every vocabulary n-gram with its counts in a and b and its z-score (positive: typical of a).

    The vocabulary is fitted on the texts of both groups with ConvoKit's FightingWords settings
    (min_df, max_df, n-gram range, max_features); the prior is uniform (``prior_value`` per
    n-gram) or informative (``prior_scale`` x the n-gram's count over ``all_texts``).
    """
    cv = _vectorizer(cfg)
    try:
        m = cv.fit_transform(texts_a + texts_b)
    except ValueError:  # empty vocabulary after min_df/max_df pruning
        return pd.DataFrame(columns=["ngram", "n_words", "count_a", "count_b", "prior", "z"])
    counts_a = np.asarray(m[: len(texts_a)].sum(axis=0)).ravel()
    counts_b = np.asarray(m[len(texts_a) :].sum(axis=0)).ravel()
    terms = cv.get_feature_names_out().tolist()
    if cfg.prior == "uniform":
        prior = np.full(len(terms), cfg.prior_value)
    else:
        bg = np.asarray(_vectorizer(cfg, cv.vocabulary_).transform(all_texts).sum(axis=0)).ravel()
        prior = cfg.prior_scale * bg.astype(float)
    z = log_odds_dirichlet(counts_a, counts_b, prior)
    return pd.DataFrame(
        {
            "ngram": terms,
            "n_words": [t.count(" ") + 1 for t in terms],
            "count_a": counts_a,
            "count_b": counts_b,
            "prior": prior,
            "z": z,
        }
    )


def analyze(merged: pd.DataFrame, *, text_column: str, cfg: AnalysisConfig, group_columns: Sequence[str]) -> dict:
    """All analyses on a joined table (column ``_score``). Returns plain data plus DataFrames.

    Keys: ``bins`` (DataFrame), ``histogram`` (DataFrame), ``crosstabs`` ({column: DataFrame of
    counts, rows = values, columns = bins}), ``pmi`` (DataFrame of every word per bin, ranked),
    ``log_odds`` (list of {"a", "b", "table": DataFrame, "top_a", "top_b"}).
    """
    cfg.check()
    scores = merged["_score"].to_numpy(dtype=float)
    bins = assign_bins(scores, cfg.thresholds)
    n_bins = len(cfg.thresholds) + 1
    ranges = _bin_ranges(cfg.thresholds)
    counts = np.bincount(bins, minlength=n_bins + 1)[1:]
    bin_table = pd.DataFrame(
        {
            "bin": range(1, n_bins + 1),
            "low": [r[0] for r in ranges],
            "high": [r[1] for r in ranges],
            "count": counts,
            "share": counts / counts.sum(),
            "mean_score": [
                float(scores[bins == b].mean()) if counts[b - 1] else float("nan") for b in range(1, n_bins + 1)
            ],
        }
    )
    crosstabs = {}
    for col in group_columns:
        ct = pd.crosstab(merged[col].astype(str), pd.Categorical(bins, categories=range(1, n_bins + 1)), dropna=False)
        ct.columns = [f"bin{b}" for b in range(1, n_bins + 1)]
        ct.index.name = col
        crosstabs[col] = ct
    texts = merged[text_column].astype(str).tolist()
    pmi = pmi_by_group(texts, bins.tolist(), min_count=cfg.pmi_min_count)
    pmi_rows = [
        {"bin": b, "rank": i + 1, "word": w, "pmi": p, "count_in_bin": c, "count_total": t}
        for b in sorted(pmi)
        for i, (w, p, c, t) in enumerate(pmi[b])
    ]
    pmi_df = pd.DataFrame(pmi_rows, columns=["bin", "rank", "word", "pmi", "count_in_bin", "count_total"])
    pairs = cfg.compare or [(b, b + 1) for b in range(1, n_bins)]
    comparisons = []
    for a, b in pairs:
        table = log_odds_between(
            [t for t, x in zip(texts, bins) if x == a], [t for t, x in zip(texts, bins) if x == b], texts, cfg
        )
        shown = table[table["n_words"] >= cfg.min_words]
        top_a, top_b = top_terms(shown["ngram"].tolist(), shown["z"].to_numpy(), cfg.top)
        comparisons.append({"a": a, "b": b, "table": table, "top_a": top_a, "top_b": top_b})
    return {
        "bins": bin_table,
        "histogram": histogram(scores),
        "crosstabs": crosstabs,
        "pmi": pmi_df,
        "log_odds": comparisons,
        "bin_of": bins,
    }
