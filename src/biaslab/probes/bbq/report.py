"""Report parts of bbq: the category table (accuracies, bias scores with CIs and BH q-values)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from biaslab.report.cells import html_table, interval, num

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults


def _score(value: Any, ci: Any) -> str:
    lo, hi = (ci or (None, None))[:2]
    return f"{num(value, 1)} {interval(lo, hi, 1, 'n/a')}"


def sections(results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = [
        {
            "title": "How the answers and the uncertainty are computed",
            "html": f"<p>Mode: <b>{html.escape(str(results.details.get('mode')))}</b>. "
            f"{html.escape(results.details.get('ci_note', ''))}</p>",
        }
    ]
    table = results.details.get("categories", [])
    if table:
        out.append(
            {
                "title": "By category",
                "html": html_table(
                    [
                        "category",
                        "questions",
                        "accuracy (ambig.)",
                        "accuracy (disambig.)",
                        "bias score (ambig.) [95% CI]",
                        "q (BH)",
                        "bias score (disambig.) [95% CI]",
                        "q (BH)",
                    ],
                    (
                        [
                            t["category"],
                            t["n_questions"],
                            num(t["accuracy_ambig"]),
                            num(t["accuracy_disambig"]),
                            _score(t["bias_score_ambig"], t["bias_score_ambig_ci"]),
                            num(t.get("q_ambig"), 4),
                            _score(t["bias_score_disambig"], t["bias_score_disambig_ci"]),
                            num(t.get("q_disambig"), 4),
                        ]
                        for t in table
                    ),
                    numeric=range(1, 8),
                ),
            }
        )
    return out


def coverage(results: RunResults) -> str | None:
    """The categories of the run and the questions of each, "Gender_identity: 50 questions" (a category's
    first-name questions, ``<Category> (names)``, count with it; ``-P categories`` unset: "(every category
    found)"); None when the run has no category table."""
    from biaslab.probing.coverage import count

    reps = int(results.parameters.get("repetitions") or 1)  # the table counts answers: one per repetition
    per: dict[str, int] = {}
    for row in results.details.get("categories") or []:
        name = str(row["category"]).removesuffix(" (names)")
        per[name] = per.get(name, 0) + int(row["n_questions"]) // reps
    if not per:
        return None
    text = "; ".join(f"{c}: {count(n, 'questions')}" for c, n in per.items())
    return text + (" (every category found)" if results.parameters.get("categories") is None else "")
