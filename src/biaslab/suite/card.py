"""The suite's report card: a card per model with each probe's headline metric, its CI and a
plain-language reading, then (several models) the paired comparisons with the first model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaslab.compare.forest import forest_plots
from biaslab.compare.render import ci_cell, num, pval, render_page
from biaslab.io import atomic_write_text


def card_sections(suite: dict[str, Any]) -> list[dict[str, Any]]:
    cards = []
    for model in suite["models"]:
        rows = [[r["probe"], r["metric"], num(r["value"]), ci_cell(r), pval(r["p"]) if r["p"] is not None else "",
                 str(r["n_items"]), r["reading"]] for r in suite["runs"] if r["model"] == model]
        cards.append({"title": model, "header": ["probe", "headline metric", "value", "95% CI", "p", "items",
                                                  "reading"],
                      "numeric": [2, 3, 4, 5], "rows": rows,
                      "note": "Each run's own report: runs/<model>/<probe>/report.html."})
    sections = [{"title": "Report card", "cards": cards}]
    if suite["comparisons"]:
        ccards = []
        for cmp in suite["comparisons"]:
            head = [c for c in cmp["comparisons"] if c["metric"] == _headline(suite, cmp["probe"])]
            rows = [[c["run_b"], num(c["a"]), num(c["b"]), num(c["diff"], signed=True), ci_cell(c), pval(c["p"]),
                     pval(c["q"]), c["test"]] for c in head]
            ccards.append({"title": f"{cmp['probe']}: every model against {suite['models'][0]}",
                           "header": ["model (B)", "A", "B", "B - A", "95% CI", "p", "q", "test"],
                           "numeric": [1, 2, 3, 4, 5, 6], "rows": rows,
                           "svgs": forest_plots(head, several_pairs=True),
                           "note": "; ".join(p["note"] for p in cmp["pairs"])
                           + ("" if rows else "; the headline metric is not defined on every run")})
        sections.append({"title": "Paired comparisons of the headline metrics", "cards": ccards,
                         "intro": "q values: Benjamini-Hochberg within each probe's comparisons."})
    if suite.get("gates"):
        from biaslab.gate.render import card_section

        sections.append(card_section(suite["gates"]))
    return sections


def _headline(suite: dict[str, Any], probe: str) -> str | None:
    return next((r["metric"] for r in suite["runs"] if r["probe"] == probe), None)


def write_card(suite: dict[str, Any], path: Path) -> Path:
    meta = [f"{len(suite['models'])} model(s), {len(suite['probes'])} probe(s)"
            + (f", at most {suite['limit']} items each" if suite.get("limit") else ", default sizes")]
    atomic_write_text(Path(path), render_page("Bias report card", card_sections(suite), meta))
    return Path(path)
