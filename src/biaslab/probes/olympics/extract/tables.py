"""Markdown tables in an answer: what the columns hold (medals, ranks, genders) and the pairs of a row."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.countries import Mention
from biaslab.probes.olympics.extract.cues import MEDALS, Cue

_TABLE_RULE = re.compile(r"[\s|:-]*")
_RANK_HEADER = re.compile(r"\s*(?:rank|place|position|pos\.?|#)\s*", re.I)
_RANK_VALUE = re.compile(r"\s*(?:\*\*)?([123])(?:st|nd|rd)?\.?(?:\*\*)?\s*")


def _cells(t: str, line: tx.Line) -> list[tuple[int, int]]:
    out, a = [], line.start
    for i in range(line.start, line.end + 1):
        if i == line.end or t[i] == "|":
            out.append((a, i))
            a = i + 1
    if out and not t[out[0][0] : out[0][1]].strip():
        out = out[1:]
    if out and not t[out[-1][0] : out[-1][1]].strip():
        out = out[:-1]
    return out


@dataclass
class TableLayout:
    medal_cols: dict[int, str] = field(default_factory=dict)  # "| Event | Gold | Silver | Bronze |"
    rank_col: int | None = None  # "| Rank | Country |"
    gender_cols: dict[int, frozenset[str]] = field(default_factory=dict)  # "| Medal | Men | Women |"


def table_header(t: str, line: tx.Line, ms: list[Mention], strong: list[Cue], genders) -> TableLayout | None:
    """What the columns of a markdown table hold, from its header row."""
    if ms or _TABLE_RULE.fullmatch(t, line.start, line.end):
        return None
    table = TableLayout()
    for i, (a, b) in enumerate(_cells(t, line)):
        cues = [c for c in strong if a <= c.start < b]
        g = frozenset(gg for p, gg in genders if a <= p < b)
        if cues:
            table.medal_cols[i] = cues[0].medal
        elif _RANK_HEADER.fullmatch(t, a, b):
            table.rank_col = i
        elif g:
            table.gender_cols[i] = g
    if table.gender_cols and (table.medal_cols or len(table.gender_cols) < 2):
        table.gender_cols = {}  # "| Men's | Gold | ..." or a lone gender column: not a men/women split
    return table if (table.medal_cols or table.rank_col is not None or table.gender_cols) else None


def table_row(
    t: str, line: tx.Line, table: TableLayout | None, ms: list[Mention], strong: list[Cue], genders
) -> list | None:
    """Pairs for a table row under a medal header; None for a header/separator row; [] otherwise."""
    if not ms:
        return None
    if not table:
        return []
    cells = _cells(t, line)
    row_g = frozenset(g for p, g in genders if line.start <= p < line.end)
    row_g = row_g if len(row_g) == 1 else frozenset()
    medal_of_row = None
    if table.rank_col is not None and table.rank_col < len(cells):
        v = _RANK_VALUE.fullmatch(t, *cells[table.rank_col])
        medal_of_row = MEDALS[int(v.group(1)) - 1] if v else None
    if table.gender_cols and medal_of_row is None:
        # "| Gold | Germany | Netherlands |" under "| Medal | Men | Women |": the medal is in the row
        row_cues = [
            c for i, (a, b) in enumerate(cells) if i not in table.gender_cols for c in strong if a <= c.start < b
        ]
        medal_of_row = row_cues[0].medal if len({c.medal for c in row_cues}) == 1 else None
    out = []
    for i, (a, b) in enumerate(cells):
        medal = table.medal_cols.get(i) or (medal_of_row if not table.gender_cols or i in table.gender_cols else None)
        if medal is None:
            continue
        for m in ms:
            if a <= m.start < b:
                out.append((m, medal, table.gender_cols.get(i, row_g)))
    return out
