"""Report parts of the paired-sentence probes: per-group scores against the 50 line, the most
stereotyped predicates, example pairs, and how the uncertainty was computed."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

from biaslab.probing.presentation import Figure
from biaslab.report.cells import html_table, interval, num
from biaslab.report.svg_chart import IntervalRow, interval_chart

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults


def group_figure(results: RunResults) -> Figure | None:
    rows = [g for g in results.details.get("groups", []) if g.get("bias_score") is not None]
    if not rows:
        return None
    title = "Bias score by target group"
    chart = [
        IntervalRow(
            f"{g['group']} ({g['n_predicates']} pred.)",
            g["bias_score"],
            g.get("ci_low"),
            g.get("ci_high"),
            "#9aa0a8" if g["too_small"] else ("#c0392b" if (g.get("q") or 1) < 0.05 else "#3b6ea8"),
        )
        for g in rows
    ]
    svg = interval_chart(
        chart,
        xlim=(0, 100),
        reference=50,
        title=title,
        xlabel="bias score (50 = unbiased; > 50 prefers the stereotype)",
    )
    return Figure(
        title,
        caption="Dots: bias score; bars: 95% CI over predicates (the procedure of its p value). Red: "
        "q < 0.05; grey: fewer than 3 predicates, too small to interpret; dotted line: 50, the unbiased "
        "value.",
        svg=svg,
    )


def sections(results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
    note = html.escape(results.details.get("ci_note", ""))
    out = [{"title": "How the uncertainty is computed", "html": f"<p>{note}</p>"}]
    groups = results.details.get("groups", [])
    if groups:
        out.append(
            {
                "title": "Target groups",
                "html": html_table(
                    ["group", "pairs", "predicates", "bias score", "95% CI", "p", "q (BH)", ""],
                    (
                        [
                            g["group"],
                            g["n_pairs"],
                            g["n_predicates"],
                            num(g["bias_score"], 1),
                            _ci(g),
                            num(g["p"], 4),
                            num(g.get("q"), 4),
                            "too small to interpret (fewer than 3 predicates)" if g["too_small"] else "",
                        ]
                        for g in groups
                    ),
                    numeric=range(1, 7),
                    flagged=(g["too_small"] for g in groups),
                ),
            }
        )
    preds = [p for p in results.details.get("predicates", []) if p["predicate"]][:15]
    if preds:
        out.append(
            {
                "title": "Predicates the model stereotypes most",
                "html": html_table(
                    ["group", "predicate", "pairs", "bias score", "mean log-lik. difference"],
                    (
                        [
                            p["group"],
                            readable(p["predicate"]),
                            p["n_pairs"],
                            num(p["bias_score"], 1),
                            num(p["mean_ll_diff"]),
                        ]
                        for p in preds
                    ),
                    numeric=range(2, 5),
                ),
            }
        )
    examples = _examples(attempts)
    if examples:
        out.append(
            {
                "title": "Example pairs",
                "html": html_table(
                    [
                        "decision",
                        "stereotypical sentence",
                        "counterfactual sentence",
                        "log-lik. stereotypical",
                        "log-lik. counterfactual",
                    ],
                    (
                        [a["evaluation"], a["sent_more"], a["sent_less"], num(a["score_more"]), num(a["score_less"])]
                        for a in examples
                    ),
                    numeric=(3, 4),
                ),
            }
        )
    return out


def _examples(attempts: list[dict[str, Any]], per_kind: int = 4) -> list[dict[str, Any]]:
    out = []
    for kind in ("stereotype", "counter", "tie"):
        picked = [a for a in attempts if a.get("evaluation") == kind]
        step = max(1, len(picked) // per_kind)
        out += picked[::step][:per_kind]
    return out


_SLOT_WORDS = {
    "subject": "they",
    "pronoun": "they",
    "object": "them",
    "possessive": "their",
    "reflexive": "themselves",
    "is/are": "are",
}


def _ci(g: dict[str, Any]) -> str:
    return "none" if g.get("too_small") else interval(g.get("ci_low"), g.get("ci_high"), 1, "none")


def readable(predicate: str) -> str:
    """A predicate as a reader sees it: its pronoun slots filled as in plural sentences ("sticks to themselves")."""
    return re.sub(r"<([^<>]{1,40})>", lambda m: _SLOT_WORDS.get(m.group(1).lower(), m.group(1)), predicate)
