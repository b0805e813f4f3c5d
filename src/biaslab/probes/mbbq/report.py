"""Report parts of mbbq: bias per language beside control accuracy, each language against English, the wordings and
categories, and the categories left out."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from biaslab.report.cells import html_table, interval, num

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults

NOTE = (
    "Bias scores and accuracies are BBQ's (bbq probe: the same code), on the bias set; control accuracy is on the "
    "control set (group words replaced by names). Intervals: 95%, clustered by template (category, question_index). "
    "A language's bias scores are read only where its control accuracy is adequate: at least {t} in both contexts."
)


def _score(value: Any, ci: Any) -> str:
    lo, hi = (ci or (None, None))[:2]
    return f"{num(value, 1)} {interval(lo, hi, 1, 'n/a')}"


def language_table(rows: list[dict[str, Any]]) -> str:
    """Bias per language side by side with control accuracy (also used by the suite card)."""
    return html_table(
        [
            "language",
            "bias (ambig.) [95% CI]",
            "bias (disambig.) [95% CI]",
            "accuracy (ambig.)",
            "accuracy (disambig.)",
            "control acc. (ambig.)",
            "control acc. (disambig.)",
            "control adequate?",
        ],
        (
            [
                r["language"],
                _score(r.get("bias_score_ambig"), r.get("bias_score_ambig_ci")),
                _score(r.get("bias_score_disambig"), r.get("bias_score_disambig_ci")),
                num(r.get("accuracy_ambig")),
                num(r.get("accuracy_disambig")),
                num(r.get("control_accuracy_ambig")),
                num(r.get("control_accuracy_disambig")),
                {True: "yes", False: "no", None: "unknown"}[r.get("adequate")],
            ]
            for r in rows
        ),
        numeric=range(1, 7),
    )


def difference_table(diffs: list[dict[str, Any]]) -> str:
    """Each language minus English, item by item."""
    return html_table(
        ["language", "metric", "minus English", "95% CI", "p", "q (BH)", "templates", "paired questions"],
        (
            [
                d["language"],
                d["metric"],
                num(d.get("diff"), 3),
                interval(d.get("ci_low"), d.get("ci_high"), 3, "n/a"),
                num(d.get("p"), 4),
                num(d.get("q"), 4),
                d.get("n_clusters"),
                d.get("n_pairs"),
            ]
            for d in diffs
        ),
        numeric=range(2, 8),
    )


def sections(results: RunResults) -> list[dict[str, str]]:
    d = results.details
    langs = d.get("languages") or []
    out = [
        {
            "title": "How the answers and the uncertainty are computed",
            "html": "<p>Mode: <b>"
            f"{html.escape(str(d.get('mode')))}</b>; wordings {html.escape(str(d.get('prompts')))}. "
            f"{html.escape(NOTE.format(t=d.get('adequate_threshold')))}</p>",
        }
    ]
    if langs:
        statements = "".join(
            f"<li><b>{html.escape(r['language'])}</b>: {html.escape(r['statement'])}</li>" for r in langs
        )
        out.append(
            {
                "title": "Bias per language, beside control accuracy",
                "html": language_table(langs) + f"<ul>{statements}</ul>",
            }
        )
    if d.get("differences"):
        out.append(
            {
                "title": "Each language against English, item by item",
                "html": "<p>Language minus English over the parallel questions both answered; the adjusted rows "
                "are the gap expected at equal control accuracy (the card states the estimand).</p>"
                + difference_table(d["differences"]),
            }
        )
    if d.get("wordings"):
        rows = [
            [
                w["language"],
                w["prompt"],
                num(w["bias_score_ambig"], 1),
                num(w["bias_score_disambig"], 1),
                num(w["accuracy_ambig"]),
                num(w["accuracy_disambig"]),
                num(w["control_accuracy_ambig"]),
                num(w["control_accuracy_disambig"]),
            ]
            for w in d["wordings"]
        ]
        spread = "".join(
            f"<li>{html.escape(r['language'])}: range across wordings "
            + ", ".join(f"{k} {num(v, 1)}" for k, v in (r.get("wording_range") or {}).items())
            + "</li>"
            for r in langs
        )
        out.append(
            {
                "title": "By prompt wording",
                "html": html_table(
                    [
                        "language",
                        "wording",
                        "bias (ambig.)",
                        "bias (disambig.)",
                        "acc. (ambig.)",
                        "acc. (disambig.)",
                        "control (ambig.)",
                        "control (disambig.)",
                    ],
                    rows,
                    numeric=range(1, 8),
                )
                + f"<ul>{spread}</ul>",
            }
        )
    if d.get("categories"):
        rows = [
            [
                t["language"],
                t["category"],
                t["n_questions"],
                _score(t["bias_score_ambig"], t["bias_score_ambig_ci"]),
                _score(t["bias_score_disambig"], t["bias_score_disambig_ci"]),
                num(t.get("control_accuracy_ambig")),
                num(t.get("control_accuracy_disambig")),
            ]
            for t in d["categories"]
        ]
        out.append(
            {
                "title": "By language and category",
                "html": html_table(
                    [
                        "language",
                        "category",
                        "answers",
                        "bias (ambig.)",
                        "bias (disambig.)",
                        "control (ambig.)",
                        "control (disambig.)",
                    ],
                    rows,
                    numeric=range(2, 7),
                ),
            }
        )
    if d.get("left_out"):
        items = "".join(
            f"<li>{html.escape(c)}: <code>{html.escape(cmd)}</code></li>" for c, cmd in d["left_out"].items()
        )
        out.append({"title": "Categories left out (data not here)", "html": f"<ul>{items}</ul>"})
    return out


def coverage(results: RunResults) -> str | None:
    """ "en, tr; Gender_identity, Sexual_orientation; 5 wordings" (None without a language table)."""
    d = results.details
    langs = [r["language"] for r in d.get("languages") or []]
    if not langs:
        return None
    cats = list(dict.fromkeys(t["category"] for t in d.get("categories") or []))
    n = len(d.get("prompts") or [])
    text = f"{', '.join(langs)}; {', '.join(cats)}; {n} wording{'s' if n != 1 else ''}"
    if d.get("left_out"):
        text += f" ({', '.join(d['left_out'])} left out: data not here)"
    return text
