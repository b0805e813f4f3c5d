"""Report parts of the BOLD probe: the range of group means per domain and the per-group table."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from biaslab.probing.presentation import Figure
from biaslab.report.cells import html_table, interval, num
from biaslab.report.svg_chart import IntervalRow, interval_chart

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults


def sections(results: RunResults) -> list[dict[str, str]]:
    out = [
        {
            "title": "How the uncertainty is computed",
            "html": f"<p>{html.escape(results.details.get('ci_note', ''))} "
            f"{html.escape(results.details.get('threshold_note', ''))}"
            f"</p>",
        }
    ]
    metrics = results.metric_dicts()
    ranges = [(k.split(":", 1)[1], m) for k, m in metrics.items() if k.startswith("sentiment_range:")]
    if ranges:
        out.append(
            {
                "title": "Sentiment range by domain",
                "html": html_table(
                    [
                        "domain",
                        "range (max - min group mean)",
                        "95% CI (largest gap, Bonferroni)",
                        "p",
                        "q (BH)",
                        "widest pair",
                        "p (permutation)",
                        "q (BH, permutation)",
                    ],
                    (
                        [
                            d,
                            num(m["value"]),
                            interval(m["ci_low"], m["ci_high"]),
                            num(m.get("p"), 4),
                            num(m.get("q"), 4),
                            m.get("pair") or "",
                            num(m.get("p_permutation"), 4),
                            num(m.get("q_permutation"), 4),
                        ]
                        for d, m in ranges
                    ),
                    numeric=(1, 2, 3, 4, 6, 7),
                ),
            }
        )
    groups = results.details.get("groups", [])
    if groups:
        out.append(
            {
                "title": "Groups",
                "html": html_table(
                    [
                        "domain",
                        "group",
                        "continuations",
                        "people / topics",
                        "mean sentiment",
                        "95% CI",
                        "clearly positive",
                        "clearly negative",
                        "p (vs rest of domain)",
                        "q (BH)",
                    ],
                    (
                        [
                            g["domain"],
                            g["group"],
                            g["n_attempts"],
                            g["n_clusters"],
                            num(g["mean_sentiment"]),
                            interval(g.get("ci_low"), g.get("ci_high")),
                            num(g["positive_share"]),
                            num(g["negative_share"]),
                            num(g.get("p"), 4),
                            num(g.get("q"), 4),
                        ]
                        for g in groups
                    ),
                    numeric=range(2, 10),
                    flagged=(g["n_clusters"] < 3 for g in groups),
                )
                + "<p class=meta>Shaded rows: fewer than 3 people or topics, too few to interpret.</p>",
            }
        )
    return out


def group_figure(results: RunResults) -> Figure | None:
    groups = [g for g in results.details.get("groups", []) if g.get("mean_sentiment") is not None]
    if not groups:
        return None
    domains = list(dict.fromkeys(g["domain"] for g in groups))
    palette = ["#3b6ea8", "#2e8b57", "#7b5ea7", "#b8860b", "#5f6672"]  # no red: red marks q < 0.05
    title = "Mean sentiment by group"
    chart = [
        IntervalRow(
            f"{g['group']} ({g['domain']})",
            g["mean_sentiment"],
            g.get("ci_low"),
            g.get("ci_high"),
            "#c0392b" if (g.get("q") or 1) < 0.05 else palette[domains.index(g["domain"]) % len(palette)],
        )
        for g in groups
    ]
    svg = interval_chart(chart, reference=0, title=title, xlabel="mean sentiment of the continuations (scorer's scale)")
    return Figure(
        title,
        caption="Dots: mean sentiment; bars: 95% CI over people/topics (sign-flip or cluster-robust t). "
        "Colour: domain; red: the group differs from the rest of its domain (q < 0.05).",
        svg=svg,
    )
