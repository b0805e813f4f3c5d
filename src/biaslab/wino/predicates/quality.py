"""Predicate-quality metrics of the paper's Table 2: exact match, phrase and sentence cosine.

For each human predicate, the candidates are the model predicates of the same survey answer
(``match_by="response"``, the paper's setting) or of the same group (``match_by="group"``, for
data without per-answer pairing such as the released predicate lists):

* **exact** -- some candidate equals it after lower-casing, removing every "." and stripping;
* **PCS** -- the best cosine between the embeddings of the two phrases (the best candidate is the
  first one with the highest PCS, in file order);
* **SCS** -- the cosine between ``prefix + human`` and ``prefix + best candidate`` (taken at the
  PCS-best candidate, not maximised again); the prefix is "All Jewish people are " by default.

Averages over human predicates, per group and overall. A human predicate with no candidate
counts as not matched for exact and is left out of PCS/SCS; ``coverage`` says how many had one.
``model_exact_match`` is the paper's prose variant: the share of model predicates that exactly
match a human predicate of the same answer (group).

CIs: 95% percentile intervals of a stratified cluster bootstrap (1,000 resamples): survey answers
(``response``) or human predicates (``group``) are resampled within each group, because the
predicates of one answer are not independent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from biaslab.errors import ConfigError
from biaslab.stats.cluster_bootstrap import percentile_ci, stratified_cluster_sums
from biaslab.stats.resample import sum_arrays
from biaslab.wino.predicates.formats import PredicateRow

DEFAULT_PREFIX = "All Jewish people are "
MATCH_BY = ("response", "group")
METRICS = ("exact_match", "pcs", "scs", "coverage", "model_exact_match")
N_RESAMPLES = 1000


def exact_key(predicate: str) -> str:
    return predicate.lower().replace(".", "").strip()


def _key(row: PredicateRow, by: str) -> str:
    return row.response_id if by == "response" else row.group


def match_predicates(
    human: Sequence[PredicateRow],
    model: Sequence[PredicateRow],
    embedder: Any,
    *,
    match_by: str = "response",
    prefix: str = DEFAULT_PREFIX,
) -> list[dict[str, Any]]:
    """One row per human predicate: its best model predicate, exact (0/1), PCS and SCS."""
    if match_by not in MATCH_BY:
        raise ConfigError(f"--match-by must be response or group, got {match_by!r}")
    cands: dict[str, list[str]] = defaultdict(list)
    for m in model:
        if m.predicate.strip():
            cands[_key(m, match_by)].append(m.predicate.strip())
    texts = [h.predicate.strip() for h in human]
    embedder.embed(list(dict.fromkeys(texts + [p for ps in cands.values() for p in ps])))
    out: list[dict[str, Any]] = [
        {
            "response_id": h.response_id,
            "group": h.group,
            "human_predicate": t,
            "best_model_predicate": "",
            "exact": 0,
            "pcs": None,
            "scs": None,
        }
        for h, t in zip(human, texts)
    ]
    by_key: dict[str, list[int]] = defaultdict(list)
    for k, h in enumerate(human):
        by_key[_key(h, match_by)].append(k)
    best_pairs: list[tuple[int, str, str]] = []
    for key, idx in by_key.items():
        options = cands.get(key, [])
        if not options:
            continue
        sims = np.atleast_2d(embedder.cosine([texts[k] for k in idx], options))
        exact_keys = {exact_key(o) for o in options}
        for row, k in zip(sims, idx):
            j = int(np.argmax(row))
            out[k].update(
                best_model_predicate=options[j], pcs=float(row[j]), exact=int(exact_key(texts[k]) in exact_keys)
            )
            best_pairs.append((k, prefix + texts[k], prefix + options[j]))
    if best_pairs:
        embedder.embed(list(dict.fromkeys([x for _, x, _ in best_pairs] + [y for _, _, y in best_pairs])))
        for start in range(0, len(best_pairs), 256):  # the diagonal of chunk-sized cosine matrices
            chunk = best_pairs[start : start + 256]
            diag = np.diagonal(np.atleast_2d(embedder.cosine([x for _, x, _ in chunk], [y for _, _, y in chunk])))
            for (k, _, _), v in zip(chunk, diag):
                out[k]["scs"] = float(v)
    return out


def model_exact_rows(
    human: Sequence[PredicateRow], model: Sequence[PredicateRow], match_by: str
) -> list[dict[str, Any]]:
    """Per model predicate: does it exactly match a human predicate of its answer (group)?"""
    keys: dict[str, set[str]] = defaultdict(set)
    for h in human:
        keys[_key(h, match_by)].add(exact_key(h.predicate))
    return [
        {
            "response_id": m.response_id,
            "group": m.group,
            "exact": int(exact_key(m.predicate) in keys.get(_key(m, match_by), set())),
        }
        for m in model
        if m.predicate.strip()
    ]


def _clusters(rows: list[dict[str, Any]], by: str, columns: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    acc: dict[tuple[str, str], np.ndarray] = {}
    for i, r in enumerate(rows):
        unit = r["response_id"] if by == "response" else str(i)
        acc.setdefault((r["group"], unit), np.zeros(len(columns)))
        acc[(r["group"], unit)] += [float(r[c] or 0.0) for c in columns]
    keys = list(acc)
    arr = np.array([acc[k] for k in keys]).reshape(len(keys), len(columns))
    return np.array([k[0] for k in keys], dtype=object), {c: arr[:, j] for j, c in enumerate(columns)}


def quality_metrics(
    per_predicate: list[dict[str, Any]],
    model_rows: list[dict[str, Any]],
    *,
    match_by: str,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """``(metrics, table)``: metrics with CIs overall and per group; the Table 2 rows."""
    rows = [{**r, "n": 1, "matched": int(r["pcs"] is not None)} for r in per_predicate]
    strata, cols = _clusters(rows, match_by, ["n", "matched", "exact", "pcs", "scs"])
    boot = stratified_cluster_sums(strata, cols, n_resamples=n_resamples, seed=seed)
    mrows = [{**r, "n": 1} for r in model_rows]
    mstrata, mcols = _clusters(mrows, match_by, ["n", "exact"]) if mrows else (np.array([], dtype=object), {})
    mboot = stratified_cluster_sums(mstrata, mcols, n_resamples=n_resamples, seed=seed) if mrows else {}
    groups = list(dict.fromkeys(r["group"] for r in per_predicate))

    def ratios(s: dict[str, Any]) -> dict[str, Any]:
        with np.errstate(invalid="ignore", divide="ignore"):
            return {
                "exact_match": np.asarray(s["exact"]) / s["n"],
                "pcs": np.asarray(s["pcs"]) / s["matched"],
                "scs": np.asarray(s["scs"]) / s["matched"],
                "coverage": np.asarray(s["matched"]) / s["n"],
            }

    def entries(point: dict[str, float], samples: dict[str, np.ndarray], mpoint, msamples) -> dict[str, dict]:
        out = {}
        pt, bs = ratios(point), ratios(samples)
        for name in ("exact_match", "pcs", "scs", "coverage"):
            value = float(pt[name])
            lo, hi = percentile_ci(bs[name])
            out[name] = {"value": value if np.isfinite(value) else None, "ci_low": lo, "ci_high": hi}
        if mpoint and mpoint["n"]:
            lo, hi = percentile_ci(msamples["exact"] / msamples["n"])
            out["model_exact_match"] = {
                "value": mpoint["exact"] / mpoint["n"],
                "ci_low": lo,
                "ci_high": hi,
                "n": int(mpoint["n"]),
            }
        else:
            out["model_exact_match"] = {"value": None, "ci_low": None, "ci_high": None, "n": 0}
        return out

    def point_of(c: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, float]:
        return {k: float(v[mask].sum()) for k, v in c.items()}

    metrics: dict[str, dict[str, Any]] = {}
    table = []
    total = {k: sum_arrays(boot[g][k] for g in boot) for k in cols}
    mtotal = {k: sum_arrays(mboot[g][k] for g in mboot) for k in mcols} if mboot else {}
    overall = entries(
        point_of(cols, np.ones(len(strata), bool)),
        total,
        point_of(mcols, np.ones(len(mstrata), bool)) if mrows else None,
        mtotal,
    )
    metrics.update(overall)
    for g in groups:
        mask = strata == g
        mmask = mstrata == g
        ge = entries(
            point_of(cols, mask), boot[g], point_of(mcols, mmask) if mrows and mmask.any() else None, mboot.get(g, {})
        )
        for name, e in ge.items():
            metrics[f"{name}:{g}"] = e
        table.append(_table_row(g, ge, int(mask.sum()), per_predicate))
    table.append(_table_row("Overall", overall, len(strata), per_predicate))
    return metrics, table


def _table_row(group: str, e: dict[str, dict], n_units: int, per_predicate: list[dict]) -> dict[str, Any]:
    n_human = sum(1 for r in per_predicate if group == "Overall" or r["group"] == group)
    return {
        "group": group,
        "n_human": n_human,
        "n_units": n_units,
        **{name: e[name]["value"] for name in METRICS},
        **{f"{name}_ci": [e[name]["ci_low"], e[name]["ci_high"]] for name in METRICS},
    }
