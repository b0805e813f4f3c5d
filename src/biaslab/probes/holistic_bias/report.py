"""Report parts of the HolisticBias probe: likelihood bias per axis, and per axis the descriptors
the model finds most and least likely."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from biaslab.probing.presentation import Figure
from biaslab.report.cells import html_table, interval, num
from biaslab.report.svg_chart import IntervalRow, Marker, interval_chart

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults

N_SHOWN = 5


def _names(entries: list[dict[str, Any]]) -> str:
    return ", ".join(f"{d['descriptor']} ({num(d['mean_score'], 2)})" for d in entries)


def sections(results: RunResults) -> list[dict[str, str]]:
    note = html.escape(results.details.get("ci_note", ""))
    out = []
    warnings = results.details.get("warnings") or []
    if warnings:
        out.append(
            {"title": "Warning: the control axis", "html": "".join(f"<p><b>{html.escape(w)}</b></p>" for w in warnings)}
        )
    out.append({"title": "How the uncertainty is computed", "html": f"<p>{note}</p>"})
    axes = results.details.get("axes", [])
    controls = set(results.details.get("control_axes") or [])
    if axes:
        out.append(
            {
                "title": "Likelihood bias by axis",
                "html": html_table(
                    [
                        "axis",
                        "descriptors",
                        "templates",
                        "pair tests",
                        "likelihood bias (p < 0.05)",
                        "95% CI",
                        "with BH (q < 0.05)",
                    ],
                    (
                        [
                            a["axis"] + (" (control, not in likelihood_bias)" if a["axis"] in controls else ""),
                            a["n_descriptors"],
                            a["n_templates"],
                            a["n_pairs"],
                            num((a.get("likelihood_bias") or {}).get("value")),
                            interval(
                                (a.get("likelihood_bias") or {}).get("ci_low"),
                                (a.get("likelihood_bias") or {}).get("ci_high"),
                            ),
                            num((a.get("likelihood_bias_bh") or {}).get("value")),
                        ]
                        for a in axes
                    ),
                    numeric=range(1, 7),
                ),
            }
        )
    ranking = results.details.get("descriptors", {})
    if ranking:
        out.append(
            {
                "title": "Most and least likely descriptors",
                "html": html_table(
                    ["axis", "most likely (mean score)", "least likely"],
                    (
                        [
                            axis,
                            _names(ds[: min(N_SHOWN, (len(ds) + 1) // 2)]),
                            _names(ds[::-1][: min(N_SHOWN, len(ds) // 2)]),
                        ]
                        for axis, ds in ranking.items()
                    ),
                )
                + "<p class=meta>Score: the sentence's mean log-likelihood per token, averaged "
                "over the templates and nouns the descriptor was scored with (higher = more likely). "
                "Descriptors of different lengths and frequencies are not comparable as people: low "
                "likelihood can mean a rare word as much as a dispreferred group.</p>",
            }
        )
    return out


def axis_figure(results: RunResults) -> Figure | None:
    axes = [a for a in results.details.get("axes", []) if (a.get("likelihood_bias") or {}).get("value") is not None]
    if not axes:
        return None
    title = "Share of descriptor pairs that differ, by axis"
    chart = []
    for a in axes:
        m = a["likelihood_bias"]
        bh = (a.get("likelihood_bias_bh") or {}).get("value")
        chart.append(
            IntervalRow(
                a["axis"],
                m["value"],
                m.get("ci_low"),
                m.get("ci_high"),
                markers=(Marker(bh),) if bh is not None else (),
            )
        )
    svg = interval_chart(
        chart,
        xlim=(-0.02, 1.02),
        reference=0.05,
        title=title,
        xlabel="share of descriptor pairs whose sentence likelihoods differ",
    )
    return Figure(
        title,
        caption="Dots: likelihood bias (p < 0.05) with its 95% CI over templates; crosses: with BH "
        "(q < 0.05); dotted line: 0.05, what a model without preferences scores by chance.",
        svg=svg,
    )
