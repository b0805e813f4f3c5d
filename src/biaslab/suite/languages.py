"""The suite card's section for runs measured in several languages: bias per language side by side with control
accuracy, and each language's difference from English (a probe's results.json ``details["languages"]``: mbbq's,
and any probe that reports the same rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaslab.report.cells import interval, num

HEADER = ["probe", "language", "bias (ambig.) [95% CI]", "bias (disambig.) [95% CI]", "control acc. (ambig.)",
          "control acc. (disambig.)", "control adequate?", "bias (ambig.) - en [95% CI], q",
          "bias (disambig.) - en [95% CI], q", "adjusted for control (ambig., disambig.)"]  # fmt: skip
INTRO = (
    "Bias scores per language beside accuracy on the control set (the same questions with the group words "
    "replaced): a language's bias is read only where its control accuracy is adequate. The differences from "
    "English pair the same questions translated (q: Benjamini-Hochberg across languages and bias scores); "
    "'adjusted' takes out what the difference in control accuracy predicts (the probe's card states the estimand)."
)


def _score(row: dict[str, Any], name: str) -> str:
    lo, hi = (row.get(f"{name}_ci") or [None, None])[:2]
    return f"{num(row.get(name), 1)} {interval(lo, hi, 1, 'n/a')}"


def _diff(d: dict[str, Any] | None) -> str:
    if not d or d.get("diff") is None:
        return "–"
    ci = interval(d.get("ci_low"), d.get("ci_high"), 1, "n/a")
    return f"{d['diff']:+.1f} {ci}, q {num(d.get('q'), 3)}"


def _rows(probe: str, languages: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for r in languages:
        d = r.get("diff_vs_en") or {}
        adjusted = [d.get(f"adjusted_bias_score_{c}") for c in ("ambig", "disambig")]
        out.append(
            [
                probe,
                r["language"],
                _score(r, "bias_score_ambig"),
                _score(r, "bias_score_disambig"),
                num(r.get("control_accuracy_ambig")),
                num(r.get("control_accuracy_disambig")),
                "unknown" if r.get("adequate") is None else ("yes" if r["adequate"] else "no"),
                _diff(d.get("bias_score_ambig")),
                _diff(d.get("bias_score_disambig")),
                ", ".join(f"{a['diff']:+.1f}" if a and a.get("diff") is not None else "–"
                          for a in adjusted),
            ]
        )  # fmt: skip
    return out


def language_section(suite: dict[str, Any], base: Path) -> dict[str, Any] | None:
    """The section (None when no run of the suite reports languages)."""
    import json

    cards = []
    for model in suite["models"]:
        rows: list[list[str]] = []
        for run in (r for r in suite["runs"] if r["model"] == model):
            try:
                details = json.loads((base / run["dir"] / "results.json").read_text(encoding="utf-8"))["details"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if isinstance(details, dict) and details.get("languages"):
                rows += _rows(run["probe"], details["languages"])
        if rows:
            cards.append({"title": model, "header": HEADER, "numeric": [4, 5], "rows": rows})
    return {"title": "Bias per language", "intro": INTRO, "cards": cards} if cards else None
