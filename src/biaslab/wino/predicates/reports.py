"""Tables (terminal and HTML) of the predicate study: Table 2, Table 3, flag agreement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaslab.report.tables import fmt, fmt_ci, write_tables_page
from biaslab.wino.predicates.flags import FLAGS
from biaslab.wino.predicates.review import CATEGORIES, SHORT

TABLE2_HEADER = [
    "ID group",
    "human predicates",
    "% Exact",
    "95% CI",
    "PCS",
    "95% CI",
    "SCS",
    "95% CI",
    "coverage",
    "% model exact",
]


def table2_rows(table: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            r["group"],
            str(r["n_human"]),
            fmt(r["exact_match"], 2, True),
            fmt_ci(r["exact_match_ci"], 2, True),
            fmt(r["pcs"]),
            fmt_ci(r["pcs_ci"]),
            fmt(r["scs"]),
            fmt_ci(r["scs_ci"]),
            fmt(r["coverage"], 0, True) + "%",
            fmt(r["model_exact_match"], 2, True),
        ]
        for r in table
    ]


TABLE3_HEADER = ["ID group", "reviewed", *[f"%{SHORT[c]}" for c in CATEGORIES]]


def table3_rows(table: list[dict[str, Any]]) -> list[list[str]]:
    return [[r["group"], str(r["n"]), *[fmt(r[c], 2, True) for c in CATEGORIES]] for r in table]


TERMINAL_TABLE2 = ["ID group", "n", "% Exact [95% CI]", "PCS [95% CI]", "SCS [95% CI]"]


def terminal_table2_rows(table: list[dict[str, Any]]) -> list[list[str]]:
    def cell(r: dict[str, Any], name: str, pct: bool) -> str:
        return f"{fmt(r[name], 2, pct)} {fmt_ci(r[name + '_ci'], 1 if pct else 2, pct)}".strip()

    return [
        [r["group"], str(r["n_human"]), cell(r, "exact_match", True), cell(r, "pcs", False), cell(r, "scs", False)]
        for r in table
    ]


FLAG_HEADER = ["flag", "verdict it should catch", "flagged", "verdicts", "precision", "95% CI", "recall", "95% CI"]


def flag_rows(agreement: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            a["flag"],
            a["against"],
            str(a["flagged"]),
            str(a["target"]),
            fmt(a["precision"]),
            fmt_ci(a["precision_ci"]),
            fmt(a["recall"]),
            fmt_ci(a["recall_ci"]),
        ]
        for a in agreement
    ]


def _pcs_figure(per: list[dict[str, Any]]) -> dict[str, Any] | None:
    from biaslab.report.plots import fig_to_base64, new_figure

    pcs = [r["pcs"] for r in per if r["pcs"] is not None]
    scs = [r["scs"] for r in per if r["scs"] is not None]
    if not pcs:
        return None
    fig, ax = new_figure(7.0, 3.6)
    ax.hist([pcs, scs], bins=20, range=(min(0.0, min(pcs + scs)), 1.0), label=["PCS (phrases)", "SCS (sentences)"])
    ax.set_xlabel("cosine with the best-matching model predicate")
    ax.set_ylabel("human predicates")
    ax.legend()
    return {
        "title": "Distribution of PCS and SCS",
        "png_base64": fig_to_base64(fig),
        "caption": "One value per human predicate. Sentence cosines sit higher than phrase cosines because the "
        "shared prefix adds similarity; compare like with like.",
    }


def write_quality_report(path: Path, results: dict[str, Any], per: list[dict[str, Any]]) -> Path:
    p = results["parameters"]
    worst = sorted((r for r in per if r["pcs"] is not None), key=lambda r: r["pcs"])[:15]
    tables: list[dict[str, Any]] = [
        {
            "title": "Predicate quality (the paper's Table 2 layout)",
            "header": TABLE2_HEADER,
            "rows": table2_rows(results["table"]),
            "note": f"Match by {p['match_by']}; embeddings {p['embedding']}; SCS prefix {p['sentence_prefix']!r}. CIs: "
            f"cluster bootstrap over {p['bootstrap']['unit']}s within groups ({p['bootstrap']['resamples']} "
            "resamples). Coverage: share of human predicates with at least one model predicate to compare.",
        },
        {
            "title": "Human predicates the model matched worst",
            "header": ["group", "response", "human predicate", "best model predicate", "PCS", "SCS"],
            "rows": [
                [
                    r["group"],
                    r["response_id"],
                    r["human_predicate"],
                    r["best_model_predicate"],
                    fmt(r["pcs"]),
                    fmt(r["scs"]),
                ]
                for r in worst
            ],
            "numeric": [4, 5],
        },
    ]
    fig = _pcs_figure(per)
    meta = [
        f"{results['n_human']} human predicates, {results['n_model']} model predicates; biaslab "
        f"{results['biaslab_version']}.",
        "Files: " + ", ".join(results["data"]),
    ]
    return write_tables_page(path, "Predicate quality: human vs model extraction", tables, [fig] if fig else [], meta)


def write_review_report(path: Path, summary: dict[str, Any]) -> Path:
    tables = [
        {
            "title": "Reviewed categories per group (the paper's Table 3 layout)",
            "header": TABLE3_HEADER,
            "rows": table3_rows(summary["table"]),
            "note": "C correct, S semantically correct (needs syntactic post-editing), O opposite, H hallucination, "
            "X other. Shares in %; CIs (cluster bootstrap over survey answers) are in review_summary.json.",
        },
        {
            "title": "How well each automatic flag predicts the reviewers' verdict",
            "header": FLAG_HEADER,
            "rows": flag_rows(summary["flags"]),
            "note": "Precision: share of flagged predicates with that verdict; recall: share of predicates with that "
            "verdict that the flag caught. Wilson 95% intervals.",
        },
    ]
    left = ", ".join(f"{k}: {v}" for k, v in summary["left_out"].items())
    meta = [
        f"{summary['n_reviewed']} reviewed predicates; {summary['accepted']} accepted into predicates.csv "
        f"(left out: {left}).",
        "Flags: " + ", ".join(FLAGS),
    ]
    return write_tables_page(path, "Review of model-extracted predicates", tables, [], meta)
