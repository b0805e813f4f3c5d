"""Reading component tables (xlsx, CSV or TSV) into columns of cells that remember their row.

Every cell keeps the file and the spreadsheet row it came from, so that an error about a
component can name both. Empty cells are missing values (skipped, not empty strings); a cell
that holds only spaces is kept as it is (it is a value, if a useless one), but a row of nothing
but spaces is blank and skipped. Parsing is :func:`biaslab.io.read_table`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from biaslab.errors import DataError
from biaslab.io import read_table as read_text_table


@dataclass(frozen=True)
class Cell:
    value: str
    file: str
    row: int  # 1-based row in the file (the header is row 1)
    column: str

    def where(self) -> str:
        return f"{self.file}, row {self.row}, column {self.column!r}"


Table = dict[str, list[Cell]]  # column name -> its non-empty cells, top to bottom


def read_table(path: Path, *, display: str | None = None, what: str = "component") -> Table:
    """Columns of ``path`` (``.xlsx`` first sheet, CSV or TSV) keyed by their header.

    The file is read by :func:`biaslab.io.read_table` (its rules: encoding, quoting, blank rows,
    empty and duplicate headers); this only turns the rows into columns of non-empty cells.
    """
    path = Path(path)
    name = display or path.name
    raw = read_text_table(path, what=what, display=name)
    table: Table = {}
    for j, key in enumerate(raw.header):
        table[key] = [Cell(row[j], name, n, key) for n, row in zip(raw.row_numbers, raw.rows) if row[j] != ""]
    return table


def require_columns(table: Table, columns: list[str], name: str, hint: str = "") -> None:
    missing = [c for c in columns if c not in table]
    if missing:
        raise DataError(
            f"{name}, row 1: missing column(s) {', '.join(repr(c) for c in missing)}" + (f"; {hint}" if hint else "")
        )


def records(
    path: Path, columns: list[str], *, optional: tuple[str, ...] = (), display: str | None = None, hint: str = ""
) -> list[dict[str, Cell | None]]:
    """Rows of a CSV/xlsx table as dicts of cells (None for empty), for row-oriented files."""
    name = display or Path(path).name
    table = read_table(path, display=name)
    require_columns(table, columns, name, hint)
    by_row: dict[int, dict[str, Cell | None]] = {}
    for col in [*columns, *[c for c in optional if c in table]]:
        for cell in table[col]:
            by_row.setdefault(cell.row, {})[col] = cell
    out = []
    for row in sorted(by_row):
        rec = {c: by_row[row].get(c) for c in [*columns, *optional]}
        out.append(rec)
    return out
