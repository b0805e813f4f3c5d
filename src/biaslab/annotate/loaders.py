"""Read the files ``biaslab annotate init`` takes: items, tuples, gold tuples, instructions.

Every problem is reported as one line naming the file, the row and the column, and how to fix it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from biaslab.errors import DataError
from biaslab.io import read_table

ID_COLUMNS = ("id", "uid", "item_id", "item")
TEXT_COLUMNS = ("text", "response", "sentence", "statement")
# Item ids go into exported CSV cells and into URLs of nothing: they must be plain tokens that no
# spreadsheet reads as a formula (so the export never has to alter them).
ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,99}")
MAX_TEXT_CHARS = 1_000_000
MAX_INSTRUCTIONS_BYTES = 200_000


@dataclass(frozen=True)
class GoldTuple:
    items: tuple[str, ...]
    best: str
    worst: str


def _column(path: Path, header: list[str], wanted: str | None, candidates: tuple[str, ...], what: str) -> int:
    lower = [h.lower() for h in header]
    names = (wanted,) if wanted else candidates
    for name in names:
        if name.lower() in lower:
            return lower.index(name.lower())
    flag = "--id-column" if what == "id" else "--text-column"
    raise DataError(
        f"{path}: no {what} column (looked for {', '.join(names)}; header is {', '.join(header)}); "
        f"name the column with {flag}"
    )


def check_item_id(value: str, where: str) -> str:
    value = value.strip()
    if not value:
        raise DataError(f"{where}: empty item id; fill it in or remove the row")
    if not ID_PATTERN.fullmatch(value):
        raise DataError(
            f"{where}: item id {value[:40]!r} is not a plain id (letters, digits, _ . : -, "
            "starting with a letter, digit or _; at most 100 characters); rename it"
        )
    return value


def read_items(path: Path, id_column: str | None = None, text_column: str | None = None) -> list[tuple[str, str]]:
    """``[(item_id, text)]`` in file order; ids unique, texts non-empty."""
    table = read_table(path, what="items")
    header = table.header
    id_i = _column(path, header, id_column, ID_COLUMNS, "id")
    text_i = _column(path, header, text_column, TEXT_COLUMNS, "text")
    items: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for n, row in zip(table.row_numbers, table.rows):
        item_id = check_item_id(row[id_i], f"{path} row {n} column {header[id_i]}")
        text = row[text_i]
        if not text.strip():
            raise DataError(
                f"{path} row {n} column {header[text_i]}: empty text for item {item_id}; remove the row "
                "or give it a text"
            )
        if len(text) > MAX_TEXT_CHARS:
            raise DataError(
                f"{path} row {n} column {header[text_i]}: text of {len(text)} characters "
                f"(at most {MAX_TEXT_CHARS}); shorten it"
            )
        if item_id in seen:
            raise DataError(
                f"{path} row {n} column {header[id_i]}: item id {item_id} already used on row "
                f"{seen[item_id]}; ids must be unique"
            )
        seen[item_id] = n
        items.append((item_id, text))
    if not items:
        raise DataError(f"{path}: no items (only a header row)")
    return items


def _item_columns(path: Path, header: list[str]) -> list[int]:
    lower = [h.lower() for h in header]
    cols = []
    k = 1
    while f"item{k}" in lower:
        cols.append(lower.index(f"item{k}"))
        k += 1
    if len(cols) < 3:
        raise DataError(
            f"{path}: needs columns Item1, Item2, Item3[, Item4 ...] (header is {', '.join(header)}); "
            "a best-worst tuple has at least 3 items"
        )
    return cols


def _read_tuple(
    path: Path, header: list[str], row: list[str], cols: list[int], n: int, known: set[str]
) -> tuple[str, ...]:
    ids = []
    for c in cols:
        where = f"{path} row {n} column {header[c]}"
        item_id = check_item_id(row[c], where)
        if item_id not in known:
            raise DataError(f"{where}: item {item_id} is not in the items file; add it there or fix the id")
        ids.append(item_id)
    if len(set(ids)) != len(ids):
        raise DataError(f"{path} row {n}: the tuple {', '.join(ids)} holds an item twice; each item once per tuple")
    return tuple(ids)


def read_tuples(path: Path, known: set[str]) -> list[tuple[str, ...]]:
    """Distinct tuples in first-seen order (an annotations file repeats each tuple: rows with the
    same set of items are one tuple, shown in the order of its first row)."""
    table = read_table(path, what="tuples")
    header = table.header
    cols = _item_columns(path, header)
    tuples, seen = [], set()
    for n, row in zip(table.row_numbers, table.rows):
        tup = _read_tuple(path, header, row, cols, n, known)
        key = frozenset(tup)
        if key not in seen:
            seen.add(key)
            tuples.append(tup)
    if not tuples:
        raise DataError(f"{path}: no tuples (only a header row)")
    return tuples


def read_gold(path: Path, known: set[str]) -> list[GoldTuple]:
    """Gold tuples: Item1..ItemK plus BestItem (most negatively biased) and WorstItem (least)."""
    table = read_table(path, what="gold tuples")
    header = table.header
    cols = _item_columns(path, header)
    lower = [h.lower() for h in header]
    for name in ("bestitem", "worstitem"):
        if name not in lower:
            raise DataError(
                f"{path}: no {name.replace('item', 'Item').capitalize()} column (header is "
                f"{', '.join(header)}); gold tuples need the expected BestItem and WorstItem"
            )
    best_i, worst_i = lower.index("bestitem"), lower.index("worstitem")
    gold: list[GoldTuple] = []
    seen: dict[frozenset[str], int] = {}
    for n, row in zip(table.row_numbers, table.rows):
        tup = _read_tuple(path, header, row, cols, n, known)
        best = row[best_i].strip()
        worst = row[worst_i].strip()
        for value, col in ((best, header[best_i]), (worst, header[worst_i])):
            if value not in tup:
                raise DataError(
                    f"{path} row {n} column {col}: {value!r} is not one of the tuple's items {', '.join(tup)}"
                )
        if best == worst:
            raise DataError(f"{path} row {n}: BestItem and WorstItem are both {best}; they must differ")
        key = frozenset(tup)
        if key in seen:
            raise DataError(f"{path} row {n}: same items as gold row {seen[key]}; list each gold tuple once")
        seen[key] = n
        gold.append(GoldTuple(tup, best, worst))
    if not gold:
        raise DataError(f"{path}: no gold tuples (only a header row)")
    return gold


def read_instructions(path: Path) -> str:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file (--instructions takes a UTF-8 text or Markdown file)")
    data = path.read_bytes()
    if len(data) > MAX_INSTRUCTIONS_BYTES:
        raise DataError(f"{path}: {len(data)} bytes; instructions are limited to {MAX_INSTRUCTIONS_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from exc
    if not text.strip():
        raise DataError(f"{path}: the instructions file is empty")
    return text
