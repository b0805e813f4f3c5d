"""The human review loop: export flagged model predicates, import the reviewed file, summarise.

* export -- one row per model predicate with its flags, the survey answer it came from, and two
  empty columns for the reviewer: ``category`` (correct / semantically-correct / opposite /
  hallucination / other: the paper's Table 3 categories) and ``edited_predicate``;
* import -- validates the categories; reports category shares per group (Table 3 layout, with
  cluster-bootstrap CIs over survey answers) and how well each automatic flag predicts the
  reviewers' verdict (precision and recall with Wilson 95% intervals, against the category the
  flag is meant to catch and against "not correct");
* accepted predicates -- ``correct`` rows (their edited text when given) and
  ``semantically-correct`` rows that have an edited text, one per group and text -- are written as
  the ``predicates.csv`` of a components folder for ``biaslab wino build custom``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from biaslab.errors import DataError
from biaslab.stats.cluster_bootstrap import percentile_ci, stratified_cluster_sums
from biaslab.stats.resample import sum_arrays
from biaslab.wino.predicates.flags import FLAGS
from biaslab.wino.predicates.formats import PredicateRow, SurveyAnswer

CATEGORIES = ("correct", "semantically-correct", "opposite", "hallucination", "other")
SHORT = {"correct": "C", "semantically-correct": "S", "opposite": "O", "hallucination": "H", "other": "X"}
ALIASES = {
    "semantically correct": "semantically-correct",
    "semantically_correct": "semantically-correct",
    "semantic": "semantically-correct",
    "semantically-correct": "semantically-correct",
    "hallucinated": "hallucination",
    "opposite": "opposite",
    "correct": "correct",
    "hallucination": "hallucination",
    "other": "other",
}
# The verdict each flag is meant to catch.
FLAG_TARGETS = {
    "not_a_predicate": ("semantically-correct", "other"),
    "incomplete": ("other", "semantically-correct"),
    "not_grounded": ("hallucination",),
    "repeated_prior": ("hallucination",),
    "possible_negation": ("opposite",),
}
REVIEW_COLUMNS = [
    "response_id",
    "group",
    "predicate",
    *FLAGS,
    "flag_notes",
    "answer_text",
    "category",
    "edited_predicate",
    "reviewer_note",
]


def export_rows(model: Sequence[PredicateRow], survey: dict[str, SurveyAnswer]) -> list[dict[str, Any]]:
    out = []
    for m in model:
        row = {
            "response_id": m.response_id,
            "group": m.group,
            "predicate": m.predicate,
            "answer_text": survey[m.response_id].text if m.response_id in survey else "",
            "category": "",
            "edited_predicate": "",
            "reviewer_note": "",
        }
        for f in (*FLAGS, "flag_notes"):
            row[f] = m.extra.get(f, "")
        out.append(row)
    return out


def _flag(value: str, path: Any, row: int, col: str) -> bool:
    v = str(value).strip().lower()
    if v in ("1", "true", "yes"):
        return True
    if v in ("", "0", "false", "no"):
        return False
    raise DataError(f"{path}, row {row}, column {col!r}: {value!r} is not a flag value (use 1 or 0)")


def parse_reviewed(rows: Sequence[PredicateRow], path: Any, *, skip_unreviewed: bool = False) -> list[dict[str, Any]]:
    """Validated review rows: ``category`` canonical, flags as booleans."""
    missing_cols = [c for c in ("category", *FLAGS) if rows and c not in rows[0].extra]
    if missing_cols:
        raise DataError(
            f"{path}, row 1: missing column(s) {', '.join(missing_cols)}; review the file that "
            "`biaslab wino review export` wrote"
        )
    out, unreviewed = [], []
    for r in rows:
        raw = str(r.extra.get("category", "")).strip()
        if not raw:
            unreviewed.append(r.row)
            continue
        cat = ALIASES.get(raw.lower().replace("_", " ").strip()) or ALIASES.get(raw.lower())
        if cat is None:
            raise DataError(
                f"{path}, row {r.row}, column 'category': unknown category {raw!r}; use one of {', '.join(CATEGORIES)}"
            )
        flags = {f: _flag(r.extra.get(f, ""), path, r.row, f) for f in FLAGS}
        out.append(
            {
                "response_id": r.response_id,
                "group": r.group,
                "predicate": r.predicate,
                "category": cat,
                "edited_predicate": str(r.extra.get("edited_predicate", "")).strip(),
                "row": r.row,
                **flags,
            }
        )
    if unreviewed and not skip_unreviewed:
        shown = ", ".join(map(str, unreviewed[:5])) + (" ..." if len(unreviewed) > 5 else "")
        raise DataError(
            f"{path}: {len(unreviewed)} row(s) have no category (rows {shown}); fill them in, or pass "
            "--skip-unreviewed to summarise the reviewed rows only"
        )
    if not out:
        raise DataError(f"{path}: no reviewed rows (every category is empty)")
    return out


def category_table(
    reviewed: list[dict[str, Any]], *, seed: int = 0, n_resamples: int = 1000
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Table 3: per group and overall, the share of each category (answers resampled for CIs)."""
    acc: dict[tuple[str, str], np.ndarray] = {}
    for r in reviewed:
        key = (r["group"], r["response_id"] or f"row{r['row']}")
        acc.setdefault(key, np.zeros(len(CATEGORIES) + 1))
        acc[key][0] += 1
        acc[key][1 + CATEGORIES.index(r["category"])] += 1
    keys = list(acc)
    arr = np.array([acc[k] for k in keys])
    strata = np.array([k[0] for k in keys], dtype=object)
    cols = {"n": arr[:, 0], **{c: arr[:, 1 + i] for i, c in enumerate(CATEGORIES)}}
    boot = stratified_cluster_sums(strata, cols, n_resamples=n_resamples, seed=seed)
    groups = list(dict.fromkeys(r["group"] for r in reviewed))
    table, metrics = [], {}
    for g in [*groups, "Overall"]:
        mask = np.ones(len(keys), bool) if g == "Overall" else strata == g
        samples = {c: sum_arrays(boot[s][c] for s in boot) for c in cols} if g == "Overall" else boot[g]
        n = float(cols["n"][mask].sum())
        row: dict[str, Any] = {"group": g, "n": int(n)}
        for c in CATEGORIES:
            value = float(cols[c][mask].sum()) / n
            lo, hi = percentile_ci(samples[c] / samples["n"])
            row[c] = value
            row[f"{c}_ci"] = [lo, hi]
            name = f"share_{c}" + ("" if g == "Overall" else f":{g}")
            metrics[name] = {"value": value, "ci_low": lo, "ci_high": hi}
        table.append(row)
    return table, metrics


