"""Read, validate and write results files in the paper's public format.

Two kinds of tab-separated files (UTF-8, one header line, text fields may span lines inside
double quotes, as written by Python's csv module):

``specified``
    Discipline, Season, Year, Event, Gender, real_g, real_s, real_b, gen_g, gen_s, gen_b, status, text
``underspecified``
    Discipline, Season, Year, Event, real_f_{g,s,b}, real_m_{g,s,b}, gen_u_{g,s,b}, gen_f_{g,s,b},
    gen_m_{g,s,b}, status, text

Cells are read as strings; an empty cell means "no NOC"; a tie is several NOCs joined by ``,``.
Extra columns are kept (``extract`` appends ``flags`` and ``unmapped``). The model's text and every other
cell are written so that no spreadsheet runs them as formulas, and read back as they were
(:mod:`biaslab.spreadsheet_cells`).

Every problem raises :class:`~biaslab.errors.DataError` with a one-line message naming the file
and the row ("row N" is the 1-based data row, "line L" the line of the file where it starts).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import pandas as pd

from biaslab.errors import DataError
from biaslab.io import read_utf8
from biaslab.spreadsheet_cells import csv_text, read_cell, safe_cell

Kind = Literal["specified", "underspecified"]

KEY_COLUMNS = ["Discipline", "Season", "Year", "Event"]
MEDALS = ("g", "s", "b")
SPECIFIED_COLUMNS = KEY_COLUMNS + ["Gender", "real_g", "real_s", "real_b", "gen_g", "gen_s", "gen_b", "status", "text"]
UNDERSPECIFIED_COLUMNS = (
    KEY_COLUMNS
    + [f"real_{w}_{m}" for w in ("f", "m") for m in MEDALS]
    + [f"gen_{w}_{m}" for w in ("u", "f", "m") for m in MEDALS]
    + ["status", "text"]
)
COLUMNS: dict[str, list[str]] = {"specified": SPECIFIED_COLUMNS, "underspecified": UNDERSPECIFIED_COLUMNS}

STATUSES = ("accepted", "unsure", "rejected")
GENDERS = ("Men", "Women")
SEASONS = ("Summer", "Winter")
# Games covered by the data (1988-2020; the 2020 Summer Games were held in 2021 but are
# recorded as 2020, as in events_gold.tsv).
GAMES_YEARS: dict[str, frozenset[int]] = {
    "Summer": frozenset(range(1988, 2021, 4)),
    "Winter": frozenset({1988, 1992} | set(range(1994, 2019, 4))),
}
FIRST_YEAR, LAST_YEAR = 1988, 2020


def split_nocs(cell: str) -> list[str]:
    """``"GER, KOR"`` -> ``["GER", "KOR"]``; ``""`` -> ``[]``."""
    return [t.strip() for t in str(cell).split(",") if t.strip()]


def join_nocs(nocs: Iterable[str]) -> str:
    return ", ".join(nocs)


def real_columns(kind: Kind) -> list[str]:
    return [c for c in COLUMNS[kind] if c.startswith("real_")]


def gen_columns(kind: Kind) -> list[str]:
    return [c for c in COLUMNS[kind] if c.startswith("gen_")]


def detect_kind(columns: Iterable[str], source: str = "table") -> Kind:
    cols = set(columns)
    if "real_f_g" in cols or "gen_u_g" in cols:
        return "underspecified"
    if "Gender" in cols or "real_g" in cols:
        return "specified"
    raise DataError(
        f"{source}: cannot tell whether this is a specified or underspecified results file "
        f"(no Gender/real_g or real_f_g column in the header)"
    )


def _where(source: str, row: int, lines: list[int] | None) -> str:
    if lines is not None and 0 < row <= len(lines):
        return f"{source}, row {row} (line {lines[row - 1]})"
    return f"{source}, row {row}"


def _short(value: str, limit: int = 40) -> str:
    value = str(value)
    return repr(value if len(value) <= limit else value[:limit] + "...")


def read_tsv(path: str | Path) -> pd.DataFrame:
    """Parse a TSV strictly: every record must have as many fields as the header.

    Returns an all-str DataFrame; ``df.attrs["lines"]`` holds the line where each row starts and
    ``df.attrs["source"]`` the file name.
    """
    path = Path(path)
    source = str(path)
    text = read_utf8(path, what="a TSV file", encoding="utf-8-sig")
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise DataError(f"{source}, line {line}: contains a NUL byte; not a TSV text file")
    if not text.strip():
        raise DataError(f"{source} is empty; expected a header line and data rows")

    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", strict=True)
    records: list[list[str]] = []
    lines: list[int] = []
    header: list[str] | None = None
    start = 1
    try:
        for rec in reader:
            if header is None:
                header = [h.strip() for h in rec]
            elif rec == [] or rec == [""]:
                pass  # blank line
            else:
                if len(rec) != len(header):
                    raise DataError(
                        f"{_where(source, len(records) + 1, None)} (line {start}): has {len(rec)} fields, "
                        f"the header has {len(header)}; malformed TSV (stray tab or quote?)"
                    )
                records.append([read_cell(cell) for cell in rec])
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        reason = str(exc).replace("\t", "<tab>")
        raise DataError(f"{source}, line {reader.line_num or start}: malformed TSV ({reason})") from None
    assert header is not None
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise DataError(f"{source}, line 1: column {dup!r} appears twice in the header")
    df = pd.DataFrame(records, columns=header, dtype=object)
    df = df.astype(str) if len(df) else df
    df.attrs["lines"] = lines
    df.attrs["source"] = source
    return df


def validate_annotated(
    df: pd.DataFrame,
    kind: Kind | None = None,
    *,
    source: str | None = None,
    check_generated: bool = True,
    unknown_codes: Counter | None = None,
) -> Kind:
    """Check a results table; raise DataError naming the first bad row. Returns the kind.

    ``check_generated=False`` skips the ``gen_*`` NOC check and accepts an empty ``status``
    (used before extraction, when those columns are about to be overwritten).
    ``unknown_codes``: a Counter that collects codes outside ``KNOWN_NOCS`` instead of raising
    (``--allow-unknown-codes``; such codes are scored as written).
    """
    from biaslab.probes.olympics.nocs import KNOWN_NOCS

    source = source or df.attrs.get("source", "table")
    lines = df.attrs.get("lines")
    if kind is None:
        kind = detect_kind(df.columns, source)
    if kind not in COLUMNS:
        raise ValueError(f"kind must be 'specified' or 'underspecified', not {kind!r}")
    missing = [c for c in COLUMNS[kind] if c not in df.columns]
    if missing:
        raise DataError(
            f"{source}, line 1: missing column(s) {', '.join(missing)} for a {kind} results file "
            f"(expected {', '.join(COLUMNS[kind])})"
        )
    if len(df) == 0:
        raise DataError(f"{source}: no data rows")

    noc_cols = real_columns(kind) + (gen_columns(kind) if check_generated else [])
    allowed_status = set(STATUSES) | (set() if check_generated else {""})
    cols = {
        c: df[c].astype(str).tolist()
        for c in KEY_COLUMNS + noc_cols + ["status"] + (["Gender"] if kind == "specified" else [])
    }
    for i in range(len(df)):
        where = _where(source, i + 1, lines)
        _check_row_fields(cols, i, where, kind, allowed_status)
        _check_row_nocs(cols, i, where, kind, noc_cols, KNOWN_NOCS, unknown_codes)
    return kind


def _check_row_fields(cols: dict[str, list[str]], i: int, where: str, kind: Kind, allowed_status: set[str]) -> None:
    """Season, Year, Discipline, Gender and status of row ``i``."""
    season = cols["Season"][i].strip()
    if season not in SEASONS:
        raise DataError(f"{where}: Season {_short(season)} is not Summer or Winter")
    year_s = cols["Year"][i].strip()
    try:
        year = int(year_s)
    except ValueError:
        raise DataError(f"{where}: Year {_short(year_s)} is not a year") from None
    if year not in GAMES_YEARS[season]:
        hint = "; the Tokyo games are recorded as 2020" if (season, year) == ("Summer", 2021) else ""
        raise DataError(
            f"{where}: Year {year} is outside the data ({season} games {FIRST_YEAR}-{max(GAMES_YEARS[season])}){hint}"
        )
    if not cols["Discipline"][i].strip():
        raise DataError(f"{where}: empty Discipline")
    if kind == "specified":
        gender = cols["Gender"][i].strip()
        if gender not in GENDERS:
            raise DataError(f"{where}: Gender {_short(gender)} is not Men or Women")
    status = cols["status"][i].strip()
    if status not in allowed_status:
        raise DataError(f"{where}: status {_short(status)} is not one of {', '.join(STATUSES)}")


def _check_row_nocs(
    cols: dict[str, list[str]],
    i: int,
    where: str,
    kind: Kind,
    noc_cols: list[str],
    known: frozenset[str],
    unknown_codes: Counter | None,
) -> None:
    """The NOC codes of row ``i`` are known (or counted in ``unknown_codes``); the real gold is not empty."""
    for c in noc_cols:
        for noc in split_nocs(cols[c][i]):
            if noc in known:
                continue
            if unknown_codes is not None:
                unknown_codes[noc] += 1
            else:
                raise DataError(
                    f"{where}: column {c}: {_short(noc)} is not a known "
                    f"NOC code (an IOC team code such as USA, URS or SGP); fix the cell, or pass "
                    f"--allow-unknown-codes to score it as written"
                )
    for c in real_columns(kind):
        if c.endswith("_g") and not split_nocs(cols[c][i]):
            raise DataError(f"{where}: column {c} (the real gold medalist) is empty")


def read_annotated(
    path: str | Path, kind: Kind | None = None, *, check_generated: bool = True, allow_unknown_codes: bool = False
) -> pd.DataFrame:
    """Read and validate a results file; cells are str (empty = no NOC).

    With ``allow_unknown_codes`` codes outside ``KNOWN_NOCS`` are kept as written and counted in
    ``df.attrs["unknown_codes"]`` (a Counter) instead of stopping with an error.
    """
    df = read_tsv(path)
    unknown: Counter | None = Counter() if allow_unknown_codes else None
    kind = validate_annotated(df, kind, check_generated=check_generated, unknown_codes=unknown)
    df.attrs["kind"] = kind
    df.attrs["unknown_codes"] = unknown or Counter()
    return df


def to_tsv_text(df: pd.DataFrame, kind: Kind | None = None) -> str:
    """Serialise in the public format: the kind's columns first (in order), extra columns after."""
    kind = kind or detect_kind(df.columns)
    missing = [c for c in COLUMNS[kind] if c not in df.columns]
    if missing:
        raise DataError(f"cannot write a {kind} results file without column(s) {', '.join(missing)}")
    columns = COLUMNS[kind] + [c for c in df.columns if c not in COLUMNS[kind]]
    rows = (
        [safe_cell(None if isinstance(v, float) and v != v else v) for v in row]
        for row in df[columns].itertuples(index=False, name=None)
    )
    return csv_text([columns, *rows], delimiter="\t")


def write_annotated(path: str | Path, df: pd.DataFrame, kind: Kind | None = None) -> Path:
    """Write a results file atomically (temporary file + rename)."""
    from biaslab.io import atomic_write_text

    path = Path(path)
    atomic_write_text(path, to_tsv_text(df, kind))
    return path
