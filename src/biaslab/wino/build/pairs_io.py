"""The pairs CSV: writing a built benchmark, reading any pairs file (CrowS-Pairs included).

A pairs file needs ``sent_more`` and ``sent_less``; ``target_ID`` (the group; "all" when
missing), ``predicate_id`` (the clustering unit; when missing, the pairs that share a
stereotypical sentence form one cluster) and any other column are optional. Bad rows are
one-line errors naming the file and the row (the header is row 1).

The delimiter is read from the header: comma, tab, semicolon (a spreadsheet's CSV in many
locales) or ``|``, the first of them that splits the header into cells holding both required
columns. When none does, the error lists the columns found (and the delimiter that split them)
and names the closest spelling of a missing column.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from biaslab.errors import DataError
from biaslab.io import atomic_write_text
from biaslab.spreadsheet_cells import csv_text, read_cell, safe_cell
from biaslab.wino.build.build import PAIR_COLUMNS, Pair

REQUIRED = ("sent_more", "sent_less")
DEFAULT_GROUP = "all"
DELIMITERS = {",": "comma", "\t": "tab", ";": "semicolon", "|": "vertical bar"}


@dataclass
class PairRow:
    row: int  # line of the CSV (header = 1)
    sent_more: str
    sent_less: str
    target_ID: str
    predicate_id: str
    extra: dict[str, str] = field(default_factory=dict)


def pairs_csv_text(pairs: list[Pair]) -> str:
    # predicates may be a model's: no cell a spreadsheet formula (read back as written)
    return csv_text([PAIR_COLUMNS, *([safe_cell(p.row()[c]) for c in PAIR_COLUMNS] for p in pairs)])


def write_pairs(path: Path, pairs: list[Pair]) -> Path:
    atomic_write_text(Path(path), pairs_csv_text(pairs))
    return Path(path)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _header_cells(line: str, delimiter: str) -> list[str]:
    try:
        return [c.strip() for c in next(csv.reader([line], delimiter=delimiter), [])]
    except csv.Error:
        return []


def _delimiter(text: str, name: str) -> str:
    """The delimiter whose split of the header holds both required columns; else a one-line error
    that lists the columns found and suggests the closest name for each missing one."""
    import difflib

    first = next((line for line in text.splitlines() if line.strip()), "")
    for delimiter in DELIMITERS:
        if all(c in _header_cells(first, delimiter) for c in REQUIRED):
            return delimiter
    delimiter = max(DELIMITERS, key=lambda d: len(_header_cells(first, d)))  # the one that splits it most
    cells = _header_cells(first, delimiter)
    missing = [c for c in REQUIRED if c not in cells]
    shown = ", ".join(repr(c) for c in cells[:10]) + (f" and {len(cells) - 10} more" if len(cells) > 10 else "")
    found = (
        f"found {len(cells)} column(s) {shown} ({DELIMITERS[delimiter]}-delimited)"
        if cells
        else "found an empty header"
    )
    guesses = []
    for column in missing:
        close = difflib.get_close_matches(column, [c for c in cells if c not in REQUIRED], n=1, cutoff=0.6)
        close = close or [c for c in cells if c.lower().replace(" ", "_").replace("-", "_") == column]
        if close:
            guesses.append(f"rename {close[0]!r} to {column}")
    hint = f"; {', '.join(guesses)}" if guesses else ""
    raise DataError(
        f"{name}, row 1: missing column(s) {', '.join(missing)}; {found}{hint}; a pairs CSV needs "
        "sent_more, sent_less and optionally target_ID, predicate_id (comma, tab or semicolon "
        "between them)"
    )


def read_pairs(path: Path) -> list[PairRow]:
    """Validated pair rows of a CSV file (see the module docstring)."""
    path = Path(path)
    name = str(path)
    if not path.is_file():
        raise DataError(f"{name}: pairs file not found")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{name}: not UTF-8 text; save the pairs as a UTF-8 CSV") from None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=_delimiter(text, name))
        reader.fieldnames = [h.strip() for h in reader.fieldnames or []]
        rows = []
        for rec in reader:
            rec = {k: read_cell(v) if isinstance(v, str) else v for k, v in rec.items()}
            line = reader.line_num
            more, less = (rec.get("sent_more") or "").strip(), (rec.get("sent_less") or "").strip()
            if not more or not less:
                which = "sent_more" if not more else "sent_less"
                raise DataError(f"{name}, row {line}: {which} is empty; every pair needs two sentences")
            if more == less:
                raise DataError(
                    f"{name}, row {line}: sent_more and sent_less are identical ({more[:60]!r}); "
                    "a pair must differ in its target group"
                )
            group = (rec.get("target_ID") or "").strip() or DEFAULT_GROUP
            pid = (rec.get("predicate_id") or "").strip() or f"sent_more:{more}"
            extra = {k: v for k, v in rec.items() if k and k not in (*REQUIRED, "target_ID", "predicate_id") and v}
            rows.append(PairRow(line, more, less, rec.get("target_ID") or group, pid, extra))
    except csv.Error as exc:
        raise DataError(f"{name}: not valid CSV ({exc})") from None
    if not rows:
        raise DataError(f"{name}: no pairs below the header")
    return rows