def wilson(k: int, n: int) -> tuple[float | None, float | None]:
    if n == 0:
        return None, None
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(method="wilson")
    return float(ci.low), float(ci.high)


def flag_agreement(reviewed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Precision and recall of each flag (and of "any flag") against the reviewers' categories."""
    out = []
    not_correct = tuple(c for c in CATEGORIES if c != "correct")
    checks = [(f, FLAG_TARGETS[f]) for f in FLAGS] + [("any_flag", not_correct)]
    for name, target in checks:
        for against, cats in ((", ".join(target), target), ("not correct", not_correct)):
            if name == "any_flag" and against != "not correct":
                continue
            fired = [any(r[f] for f in FLAGS) if name == "any_flag" else r[name] for r in reviewed]
            hit = [r["category"] in cats for r in reviewed]
            tp = sum(f and h for f, h in zip(fired, hit))
            n_flag, n_target = sum(fired), sum(hit)
            p_lo, p_hi = wilson(tp, n_flag)
            r_lo, r_hi = wilson(tp, n_target)
            out.append(
                {
                    "flag": name,
                    "against": against,
                    "flagged": n_flag,
                    "target": n_target,
                    "true_positive": tp,
                    "precision": tp / n_flag if n_flag else None,
                    "precision_ci": [p_lo, p_hi],
                    "recall": tp / n_target if n_target else None,
                    "recall_ci": [r_lo, r_hi],
                }
            )
    return out


def accepted_predicates(reviewed: list[dict[str, Any]]) -> tuple[list[dict[str, str]], dict[str, int]]:
    """Predicates for the components file, one per (group, text), and counts of what was left out."""
    kept: dict[tuple[str, str], dict[str, str]] = {}
    skipped = {"semantically-correct without edited_predicate": 0, "rejected": 0, "duplicate": 0}
    for r in reviewed:
        if r["category"] == "correct":
            text = r["edited_predicate"] or r["predicate"]
        elif r["category"] == "semantically-correct" and r["edited_predicate"]:
            text = r["edited_predicate"]
        elif r["category"] == "semantically-correct":
            skipped["semantically-correct without edited_predicate"] += 1
            continue
        else:
            skipped["rejected"] += 1
            continue
        text = " ".join(text.split()).rstrip(".").strip()
        key = (r["group"], text.lower())
        if not text:
            skipped["rejected"] += 1
        elif key in kept:
            skipped["duplicate"] += 1
            kept[key]["response_ids"] += ";" + r["response_id"]
        else:
            kept[key] = {
                "group": r["group"],
                "plural": text,
                "singular": "",
                "response_ids": r["response_id"],
                "category": r["category"],
            }
    return list(kept.values()), skipped
