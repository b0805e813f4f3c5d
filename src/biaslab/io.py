"""Shared file helpers: atomic writes, JSON-safe values and reading the tables users hand in.

Every output file is written to a temporary name in the same directory, fsynced and renamed
into place, so a crash never leaves a half-written file and a failed run never replaces
earlier results; a write that cannot be made is a one-line error (:mod:`biaslab.atomic_write`).
:func:`read_table` reads every CSV, TSV or .xlsx table by one set of rules (listed above it).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaslab.atomic_write import all_or_nothing, atomic_write_bytes, atomic_write_text
from biaslab.errors import ConfigError, DataError
from biaslab.spreadsheet_cells import read_cell

__all__ = ["all_or_nothing", "atomic_write_bytes", "atomic_write_text", "json_safe", "read_table", "write_output"]


def json_safe(obj: Any) -> Any:
    """Replace NaN/inf by None, numpy scalars by Python ones, recursively."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# -- tables ----------------------------------------------------------------------------------------
#
# One reader for every table a user hands in (items, annotations, scores, wino components...).
# The rules, in the order they apply:
#
# * **Format by extension.** ``.csv`` is comma-separated, ``.tsv`` and ``.tab`` tab-separated,
#   ``.xlsx``/``.xlsm`` the first worksheet. Any other name (``.txt``, none) is sniffed from the
#   header line: tab-separated when it has tabs and no commas, else comma-separated. A ``.csv``
#   whose header has tabs but no commas (or a ``.tsv`` whose header has commas but no tabs) is an
#   error: the name and the content disagree, so the file is renamed or saved again rather than
#   guessed. ``.xls``/``.ods`` are refused with the advice to save as ``.xlsx`` or CSV.
# * **Encoding.** UTF-8; a leading byte-order mark (Excel's "CSV UTF-8") is dropped. Anything
#   else, UTF-16 included, is an error that says to save the file as UTF-8.
# * **Quoting.** Standard CSV (RFC 4180, as Excel writes it): a cell may be wrapped in double
#   quotes, and then holds delimiters, line breaks and doubled quotes (``""``). A quote inside an
#   unquoted cell is an ordinary character. Text after a closing quote, or a quote never closed,
#   is an error (it means the quoting is broken and cells would silently run together).
# * **Rows.** A row is a record, so a quoted cell with line breaks keeps its row on one number.
#   Rows are numbered as a spreadsheet shows the file: the first row is 1 and blank rows count.
#   Rows whose cells are all empty or only spaces are skipped (before the header too). The first
#   row that is not blank is the header.
# * **Header.** Names are stripped of surrounding spaces. Two columns whose names differ only in
#   case or spaces are an error. A column with an empty name is dropped when it is empty all the
#   way down (trailing delimiters) or when it is the first column (the row index that pandas'
#   ``to_csv`` and R's ``write.csv`` write), and is an error anywhere else when it holds a value.
# * **Cells.** Text, kept as written (callers strip what they treat as ids), except that a CSV or TSV cell
#   marked as text for spreadsheets (a leading apostrophe before ``= + - @`` or a control character, as
#   biaslab writes model output: :mod:`biaslab.spreadsheet_cells`) is read without the mark. A short row is
#   padded with empty cells; a long row is an error when the extra cells hold values (usually an
#   unquoted delimiter), and trimmed when they are empty. Spreadsheet numbers become text the
#   way they display (``7.0`` -> ``"7"``), empty spreadsheet cells become ``""``.
# * **Errors** are :class:`~biaslab.errors.DataError`, one line naming the file (and the row when
#   there is one) and how to fix it. A missing file, an empty file (no header) and the rules above
#   all raise; a header with no data rows does not (callers say what they need).

TEXT_TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
SPREADSHEET_SUFFIXES = (".xlsx", ".xlsm")
MAX_CELL_CHARS = 16_000_000  # far above any text a caller accepts, so their own limits speak first


@dataclass(frozen=True)
class TextTable:
    """A table read by :func:`read_table`: header names and data rows of text cells."""

    name: str  # how messages name the file
    header: list[str]  # stripped, unique (ignoring case), non-empty
    rows: list[list[str]]  # each exactly len(header) cells
    row_numbers: list[int]  # the file row of each data row (spreadsheet numbering, header row counted)
    header_row: int = 1

    def index(self, column: str) -> int | None:
        """Position of ``column`` in the header, ignoring case; None when absent."""
        wanted = column.strip().lower()
        return next((i for i, h in enumerate(self.header) if h.lower() == wanted), None)


