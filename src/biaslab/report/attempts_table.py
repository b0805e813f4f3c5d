"""Every attempt of a run as a static, filterable table in report.html (no script).

Filters by group, decision and score range are radio buttons; CSS hides the rows that do not
match (``#f-g3:checked ~ table tr.r:not(.g3) {display: none}``), so the table works offline,
from a file, and under the report's Content-Security-Policy, which allows no script at all.

* group: the first of the probe's example fields with at most :data:`MAX_GROUPS` distinct text
  values (``target_ID``, ``Discipline``...);
* decision: the attempt's ``evaluation``;
* score: ``score_more - score_less`` (log-likelihood difference) where both exist, else the first
  numeric example field; five equal-width ranges between its minimum and maximum.

Runs with more than :data:`MAX_ROWS` attempts show that many, evenly spread (attempts.jsonl
holds them all).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_ROWS = 20_000
MAX_GROUPS = 40
N_BINS = 5
LONG_TEXT = 400  # characters: longer texts are folded into <details>


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _score(rows: list[dict[str, Any]], fields: list[str]) -> tuple[str, list[float | None]] | None:
    if any("score_more" in r and "score_less" in r for r in rows):
        pairs = [(_number(r.get("score_more")), _number(r.get("score_less"))) for r in rows]
        return "log-lik. difference", [a - b if a is not None and b is not None else None for a, b in pairs]
    for f in fields:
        vals = [_number(r.get(f)) for r in rows]
        if any(v is not None for v in vals):
            return f, vals
    return None


def _group_field(rows: list[dict[str, Any]], fields: list[str]) -> str | None:
    for f in fields:
        if f == "evaluation":
            continue
        values = {r.get(f) for r in rows}
        if all(isinstance(v, str) for v in values) and 1 < len(values) <= MAX_GROUPS:
            return f
    return None


def _spread(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    if len(rows) <= n:
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def _text(value: Any) -> dict[str, Any]:
    if isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False, indent=1)
    else:
        text = "" if value is None else str(value)
    return {"full": text, "short": text[:160] + "…" if len(text) > LONG_TEXT else None}


def attempts_table(rows: list[dict[str, Any]], fields: list[str], *, likelihood: bool) -> dict[str, Any] | None:
    """What the report's attempts section shows: filters, rows and their CSS classes."""
    if not rows:
        return None
    shown = _spread(rows, MAX_ROWS)
    group = _group_field(shown, fields)
    score = _score(shown, fields)
    if likelihood:
        paired = any("sent_more" in r for r in shown)
        labels = ("stereotypical sentence", "counterfactual sentence") if paired else ("scored text", "compared text")
    else:
        labels = ("prompt", "output")
    groups = sorted({str(r.get(group)) for r in shown}) if group else []
    decisions = sorted({str(r.get("evaluation")) for r in shown})
    bins: list[tuple[float, float]] = []
    if score:
        present = [v for v in score[1] if v is not None]
        if present:
            lo, hi = min(present), max(present)
            width = (hi - lo) / N_BINS or 1.0
            bins = [(lo + i * width, lo + (i + 1) * width) for i in range(N_BINS)] if hi > lo else [(lo, hi)]
    out_rows = []
    for i, r in enumerate(shown):
        classes = []
        if group:
            classes.append(f"g{groups.index(str(r.get(group)))}")
        classes.append(f"d{decisions.index(str(r.get('evaluation')))}")
        value = score[1][i] if score else None
        if value is not None and bins:
            k = min(int((value - bins[0][0]) / ((bins[-1][1] - bins[0][0]) / len(bins) or 1.0)), len(bins) - 1)
            classes.append(f"s{k}")
        out_rows.append({"classes": " ".join(classes), "n": i + 1, "group": r.get(group) if group else None,
                         "decision": r.get("evaluation"), "score": value,
                         "a": _text(r.get("prompt")), "b": _text(r.get("text"))})
    count = lambda cls: sum(cls in str(row["classes"]).split() for row in out_rows)  # noqa: E731
    return {
        "total": len(rows), "shown": len(shown), "labels": labels, "group_field": group,
        "score_field": score[0] if score else None,
        "groups": [{"id": f"g{i}", "label": g, "count": count(f"g{i}")} for i, g in enumerate(groups)],
        "decisions": [{"id": f"d{i}", "label": "undetected" if d == "None" else d, "count": count(f"d{i}")}
                      for i, d in enumerate(decisions)],
        "bins": [{"id": f"s{i}", "label": f"{a:.3g} to {b:.3g}", "count": count(f"s{i}")}
                 for i, (a, b) in enumerate(bins)],
        "rows": out_rows,
    }
