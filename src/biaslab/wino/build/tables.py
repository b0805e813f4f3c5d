"""Reading component tables (xlsx or CSV) into columns of cells that remember their row.

Every cell keeps the file and the spreadsheet row it came from, so that an error about a
component can name both. Empty cells are missing values (skipped, not empty strings); a cell
that holds only spaces is kept as it is (it is a value, if a useless one).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from biaslab.errors import DataError


@dataclass(frozen=True)
class Cell:
    value: str
    file: str
    row: int  # 1-based row in the file (the header is row 1)
    column: str

    def where(self) -> str:
        return f"{self.file}, row {self.row}, column {self.column!r}"


Table = dict[str, list[Cell]]  # column name -> its non-empty cells, top to bottom


def read_table(path: Path, *, display: str | None = None) -> Table:
    """Columns of ``path`` (``.xlsx`` first sheet, or ``.csv``) keyed by their header."""
    path = Path(path)
    name = display or path.name
    if not path.is_file():
        raise DataError(f"{name}: file not found")
    rows = _xlsx_rows(path, name) if path.suffix.lower() in (".xlsx", ".xlsm") else _csv_rows(path, name)
    if not rows:
        raise DataError(f"{name}: the file is empty; it needs a header row")
    header = rows[0]
    table: Table = {}
    for j, head in enumerate(header):
        if head is None or str(head).strip() == "":
            if any(j < len(r) and r[j] not in (None, "") for r in rows[1:]):
                raise DataError(f"{name}, row 1, column {j + 1}: values below an empty header; name the column")
            continue
        key = str(head).strip()
        if key in table:
            raise DataError(f"{name}, row 1: column {key!r} appears twice")
        cells = []
        for i, row in enumerate(rows[1:], start=2):
            value = row[j] if j < len(row) else None
            if value is None or value == "":
                continue
            cells.append(Cell(value if isinstance(value, str) else _text(value), name, i, key))
        table[key] = cells
    return table


def _text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _xlsx_rows(path: Path, name: str) -> list[list[object]]:
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - core dependency
        raise DataError("reading .xlsx components needs openpyxl: pip install openpyxl") from None
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, InvalidFileException...
        raise DataError(f"{name}: not a readable .xlsx file ({type(exc).__name__}); save it again as .xlsx or .csv") from None
    try:
        sheet = wb.worksheets[0]
        rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    finally:
        wb.close()
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    return rows


def _csv_rows(path: Path, name: str) -> list[list[object]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return [list(r) for r in csv.reader(fh)]
    except UnicodeDecodeError:
        raise DataError(f"{name}: not UTF-8 text; save it as UTF-8 CSV") from None
    except csv.Error as exc:
        raise DataError(f"{name}: not valid CSV ({exc})") from None


def require_columns(table: Table, columns: list[str], name: str, hint: str = "") -> None:
    missing = [c for c in columns if c not in table]
    if missing:
        raise DataError(f"{name}, row 1: missing column(s) {', '.join(repr(c) for c in missing)}"
                        + (f"; {hint}" if hint else ""))


def records(path: Path, columns: list[str], *, optional: tuple[str, ...] = (), display: str | None = None,
            hint: str = "") -> list[dict[str, Cell | None]]:
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
