"""Report parts of kobbq: the metrics by group (category, label type, wording) and their spread across wordings."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from biaslab.report.cells import html_table, interval, num

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults

NAMES = ("accuracy_amb", "accuracy_dis", "diff_bias_amb", "diff_bias_dis", "ooc_rate")


def _with_ci(row: dict[str, Any], name: str) -> str:
    lo, hi = (row.get(f"{name}_ci") or (None, None))[:2]
    return f"{num(row.get(name))} {interval(lo, hi, 3, '')}".strip()


def sections(results: RunResults, attempts: list[dict[str, Any]]) -> list[dict[str, str]]:
    d = results.details
    out = [
        {
            "title": "How the answers and the uncertainty are computed",
            "html": f"<p>Mode: <b>{html.escape(str(d.get('mode')))}</b>. {html.escape(d.get('ci_note', ''))}</p>",
        }
    ]
    groups = d.get("groups") or []
    if groups:
        header = ["group", "answers", "accuracy (amb.)", "accuracy (dis.)", "diff-bias (amb.) [95% CI]", "q",
                  "diff-bias (dis.) [95% CI]", "q", "out of choice"]  # fmt: skip
        rows = [
            [
                g["group"],
                g["n_attempts"],
                _with_ci(g, "accuracy_amb"),
                _with_ci(g, "accuracy_dis"),
                _with_ci(g, "diff_bias_amb"),
                num(g.get("q_diff_bias_amb"), 4),
                _with_ci(g, "diff_bias_dis"),
                num(g.get("q_diff_bias_dis"), 4),
                num(g.get("ooc_rate")),
            ]  # fmt: skip
            for g in groups
        ]
        out.append({"title": "By category, label type and prompt wording", "html": html_table(header, rows)})
    spread = d.get("spread") or {}
    if any(s.get("range") is not None for s in spread.values()):
        rows = [
            [
                name,
                num(s.get("min")),
                s.get("min_prompt", ""),
                num(s.get("max")),
                s.get("max_prompt", ""),
                num(s.get("range")),
            ]  # fmt: skip
            for name, s in spread.items()
            if name in NAMES
        ]
        out.append(
            {
                "title": "Spread across the prompt wordings",
                "html": "<p>Each metric over each wording's answers: a metric that moves with the wording is a "
                "finding about the model, not noise of the benchmark.</p>"
                + html_table(["metric", "lowest", "wording", "highest", "wording", "range"], rows, numeric=(1, 3, 5)),
            }
        )
    return out


def coverage(results: RunResults) -> str | None:
    """ "2,280 samples x 5 wordings x 3 option orders; 12 categories" (None without a group table)."""
    from biaslab.probing.coverage import count

    p = results.parameters
    groups = [g["group"] for g in results.details.get("groups") or []]
    if not groups:
        return None
    kinds = ("overall", "ST", "TM", "SR", "NC")
    categories = [g for g in groups if g not in kinds and not g.startswith("prompt")]
    n = len(categories)
    text = f"{count(results.n_items, 'samples')} x {count(len(p.get('prompts') or []), 'wordings')} x "
    text += f"{count(int(p.get('permutations') or 1), 'option orders')}; {n} categor{'y' if n == 1 else 'ies'}"
    return text + (" (every category)" if p.get("categories") is None else f": {', '.join(categories)}")
