"""Best-worst annotations in the released layout: reading, validation, and an indexed form.

Layout: one row per annotation with columns ``Item1..ItemK`` (the ids shown, K >= 2),
``BestItem`` (chosen as having the most of the property) and ``WorstItem`` (the least). Any other
column (annotator, feedback, time...) is kept by :func:`read_annotations` and ignored by scoring.
Ids are read as text, trimmed, so ``007`` and ``7`` are different items.

A tuple's identity is the *set* of its ids: two annotations of the same four items shown in a
different order count as annotations of the same tuple (annotation tools often shuffle the order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from biaslab.errors import DataError
from biaslab.io import read_table as read_text_table

__all__ = [
    "read_annotations",
    "read_table",
    "read_items",
    "check_known_ids",
    "validate_annotations",
    "item_columns",
    "BwsData",
    "index_annotations",
    "sort_ids",
]

_ITEM_COL = re.compile(r"^Item(\d+)$")


def item_columns(columns, source: str = "annotations") -> list[str]:
    """``["Item1", ..., "ItemK"]`` as present in ``columns`` (must be consecutive from 1, K >= 2)."""
    numbers = sorted(int(m.group(1)) for c in columns if (m := _ITEM_COL.match(str(c))))
    if not numbers:
        raise DataError(
            f"{source}: no Item1..ItemK columns (found: {', '.join(map(str, columns)) or 'none'}); "
            f"the layout is Item1..Item4, BestItem, WorstItem"
        )
    if numbers != list(range(1, len(numbers) + 1)) or len(numbers) < 2:
        raise DataError(
            f"{source}: item columns must be Item1..ItemK with K >= 2 and no gaps "
            f"(found {', '.join(f'Item{i}' for i in numbers)})"
        )
    return [f"Item{i}" for i in numbers]


def read_table(path: str | Path, what: str = "table") -> pd.DataFrame:
    """A CSV, TSV or .xlsx table as strings, empty cells as "" (rules: :func:`biaslab.io.read_table`).

    ``df.attrs["lines"]`` holds the file row of each frame row, so that messages name the right
    line even when blank rows were skipped.
    """
    table = read_text_table(path, what=what)
    df = pd.DataFrame(table.rows, columns=table.header, dtype=str)
    df.attrs["lines"] = list(table.row_numbers)
    return df


def _line(df: pd.DataFrame, r: int, first_line: int = 2) -> int:
    """The file line of frame row ``r``: from ``attrs["lines"]`` when the frame came from a file."""
    lines = df.attrs.get("lines")
    if lines is not None and len(lines) == len(df):
        return int(lines[r])
    return r + first_line


ID_COLUMNS = ("id", "uid", "item_id", "item")  # looked for, in this order, when no id column is named


def read_items(path: str | Path, id_column: str | None = None) -> pd.DataFrame:
    """An items/texts file with a unique, non-empty ``id_column`` (ids as stripped strings).

    Without ``id_column``, the first of :data:`ID_COLUMNS` the header has (any case) is the id
    column (the Fifty Shades of Bias file's ``uid``). The frame's ``attrs["id_column"]`` names it.
    """
    df = read_table(path, "items")
    if id_column is None:
        lower = {str(c).lower(): c for c in df.columns}
        id_column = next((lower[c] for c in ID_COLUMNS if c in lower), None)
        if id_column is None:
            raise DataError(
                f"{path}: no id column (looked for {', '.join(ID_COLUMNS)}; found: "
                f"{', '.join(map(str, df.columns))}); name the id column with --id-column"
            )
    elif id_column not in df.columns:
        raise DataError(
            f"{path}: no {id_column!r} column (found: {', '.join(map(str, df.columns))}); "
            f"name the id column with --id-column"
        )
    if len(df) == 0:
        raise DataError(f"{path}: no rows (only a header); add one row per item")
    ids = df[id_column].astype(str).str.strip()
    empty = np.flatnonzero((ids == "").to_numpy())
    if empty.size:
        raise DataError(f"{path}: line {_line(df, int(empty[0]))}: empty {id_column}; every item needs an id")
    dup = np.flatnonzero(ids.duplicated().to_numpy())
    if dup.size:
        r = int(dup[0])
        raise DataError(
            f"{path}: line {_line(df, r)}: {id_column} {ids.iat[r]} occurs a second time; ids must be unique"
        )
    out = df.copy()
    out[id_column] = ids
    out.attrs["id_column"] = id_column
    return out


def read_annotations(path: str | Path) -> pd.DataFrame:
    """Read a CSV, TSV or .xlsx file of annotations (see :func:`read_table`) and validate it.

    Raises :class:`~biaslab.errors.DataError` with the file and line of the first problem.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: annotations file not found; pass a CSV with Item1..Item4, BestItem, WorstItem")
    df = read_table(path, "annotations")
    return validate_annotations(df, source=str(path), first_line=2)


def check_known_ids(df: pd.DataFrame, known: set[str], *, source: str, known_source: str) -> None:
    """DataError at the first annotation that names an id missing from ``known`` (e.g. a texts file)."""
    cols = item_columns(df.columns, source)
    values = df[cols].to_numpy(dtype=object).astype(str)
    unknown = ~np.isin(values, np.array(sorted(known), dtype=object).astype(str))
    bad = np.flatnonzero(unknown.any(axis=1))
    if bad.size:
        r = int(bad[0])
        item = values[r][unknown[r]][0]
        raise DataError(
            f"{source}: line {_line(df, r)}: id {item} is not in {known_source}; "
            f"annotate only items that the items file lists"
        )


def validate_annotations(df: pd.DataFrame, *, source: str = "annotations", first_line: int = 2) -> pd.DataFrame:
    """Check an annotations frame; return a copy with stripped string ids (other columns untouched).

    Messages say ``{source}: line L``: L from ``df.attrs["lines"]`` when the frame was read from a
    file (see :func:`read_table`), else the row position plus ``first_line`` (2 for a CSV with a
    header).
    """
    cols = item_columns(df.columns, source)
    missing = [c for c in ("BestItem", "WorstItem") if c not in df.columns]
    if missing:
        raise DataError(
            f"{source}: missing column(s) {', '.join(missing)}; the layout is {', '.join(cols)}, BestItem, WorstItem"
        )
    if len(df) == 0:
        raise DataError(f"{source}: no annotations (only a header); add one row per annotation")
    out = df.copy()
    for c in [*cols, "BestItem", "WorstItem"]:
        out[c] = out[c].map(_id_text)
    items = out[cols].to_numpy(dtype=object)
    best = out["BestItem"].to_numpy(dtype=object)
    worst = out["WorstItem"].to_numpy(dtype=object)

    def fail(row: int, msg: str) -> None:
        raise DataError(f"{source}: line {_line(df, row, first_line)}: {msg}")

    empty = np.flatnonzero((items == "").any(axis=1) | (best == "") | (worst == ""))
    if empty.size:
        r = int(empty[0])
        col = next(c for c in [*cols, "BestItem", "WorstItem"] if out[c].iat[r] == "")
        fail(r, f"empty {col}; every annotation needs all item ids and a best and a worst id")
    srt = np.sort(items.astype(str), axis=1)
    rep = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    if rep.size:
        r = int(rep[0])
        dup = srt[r][1:][srt[r][1:] == srt[r][:-1]][0]
        fail(r, f"id {dup} appears twice in the tuple; a tuple must show {len(cols)} different items")
    same = np.flatnonzero(best == worst)
    if same.size:
        r = int(same[0])
        fail(r, f"BestItem and WorstItem are both {best[r]}; the best and the worst must be different items")
    for name, chosen in (("BestItem", best), ("WorstItem", worst)):
        outside = np.flatnonzero(~(items == chosen[:, None]).any(axis=1))
        if outside.size:
            r = int(outside[0])
            fail(r, f"{name} {chosen[r]} is not one of the tuple's items ({', '.join(items[r])})")
    return out


def _id_text(value) -> str:
    """An id cell as text: missing -> "", 7.0 (an int column that pandas made float) -> "7"."""
    if value is None:
        return ""
    if isinstance(value, float):
        if np.isnan(value):
            return ""
        if value.is_integer():
            return str(int(value))
    return str(value).strip()


def sort_ids(ids) -> list[str]:
    """Ids in natural order: numerically when every id is an integer, else as text."""
    ids = list(ids)
    if all(re.fullmatch(r"-?\d+", i) for i in ids):
        return sorted(ids, key=int)
    return sorted(ids)


@dataclass(frozen=True)
class BwsData:
    """Annotations as integer arrays (rows = annotations)."""

    ids: np.ndarray  # (n_items,) id strings, natural order
    items: np.ndarray  # (A, K) item indices
    best: np.ndarray  # (A,)
    worst: np.ndarray  # (A,)
    tuple_of: np.ndarray  # (A,) index of the annotation's tuple (a tuple = a set of items)
    n_tuples: int

    @property
    def n_items(self) -> int:
        return int(self.ids.size)

    @property
    def n_annotations(self) -> int:
        return int(self.best.size)


def index_annotations(df: pd.DataFrame) -> BwsData:
    """Integer-indexed form of a validated annotations frame."""
    cols = item_columns(df.columns)
    raw = df[cols].to_numpy(dtype=object).astype(str)
    ids = np.array(sort_ids(np.unique(raw).tolist()), dtype=object)
    lookup = {v: i for i, v in enumerate(ids.tolist())}
    items = np.vectorize(lookup.__getitem__, otypes=[np.int64])(raw)
    best = np.array([lookup[v] for v in df["BestItem"].astype(str)], dtype=np.int64)
    worst = np.array([lookup[v] for v in df["WorstItem"].astype(str)], dtype=np.int64)
    _, tuple_of = np.unique(np.sort(items, axis=1), axis=0, return_inverse=True)
    tuple_of = tuple_of.reshape(-1)
    return BwsData(ids=ids, items=items, best=best, worst=worst, tuple_of=tuple_of, n_tuples=int(tuple_of.max()) + 1)
