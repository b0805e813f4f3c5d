"""Every attempt of a run as a static, filterable table in report.html (no script).

Each filter is a row of radio buttons; CSS hides the rows that do not match
(``#f-g3:checked ~ table tr.r:not(.g3) {display: none}``), so the table works offline, from a
file, and under the report's Content-Security-Policy, which allows no script at all. Filters are
offered only on columns whose values mean something to a reader:

* up to :data:`MAX_CATEGORIES` categories: the first of the probe's example fields whose values
  are text labels, 2 to :data:`MAX_GROUPS` of them (``target_ID``, ``category``, ``context_condition``);
  numbers are never offered as labels (an option index or a year is not a category a reader filters by);
* decision: the attempt's ``evaluation``, when it is a label (a number is a score, below);
* score: ``score_more - score_less`` (log-likelihood difference) where both exist, else the first
  example field (``evaluation`` included) holding measurements (numbers, not all whole: whole numbers
  are counts, indices or years), in ranges with round edges (steps of 1, 2 or 5 times a power of
  ten, about :data:`N_BINS` of them); ranges no attempt falls in are left out.

Runs with more than :data:`MAX_ROWS` attempts show that many, evenly spread (attempts.jsonl
holds them all).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_ROWS = 20_000
MAX_GROUPS = 40
MAX_CATEGORIES = 3
PREFIXES = "gck"  # the CSS class letter of each category filter, in order
N_BINS = 5
LONG_TEXT = 400  # characters: longer texts are folded into <details>


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _is_label(v: Any) -> bool:
    return isinstance(v, str) or v is None


def _score(rows: list[dict[str, Any]], fields: list[str]) -> tuple[str, list[float | None]] | None:
    """The score column: its name and its value per row (None where there is none)."""
    if any("score_more" in r and "score_less" in r for r in rows):
        pairs = [(_number(r.get("score_more")), _number(r.get("score_less"))) for r in rows]
        return "log-lik. difference", [a - b if a is not None and b is not None else None for a, b in pairs]
    for f in fields:
        vals = [_number(r.get(f)) for r in rows]
        present = [v for v in vals if v is not None]
        measured = any(not v.is_integer() for v in present)
        if measured and all(v is not None or r.get(f) is None for v, r in zip(vals, rows, strict=True)):
            return f, vals
    return None


def category_fields(rows: list[dict[str, Any]], fields: list[str]) -> list[str]:
    """The example fields offered as label filters (see the module; ``biaslab view`` shows them as the groups)."""
    out = []
    for f in fields:
        if f == "evaluation":
            continue
        found = [r.get(f) for r in rows]
        if not all(isinstance(v, str) for v in found):  # a list, a number: not a label to filter by
            continue
        values = set(found)
        if 1 < len(values) <= MAX_GROUPS:
            out.append(f)
        if len(out) == MAX_CATEGORIES:
            break
    return out


def nice_bins(values: list[float], target: int = N_BINS) -> list[tuple[float, float]]:
    """Ranges with round edges covering ``values``: a step of 1, 2 or 5 times a power of ten giving about
    ``target`` ranges, edges on multiples of it (none when every value is the same)."""
    lo, hi = min(values), max(values)
    if not hi > lo:
        return []
    raw = (hi - lo) / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    last = max(last, first + 1)
    edges = [round(k * step, 12) + 0.0 for k in range(first, last + 1)]  # + 0.0: no "-0"
    return list(zip(edges[:-1], edges[1:]))


def _bin_of(value: float, bins: list[tuple[float, float]]) -> int:
    for k, (_, b) in enumerate(bins):
        if value < b or k == len(bins) - 1:
            return k
    return len(bins) - 1  # pragma: no cover


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


def _label(value: Any) -> str:
    return "none" if value is None else str(value)


def attempts_table(rows: list[dict[str, Any]], fields: list[str], *, likelihood: bool) -> dict[str, Any] | None:
    """What the report's attempts section shows: the filters (``dims``), rows and their CSS classes."""
    if not rows:
        return None
    shown = _spread(rows, MAX_ROWS)
    cats = category_fields(shown, fields)
    score = _score(shown, fields)
    if likelihood:
        paired = any("sent_more" in r for r in shown)
        labels = ("stereotypical sentence", "counterfactual sentence") if paired else ("scored text", "compared text")
    else:
        labels = ("prompt", "output")
    decided = all(_is_label(r.get("evaluation")) for r in shown)  # a numeric evaluation is the score instead
    options = [sorted({str(r.get(f)) for r in shown}) for f in cats]
    decisions = sorted({str(r.get("evaluation")) for r in shown}) if decided else []
    values = score[1] if score else [None] * len(shown)
    present = [v for v in values if v is not None]
    bins = nice_bins(present) if present else []
    out_rows = []
    for i, r in enumerate(shown):
        classes = [f"{PREFIXES[j]}{options[j].index(str(r.get(f)))}" for j, f in enumerate(cats)]
        if decided:
            classes.append(f"d{decisions.index(str(r.get('evaluation')))}")
        value = values[i]
        if value is not None and bins:
            classes.append(f"s{_bin_of(value, bins)}")
        out_rows.append(
            {
                "classes": " ".join(classes),
                "n": i + 1,
                "cats": [r.get(f) for f in cats],
                "decision": r.get("evaluation"),
                "score": values[i],
                "a": _text(r.get("prompt")),
                "b": _text(r.get("text")),
            }
        )
    counts: dict[str, int] = {}
    for row in out_rows:
        for cls in str(row["classes"]).split():
            counts[cls] = counts.get(cls, 0) + 1
    dims = [
        {
            "name": f,
            "key": f"f{PREFIXES[j]}",
            "options": [
                {"id": f"{PREFIXES[j]}{k}", "label": v, "count": counts.get(f"{PREFIXES[j]}{k}", 0)}
                for k, v in enumerate(options[j])
            ],
        }
        for j, f in enumerate(cats)
    ]
    if len(decisions) > 1:
        dims.append(
            {
                "name": "decision",
                "key": "fd",
                "options": [
                    {"id": f"d{k}", "label": "undetected" if d == "None" else d, "count": counts.get(f"d{k}", 0)}
                    for k, d in enumerate(decisions)
                ],
            }
        )
    if score and len(bins) > 1:
        dims.append(
            {
                "name": score[0],
                "key": "fs",
                "options": [
                    {"id": f"s{k}", "label": f"{a:g} to {b:g}", "count": counts[f"s{k}"]}
                    for k, (a, b) in enumerate(bins)
                    if counts.get(f"s{k}")
                ],
            }
        )
    return {
        "total": len(rows),
        "shown": len(shown),
        "labels": labels,
        "categories": cats,
        "decided": decided,
        "score_field": score[0] if score else None,
        "dims": dims,
        "rows": out_rows,
    }
