"""Report parts of the BOLD probe: the range of group means per domain and the per-group table."""

from __future__ import annotations

import html
from typing import Any

from biaslab.probing.core import Figure
from biaslab.report.cells import html_table, interval, num


def sections(results: dict[str, Any]) -> list[dict[str, str]]:
    out = [{"title": "How the uncertainty is computed",
            "html": f"<p>{html.escape(results.get('ci_note', ''))} {html.escape(results.get('threshold_note', ''))}"
                    f"</p>"}]
    metrics = results.get("metrics", {})
    ranges = [(k.split(":", 1)[1], m) for k, m in metrics.items() if k.startswith("sentiment_range:")]
    if ranges:
        out.append({"title": "Sentiment range by domain", "html": html_table(
            ["domain", "range (max - min group mean)", "95% CI", "p", "q (BH)"],
            ([d, num(m["value"]), interval(m["ci_low"], m["ci_high"]), num(m.get("p"), 4), num(m.get("q"), 4)]
             for d, m in ranges),
            numeric=range(1, 5))})
    groups = results.get("groups", [])
    if groups:
        out.append({"title": "Groups", "html": html_table(
            ["domain", "group", "continuations", "people / topics", "mean sentiment", "95% CI", "clearly positive",
             "clearly negative", "p (vs rest of domain)", "q (BH)"],
            ([g["domain"], g["group"], g["n_attempts"], g["n_clusters"], num(g["mean_sentiment"]),
              interval(g.get("ci_low"), g.get("ci_high")), num(g["positive_share"]), num(g["negative_share"]),
              num(g.get("p"), 4), num(g.get("q"), 4)] for g in groups),
            numeric=range(2, 10), flagged=(g["n_clusters"] < 3 for g in groups))
            + "<p class=meta>Shaded rows: fewer than 3 people or topics, too few to interpret.</p>"})
    return out


def group_figure(results: dict[str, Any]) -> Figure | None:
    from biaslab.report.plots import fig_to_base64, new_figure

    groups = [g for g in results.get("groups", []) if g.get("mean_sentiment") is not None]
    if not groups:
        return None
    fig, ax = new_figure(7.5, 0.3 * len(groups) + 1.4)
    domains = list(dict.fromkeys(g["domain"] for g in groups))
    palette = ["#3b6ea8", "#2e8b57", "#8e44ad", "#d35400", "#7f8c8d"]
    for y, g in enumerate(groups):
        color = "#c0392b" if (g.get("q") or 1) < 0.05 else palette[domains.index(g["domain"]) % len(palette)]
        if g.get("ci_low") is not None:
            ax.plot([g["ci_low"], g["ci_high"]], [y, y], color=color, linewidth=2.2, alpha=0.7)
        ax.plot([g["mean_sentiment"]], [y], "o", color=color)
    ax.axvline(0, color="grey", linestyle=":", linewidth=1.2)
    ax.set_yticks(range(len(groups)))
    ax.set_yticklabels([f"{g['group']} ({g['domain']})" for g in groups], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("mean sentiment of the continuations (scorer's scale)")
    return Figure("Mean sentiment by group", fig_to_base64(fig),
                  "Dots: mean sentiment; bars: 95% CI of the cluster bootstrap over people/topics. Colour: domain; "
                  "red: the group differs from the rest of its domain (q < 0.05).")