def read_table(path: str | Path, *, what: str = "table", display: str | None = None) -> TextTable:
    """Read a CSV, TSV or .xlsx table by the rules above; ``what`` names the file's role in messages
    ("items", "annotations"), ``display`` replaces the path in them."""
    path = Path(path)
    name = display or str(path)
    if path.is_dir():
        raise DataError(f"{name} is a directory; give the {what} file (CSV, TSV or .xlsx)")
    if not path.is_file():
        raise DataError(f"{name}: no such file; give the path of the {what} file (CSV, TSV or .xlsx)")
    suffix = path.suffix.lower()
    if suffix in (".xls", ".ods", ".numbers"):
        raise DataError(f"{name}: {suffix} files cannot be read; save the {what} file as .xlsx or as CSV UTF-8")
    raw = _spreadsheet_rows(path, name) if suffix in SPREADSHEET_SUFFIXES else _delimited_rows(path, name, suffix)
    numbered = [(n, row) for n, row in enumerate(raw, start=1) if any(c.strip() for c in row)]
    if not numbered:
        raise DataError(f"{name}: the {what} file is empty; it needs a header row and one row per entry")
    header_row, head = numbered[0]
    keep: list[int] = []
    seen: dict[str, int] = {}
    for j, cell in enumerate(head):
        key = cell.strip()
        if not key:
            if j == 0:  # the row index that pandas and R write by default: not data
                continue
            filled = next((n for n, row in numbered[1:] if j < len(row) and row[j].strip()), None)
            if filled is not None:
                raise DataError(
                    f"{name}, row {filled}: a value in column {j + 1}, which has no name in the header "
                    f"(row {header_row}); name the column or move the value"
                )
            continue
        if key.lower() in seen:
            i = seen[key.lower()]
            same = "appears twice" if head[i].strip() == key else f"and {head[i].strip()!r} differ only in case"
            raise DataError(
                f"{name}, row {header_row}: column {key!r} {same} (columns {i + 1} and {j + 1}); rename or remove one"
            )
        seen[key.lower()] = j
        keep.append(j)
    rows, numbers = [], []
    for n, row in numbered[1:]:
        extra = [c for c in row[len(head) :] if c.strip()]
        if extra:
            raise DataError(
                f"{name}, row {n}: {len(row)} cells but the header (row {header_row}) has {len(head)} "
                f"columns; quote cells that contain the delimiter, or name the extra column"
            )
        rows.append([row[j] if j < len(row) else "" for j in keep])
        numbers.append(n)
    return TextTable(name, [head[j].strip() for j in keep], rows, numbers, header_row)


def _delimited_rows(path: Path, name: str, suffix: str) -> list[list[str]]:
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(f"{name}: UTF-16 text; save it as UTF-8 (in Excel: CSV UTF-8)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8 (in Excel: CSV UTF-8)"
        ) from None
    first = next((line for line in text.splitlines() if line.strip(" \t,")), "")
    has_tab, has_comma = "\t" in first, "," in first
    delimiter = TEXT_TABLE_SUFFIXES.get(suffix) or ("\t" if has_tab and not has_comma else ",")
    if suffix == ".csv" and has_tab and not has_comma:
        raise DataError(
            f"{name}: the header is tab-separated but the name ends in .csv; rename the file to .tsv "
            "or save it comma-separated"
        )
    if suffix in (".tsv", ".tab") and has_comma and not has_tab:
        raise DataError(
            f"{name}: the header is comma-separated but the name ends in {suffix}; rename the file to "
            ".csv or save it tab-separated"
        )
    kind = "TSV" if delimiter == "\t" else "CSV"
    if csv.field_size_limit() < MAX_CELL_CHARS:
        csv.field_size_limit(MAX_CELL_CHARS)
    rows: list[list[str]] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        for row in reader:
            rows.append([read_cell(cell) for cell in row])
    except csv.Error as exc:
        row_no = len(rows) + 1
        if "end of data" in str(exc):
            raise DataError(
                f"{name}, row {row_no}: a quoted cell is never closed (the file ends inside quotes); "
                'close it, or double the quotes inside it ("")'
            ) from None
        if "field larger" in str(exc):
            raise DataError(
                f"{name}, row {row_no}: a cell of more than {MAX_CELL_CHARS} characters; "
                "shorten it (or check for a quote that is never closed)"
            ) from None
        raise DataError(
            f"{name}, row {row_no} (line {reader.line_num}): not valid {kind} ({exc}); a cell with "
            'quotes in it must be quoted whole, its quotes doubled ("")'
        ) from None
    return rows


def _spreadsheet_rows(path: Path, name: str) -> list[list[str]]:
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - core dependency
        raise DataError("reading .xlsx files needs openpyxl: pip install openpyxl") from None
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, InvalidFileException...
        raise DataError(
            f"{name}: not a readable .xlsx file ({type(exc).__name__}); save it again as .xlsx or as CSV UTF-8"
        ) from None
    try:
        rows = [[_cell_text(v) for v in r] for r in wb.worksheets[0].iter_rows(values_only=True)]
    finally:
        wb.close()
    return rows


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_utf8(path: Path, *, what: str, fix: str = "", encoding: str = "utf-8") -> str:
    """The text of ``path`` (``what`` it should be, e.g. "a TSV file"); a one-line DataError naming it, with the line
    of the first byte that is not UTF-8, and ending in ``fix``, when it is missing, a directory, unreadable or not
    UTF-8 (``encoding`` "utf-8-sig" also drops a byte-order mark)."""
    tail = f"; {fix}" if fix else ""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path} does not exist{tail}") from None
    except IsADirectoryError:
        raise DataError(f"{path} is a directory, not {what}{tail}") from None
    except OSError as exc:
        raise DataError(f"cannot read {path} ({exc.strerror or type(exc).__name__}){tail}") from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}, line {line}: not UTF-8 text ({exc.reason} at byte {exc.start}){tail}") from None


def write_output(path: Path, text: str, flag: str = "--out") -> None:
    """Write ``text`` to ``path`` atomically; a one-line error naming ``flag`` when ``path`` is a folder (other
    failures: :class:`~biaslab.errors.WriteError`, naming the file)."""
    if path.exists() and path.is_dir():
        raise ConfigError(f"{flag} {path} is a directory; pass a file name")
    atomic_write_text(path, text)
