"""The study's files: survey answers, human predicates, model predicates (CSV, or .xlsx with the
same columns).

* survey: ``response_id, group, identity_noun, text`` -- one row per answer to one question;
  ``identity_noun`` is what fills ``<IDENTITY NOUN>`` in the prompt ("Jews", "older people").
* human predicates: ``response_id, group, predicate`` -- one row per predicate a human extracted.
  ``response_id`` may be empty only for data sets without per-answer pairing (``--match-by group``).
* model predicates: the same three columns, then ``iteration`` and the quality flags (written by
  ``extract-predicates``; any extra columns are kept when the file is re-read).

The released predicate lists of the paper can stand in for a file by name (``winosemitism``,
``gpt-winosemitism``, ``gpt-winoqueer``, ``winoqueer-human``): their plural predicates, with no
response ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaslab.errors import DataError
from biaslab.io import atomic_write_text
from biaslab.spreadsheet_cells import csv_text, safe_cell

SURVEY_COLUMNS = ["response_id", "group", "identity_noun", "text"]
PREDICATE_COLUMNS = ["response_id", "group", "predicate"]
RELEASED = {
    "winosemitism": "winosemitism",
    "human_ws": "winosemitism",
    "gpt-winosemitism": "gpt-winosemitism",
    "gpt_ws": "gpt-winosemitism",
    "gpt-winoqueer": "gpt-winoqueer",
    "gpt_wq": "gpt-winoqueer",
    "winoqueer-human": "winoqueer-human",
    "human_wq": "winoqueer-human",
}


@dataclass(frozen=True)
class SurveyAnswer:
    response_id: str
    group: str
    identity_noun: str
    text: str
    row: int = 0


@dataclass
class PredicateRow:
    """One predicate (human or model) with where it came from; ``extra`` keeps other columns."""

    response_id: str
    group: str
    predicate: str
    row: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _records(path: Path, columns: list[str], what: str):
    from biaslab.wino.build.tables import read_table, require_columns

    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path} is a directory; give the {what} file (CSV or .xlsx)")
    if not path.exists():
        raise DataError(f"{path}: file not found (the {what} file)")
    table = read_table(path, display=str(path), what=what)
    require_columns(table, columns, str(path), f"the {what} file needs the columns {', '.join(columns)}")
    order = list(table)
    rows: dict[int, dict[str, str]] = {}
    for col in order:
        for cell in table[col]:
            rows.setdefault(cell.row, {})[col] = cell.value
    return order, [(r, rows[r]) for r in sorted(rows)]


def read_survey(path: Path) -> list[SurveyAnswer]:
    """Survey answers; every row needs an id, a group, an identity noun and a text."""
    _, rows = _records(path, SURVEY_COLUMNS, "survey")
    out: list[SurveyAnswer] = []
    seen: dict[str, int] = {}
    for row, rec in rows:
        values = {c: (rec.get(c) or "").strip() for c in SURVEY_COLUMNS}
        for col in SURVEY_COLUMNS:
            if not values[col]:
                raise DataError(
                    f"{path}, row {row}, column {col!r}: empty; every survey answer needs "
                    f"{', '.join(SURVEY_COLUMNS)} (fill it in or delete the row)"
                )
        rid = values["response_id"]
        if rid in seen:
            raise DataError(
                f"{path}, row {row}, column 'response_id': {rid!r} already used in row {seen[rid]}; "
                "response ids must be unique"
            )
        seen[rid] = row
        out.append(SurveyAnswer(rid, values["group"], values["identity_noun"], values["text"], row))
    if not out:
        raise DataError(f"{path}: no survey answers (only a header row)")
    return out


def read_predicates(
    path: Path | str, *, what: str = "predicates", need_ids: bool = True, keep_empty: bool = False
) -> list[PredicateRow]:
    """Predicate rows; a released list by name (see module doc) when ``path`` is not a file."""
    if str(path) in RELEASED and not Path(path).exists():
        return released_predicates(RELEASED[str(path)])
    order, rows = _records(Path(path), PREDICATE_COLUMNS, what)
    out = []
    for row, rec in rows:
        rid, group = (rec.get("response_id") or "").strip(), (rec.get("group") or "").strip()
        pred = (rec.get("predicate") or "").strip()
        if not group:
            raise DataError(f"{path}, row {row}, column 'group': empty; every predicate needs its group")
        if need_ids and not rid:
            raise DataError(
                f"{path}, row {row}, column 'response_id': empty; give the survey answer's id "
                "(or use --match-by group for files without ids)"
            )
        if not pred and not keep_empty:
            continue
        extra = {c: rec.get(c, "") for c in order if c not in PREDICATE_COLUMNS}
        out.append(PredicateRow(rid, group, pred, row, extra))
    return out


def released_predicates(benchmark: str) -> list[PredicateRow]:
    """The plural predicates of a published benchmark's components, without response ids."""
    from biaslab.wino.build.originals import load_original

    comps = load_original(benchmark)
    out = []
    for p in comps.predicates:
        cell = p.plural or p.singular
        if cell is None or not cell.value.strip():
            continue
        out.append(PredicateRow("", p.group, cell.value.strip(), cell.row, {"source": cell.where()}))
    return out


def check_ids(rows: Sequence[PredicateRow], survey: Sequence[SurveyAnswer], path: Path | str) -> None:
    """Every predicate's response_id must be a survey id, with the survey's group."""
    by_id = {a.response_id: a for a in survey}
    for r in rows:
        a = by_id.get(r.response_id)
        if a is None:
            raise DataError(
                f"{path}, row {r.row}, column 'response_id': {r.response_id!r} is not an id of the "
                "survey file; the predicates file must use the survey's response ids"
            )
        if a.group != r.group:
            raise DataError(
                f"{path}, row {r.row}, column 'group': {r.group!r}, but the survey gives response "
                f"{r.response_id!r} the group {a.group!r}"
            )


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> Path:
    """Write a UTF-8 CSV atomically (a crash never leaves half a file)."""
    text = csv_text([list(columns), *([_cell(r.get(c)) for c in columns] for r in rows)])
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path} is a directory; give a file name ending in .csv")
    atomic_write_text(path, text)
    return path


def _cell(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return f"{v:.4f}"
    if isinstance(v, str):  # a model's predicates and answers: never a formula (read back as written)
        return safe_cell(v)
    return "" if v is None else v
