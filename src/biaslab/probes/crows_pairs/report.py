"""Report parts of crows-pairs: the bias-type table (CI, p, BH q) and example pairs."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from biaslab.report.cells import html_table, interval, num

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults


def sections(results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
    rule = results.details.get("rule")
    out = [
        {
            "title": "Scoring rule and uncertainty",
            "html": f"<p>Rule: <b>{html.escape(str(rule))}</b>. {html.escape(results.details.get('ci_note', ''))}</p>",
        }
    ]
    table = results.details.get("bias_types", [])
    if table:
        out.append(
            {
                "title": "By bias type",
                "html": html_table(
                    ["bias type", "pairs", "pct_stereotype", "95% CI", "likelihood_diff", "p", "q (BH)"],
                    (
                        [
                            t["bias_type"],
                            t["n_pairs"],
                            num(t["pct_stereotype"], 1),
                            interval(t["ci_low"], t["ci_high"], 1, "none"),
                            num(t["likelihood_diff"]),
                            num(t["p"], 4),
                            num(t.get("q"), 4),
                        ]
                        for t in table
                    ),
                    numeric=range(1, 7),
                ),
            }
        )
    picked = []
    for kind in ("stereotype", "counter", "tie"):
        some = [a for a in attempts if a.get("evaluation") == kind]
        picked += some[:: max(1, len(some) // 4)][:4]
    if picked:
        out.append(
            {
                "title": "Example pairs",
                "html": html_table(
                    [
                        "bias type",
                        "decision",
                        "more stereotypical sentence",
                        "less stereotypical sentence",
                        "log-lik. more",
                        "log-lik. less",
                    ],
                    (
                        [
                            a.get("bias_type"),
                            a["evaluation"],
                            a["sent_more"],
                            a["sent_less"],
                            num(a["score_more"]),
                            num(a["score_less"]),
                        ]
                        for a in picked
                    ),
                    numeric=(4, 5),
                ),
            }
        )
    return out
