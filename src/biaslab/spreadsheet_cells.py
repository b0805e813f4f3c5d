"""Cells of the CSV and TSV files biaslab writes for people: none runs as a spreadsheet formula.

Model output reaches files that people open in a spreadsheet (an Olympics run's ``results_*.tsv``,
``fsb generate``'s ``texts.csv``, the annotation export, extracted predicates), and a cell such as
``=HYPERLINK("http://...?"&A1,"click")`` would run there. The common rule: a cell whose first character
is a control or invisible format character (tab, carriage return, line break, NUL, zero-width space,
byte-order mark...), or whose first visible character is, after Unicode compatibility folding (fullwidth
``＝`` is ``=``), one of ``= + - @``, gets a leading apostrophe, which spreadsheets take as "text
follows" (:func:`safe_cell`).

:func:`csv_text` writes the rows: Python's csv module, asked for rows that end in ``\n``, leaves a cell with a
lone carriage return unquoted, which every reader takes for the end of the row (and the rest of the cell for
the start of the next one, where a formula would run); here such a cell is quoted.

A cell that already starts with apostrophes before such a start gets one more, so that reading drops
exactly one and gives back the value written (:func:`read_cell`): biaslab's readers of tables
(:func:`biaslab.io.read_table` and the readers of its own formats) read cells that way, so a text goes
through ``texts.csv`` or a results file unchanged.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterable, Sequence

FORMULA_START = ("=", "+", "-", "@")


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def _runs(text: str) -> bool:
    """Whether a spreadsheet could take ``text`` for a formula (or hide how it starts)."""
    if not text:
        return False
    if unicodedata.category(text[0]) in ("Cc", "Cf"):
        return True
    first = next((ch for ch in text if not _invisible(ch)), "")
    return bool(first) and unicodedata.normalize("NFKC", first).startswith(FORMULA_START)


def _marked(text: str) -> bool:
    return _runs(text.lstrip("'"))


def safe_cell(value: object) -> str:
    """``value`` as the text of a cell no spreadsheet runs (None is an empty cell)."""
    text = "" if value is None else str(value)
    return "'" + text if _marked(text) else text


def read_cell(text: str) -> str:
    """The value :func:`safe_cell` wrote as ``text`` (other text as it is)."""
    return text[1:] if text.startswith("'") and _marked(text) else text


def csv_text(rows: Iterable[Sequence[object]], *, delimiter: str = ",") -> str:
    """``rows`` (the header first) as CSV or TSV text, one ``\\n`` per row, a cell with a line break or a
    carriage return quoted; None is an empty cell. The cells are written as given: make text cells
    :func:`safe_cell`'s first."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n")  # \r in the terminator: quoted
    lines = []
    for row in rows:
        writer.writerow(["" if cell is None else cell for cell in row])
        lines.append(buf.getvalue()[:-2])
        buf.seek(0)
        buf.truncate()
    return "".join(line + "\n" for line in lines)
