"""Score annotated (or extracted) results of the Olympic probe: Table 1, Table 6, Table 2.

:func:`score_annotated` is a pure function of two DataFrames in the public format (see
:mod:`.annotated`); ``biaslab olympics score-annotated`` and the generation pipeline both use it.

Uncertainty and significance:

* Every metric's 95% interval, and the three bias scores' p values (against 0), come from one procedure
  over *events* (one item = one (Discipline, Season, Year, Event) with its men's, women's and
  underspecified texts): :func:`biaslab.probes.olympics.inference.event_inference`, whose docstring gives
  each metric's unit, null and procedure. Benjamini-Hochberg q values over the three tests.
* The paper's own tests (Appendix D), kept as ``paper_tests`` for comparison with the paper. They take
  texts as the units, so they ignore that the texts of one event share it:
  knowledge_based: two-sample permutation test of mean F1 of men's vs women's specified texts (the gender
  labels of the texts shuffled); implicit_score: a paired sign-flip permutation test of the mean of F1_m -
  F1_f over the implicit texts; explicit_score: binomial test (two-sided, p = 0.5) of the number of
  explicit texts giving only women's results among those giving only men's or only women's; BH q values
  over the three.

Both are also computed without ``unsure`` texts.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pandas as pd

from biaslab.probes.olympics.annotated import validate_annotated
from biaslab.probes.olympics.inference import TESTED, event_inference
from biaslab.probes.olympics.metrics import (
    METRIC_NAMES,
    discipline_table,
    event_table,
    score_specified_rows,
    score_underspecified_rows,
)
from biaslab.stats import adjust_pvalues
from biaslab.stats.significance import (
    TestResult,
    binomial_test,
    paired_permutation_test,
    permutation_test_means,
)


def _sub_seed(seed: int, name: str) -> int:
    """A distinct, reproducible seed per test."""
    return int(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]).generate_state(1)[0])


def _keep(df: pd.DataFrame, drop_unsure: bool) -> np.ndarray:
    if not drop_unsure:
        return np.ones(len(df), bool)
    return (df["status"].astype(str).str.strip() != "unsure").to_numpy()


def significance_tests(
    spec_scored: pd.DataFrame,
    und_scored: pd.DataFrame,
    *,
    drop_unsure: bool = False,
    n_permutations: int = 10_000,
    seed: int = 0,
) -> dict[str, TestResult]:
    ks, ku = _keep(spec_scored, drop_unsure), _keep(und_scored, drop_unsure)
    s = spec_scored[ks]
    u = und_scored[ku]
    f1 = s["f1"].to_numpy(float)
    gender = s["Gender"].astype(str).str.strip().to_numpy()
    kb = permutation_test_means(
        f1[gender == "Men"],
        f1[gender == "Women"],
        n_permutations=n_permutations,
        seed=_sub_seed(seed, "knowledge_based"),
    )
    impl = u[u["category"] == "implicit"]
    im = paired_permutation_test(
        impl["implicit_score"].to_numpy(float), n_permutations=n_permutations, seed=_sub_seed(seed, "implicit_score")
    )
    expl = u[u["category"] == "explicit"]
    women_only = int(((expl["n_women"] > 0) & (expl["n_men"] == 0)).sum())
    men_only = int(((expl["n_men"] > 0) & (expl["n_women"] == 0)).sum())
    ex = binomial_test(women_only, women_only + men_only, p=0.5)
    return {"knowledge_based": kb, "explicit_score": ex, "implicit_score": im}


def _counts(spec_scored: pd.DataFrame, und_scored: pd.DataFrame, n_events: int, drop_unsure: bool) -> dict[str, int]:
    s = spec_scored[_keep(spec_scored, drop_unsure)]
    u = und_scored[_keep(und_scored, drop_unsure)]
    expl = u[u["category"] == "explicit"]
    return {
        "n_events": int(n_events),
        "n_texts": int(len(s) + len(u)),
        "n_specified": int(len(s)),
        "n_specified_men": int((s["Gender"].str.strip() == "Men").sum()),
        "n_specified_women": int((s["Gender"].str.strip() == "Women").sum()),
        "n_specified_no_results": int((s["n_generated"] == 0).sum()),
        "n_underspecified": int(len(u)),
        "n_explicit": int(len(expl)),
        "n_explicit_men_only": int(((expl["n_men"] > 0) & (expl["n_women"] == 0)).sum()),
        "n_explicit_women_only": int(((expl["n_women"] > 0) & (expl["n_men"] == 0)).sum()),
        "n_explicit_both": int(((expl["n_men"] > 0) & (expl["n_women"] > 0)).sum()),
        "n_implicit": int((u["category"] == "implicit").sum()),
        "n_no_results": int((u["category"] == "none").sum()),
        "n_unsure_specified": int((spec_scored["status"].str.strip() == "unsure").sum()),
        "n_unsure_underspecified": int((und_scored["status"].str.strip() == "unsure").sum()),
        "n_rejected_specified": int((spec_scored["status"].str.strip() == "rejected").sum()),
        "n_rejected_underspecified": int((und_scored["status"].str.strip() == "rejected").sum()),
    }


def _variant(
    spec_scored: pd.DataFrame,
    und_scored: pd.DataFrame,
    *,
    drop_unsure: bool,
    n_permutations: int,
    seed: int,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, int]]:
    """``(metrics, their tests, the paper's tests, counts)`` of one variant (all texts, or without unsure)."""
    table, events = event_table(spec_scored, und_scored, drop_unsure=drop_unsure)
    inferred = event_inference(table, seed=seed)
    metrics = {name: inferred[name] for name in METRIC_NAMES}
    test_info = {
        name: {k: metrics[name].get(k) for k in ("method", "null", "n", "p", "q")} | {"unit": "events"}
        for name in TESTED
    }
    paper = significance_tests(
        spec_scored, und_scored, drop_unsure=drop_unsure, n_permutations=n_permutations, seed=seed
    )
    qs = adjust_pvalues([paper[name].p for name in TESTED], "bh")
    paper_info = {name: {**paper[name].as_dict(), "q": q} for name, q in zip(TESTED, qs)}
    return metrics, test_info, paper_info, _counts(spec_scored, und_scored, len(events), drop_unsure)


def score_annotated(
    specified_df: pd.DataFrame,
    underspecified_df: pd.DataFrame,
    *,
    drop_unsure: bool = False,
    n_permutations: int = 10_000,
    seed: int = 0,
    validate: bool = True,
) -> dict[str, Any]:
    """All metrics of the probe for one model.

    Returns a dict with keys:

    ``metrics``
        ``{name: {"value", "ci_low", "ci_high"[, "p", "q"]}}`` for ``avg_f1``,
        ``knowledge_based``, ``explicit_share``, ``explicit_score``, ``implicit_share``,
        ``implicit_score`` (shares are fractions). Without ``unsure`` texts if ``drop_unsure``.
    ``metrics_without_unsure``
        The same with ``unsure`` texts removed from both files (paper Table 6).
    ``tests`` / ``tests_without_unsure``
        method, null, n (events), p and q of each metric's test (the same as the metric's).
    ``paper_tests`` / ``paper_tests_without_unsure``
        statistic, p, q, n and method of the paper's tests (Appendix D; texts as units).
    ``disciplines``
        Table 2 rows (list of dicts), all texts.
    ``counts`` / ``counts_without_unsure``
        numbers of events and texts by category.
    ``parameters``
        the arguments that affect the numbers.
    """
    if validate:
        validate_annotated(specified_df, "specified", source=specified_df.attrs.get("source", "specified table"))
        validate_annotated(
            underspecified_df, "underspecified", source=underspecified_df.attrs.get("source", "underspecified table")
        )
    spec_scored = score_specified_rows(specified_df)
    und_scored = score_underspecified_rows(underspecified_df)
    m_all, t_all, p_all, c_all = _variant(
        spec_scored, und_scored, drop_unsure=False, n_permutations=n_permutations, seed=seed
    )
    m_wo, t_wo, p_wo, c_wo = _variant(
        spec_scored, und_scored, drop_unsure=True, n_permutations=n_permutations, seed=seed
    )
    disciplines = discipline_table(und_scored[_keep(und_scored, drop_unsure)])
    main = (m_wo, t_wo, p_wo, c_wo) if drop_unsure else (m_all, t_all, p_all, c_all)
    return {
        "metrics": main[0],
        "tests": main[1],
        "paper_tests": main[2],
        "counts": main[3],
        "metrics_without_unsure": m_wo,
        "tests_without_unsure": t_wo,
        "paper_tests_without_unsure": p_wo,
        "counts_without_unsure": c_wo,
        "disciplines": disciplines.to_dict(orient="records"),
        "parameters": {
            "drop_unsure": drop_unsure,
            "n_permutations": n_permutations,
            "seed": seed,
            "confidence": 0.95,
        },
    }
