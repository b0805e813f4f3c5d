"""Reading the judge's scores (PRED) and the people's scores (GOLD) for ``biaslab ppi``.

Formats (``auto`` picks one from the path):

* ``fsb-judge``: a finished run folder of ``biaslab run fsb-judge`` (``results.json`` of that probe
  and ``attempts.jsonl``), or its ``attempts.jsonl`` itself (any ``.jsonl`` path). An item's score
  is the mean of the judge's usable scores (``judge_score``) over the repetitions that rated it;
  undetected answers (``judge_score`` null) are left out of that mean, and an item with no usable
  score in any repetition has no score (NaN; :mod:`biaslab.ppi.analysis` imputes it). PRED only.
* ``bws``: a scores file of ``biaslab bws score`` (``id, score, score_normalized, ...``) or the
  Fifty Shades of Bias release (``id, score, score_normalized``): any table with ``score_normalized``.
  The score is ``score_normalized`` (in [0, 1], the fsb-judge scale) unless a column is named.
* ``csv``: any table (CSV, TSV or .xlsx, read by :func:`biaslab.io.read_table`) with an id column
  (the first of ``id, uid, item_id, item``) and a ``score`` column (or the one named).

In PRED an empty cell (or ``NA``, ``nan``, ``null``, ``none``) is an item the judge gave no usable
score; in GOLD it is an error. Every other problem (a missing column, a repeated id, a score that is
no finite number) is a one-line :class:`~biaslab.errors.DataError` naming the file and row.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from biaslab.errors import ConfigError, DataError
from biaslab.io import TextTable, read_table

FORMATS = ("auto", "csv", "bws", "fsb-judge")
ID_COLUMNS = ("id", "uid", "item_id", "item")
MISSING = frozenset({"", "na", "nan", "null", "none", "n/a"})
BWS_COLUMN = "score_normalized"


@dataclass(frozen=True)
class ScoreTable:
    """One score per item, as read from a file."""

    source: str  # the path as given
    format: str  # csv | bws | fsb-judge
    column: str  # the score column used
    ids: tuple[str, ...]
    scores: np.ndarray  # float, NaN where the judge gave no usable score (PRED only)
    groups: tuple[str, ...] | None = None  # the --by column's value per item, when read from this file
    detail: str = ""  # how the scores were read, for the output

    def describe(self) -> dict[str, str]:
        return {"source": self.source, "format": self.format, "column": self.column, "detail": self.detail}


def detect_format(path: Path) -> str:
    """``fsb-judge`` for a folder or a ``.jsonl`` file, ``bws`` for a table with ``score_normalized``,
    else ``csv``."""
    path = Path(path)
    if path.is_dir() or path.suffix.lower() == ".jsonl":
        return "fsb-judge"
    if path.is_file():
        table = read_table(path, what="scores")
        if table.index(BWS_COLUMN) is not None:
            return "bws"
    return "csv"


def read_scores(
    path: str | Path,
    *,
    role: str,
    fmt: str = "auto",
    column: str | None = None,
    by: str | None = None,
    flag: str | None = None,
) -> ScoreTable:
    """The scores of ``path`` for ``role`` ``"PRED"`` or ``"GOLD"`` (see the module docstring);
    ``by`` also reads that column of a table as each item's group. ``flag`` names the option that
    chooses the score column, for messages."""
    path = Path(path)
    flag = flag or f"--{role.lower()}-column"
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r} for {role}; use one of {', '.join(FORMATS)}")
    if not path.exists():
        raise DataError(f"{role} {path}: no such file or folder")
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "fsb-judge":
        if role != "PRED":
            raise DataError(
                f"{role} {path} is an fsb-judge run: it holds the judge's scores; give it as --pred "
                "and the human scores (a CSV id,score or a `biaslab bws score` output) as --gold"
            )
        if by is not None:
            raise DataError(
                f"{path}: an fsb-judge run has no column {by!r} for --by; give the groups in a table "
                "with --groups FILE (an id column and the --by column, e.g. FSB_text.csv)"
            )
        if column is not None:
            raise ConfigError(f"{flag} applies to tables; an fsb-judge run's score is always judge_score")
        return read_fsb_judge(path)
    table = read_table(path, what=f"{role} scores")
    return _from_table(table, str(path), role=role, fmt=fmt, column=column, by=by, flag=flag)


def _columns(table: TextTable) -> str:
    return ", ".join(table.header) or "none"


def id_column_of(table: TextTable, source: str, role: str) -> int:
    j = next((table.index(c) for c in ID_COLUMNS if table.index(c) is not None), None)
    if j is None:
        raise DataError(
            f"{role} {source}: no id column (looked for {', '.join(ID_COLUMNS)}; columns found: {_columns(table)})"
        )
    return j


def _from_table(
    table: TextTable, source: str, *, role: str, fmt: str, column: str | None, by: str | None, flag: str
) -> ScoreTable:
    wanted = column or (BWS_COLUMN if fmt == "bws" else "score")
    j_score = table.index(wanted)
    if j_score is None:
        hint = (
            f"a `biaslab bws score` output has {BWS_COLUMN}" if fmt == "bws" else f"name the score column with {flag}"
        )
        raise DataError(f"{role} {source}: no {wanted!r} column (columns found: {_columns(table)}); {hint}")
    j_id = id_column_of(table, source, role)
    j_by = None
    if by is not None:
        j_by = table.index(by)
        if j_by is None:
            raise DataError(f"{role} {source}: no column {by!r} for --by (columns found: {_columns(table)})")
    if not table.rows:
        raise DataError(f"{role} {source} has a header but no rows; it needs one row per item")
    ids: list[str] = []
    scores: list[float] = []
    groups: list[str] = []
    seen: dict[str, int] = {}
    name = table.header[j_score]
    for row, line in zip(table.rows, table.row_numbers):
        item = row[j_id].strip()
        if not item:
            raise DataError(f"{role} {source}, row {line}: empty id")
        if item in seen:
            raise DataError(f"{role} {source}, row {line}: id {item!r} repeats row {seen[item]}; ids must be unique")
        seen[item] = line
        scores.append(parse_score(row[j_score], role=role, where=f"{role} {source}, row {line}", column=name))
        ids.append(item)
        if j_by is not None:
            group = row[j_by].strip()
            if not group:
                raise DataError(
                    f"{role} {source}, row {line}: empty {by!r} (--by) for id {item!r}; every item needs a group"
                )
            groups.append(group)
    detail = f"column {name}" + (" (the normalised BWS score, in [0, 1])" if name.lower() == BWS_COLUMN else "")
    return ScoreTable(
        source,
        fmt,
        name,
        tuple(ids),
        np.array(scores, dtype=float),
        tuple(groups) if j_by is not None else None,
        detail,
    )


def parse_score(raw: str, *, role: str, where: str, column: str) -> float:
    """A score cell: a finite number; a missing-value marker gives NaN in PRED and an error in GOLD."""
    text = (raw or "").strip()
    if text.lower() in MISSING:
        if role == "PRED":
            return math.nan
        raise DataError(
            f"{where}: no {column} (empty); every GOLD row needs a human score (leave out the rows nobody rated)"
        )
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{where}: {column} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise DataError(f"{where}: {column} {text!r} is not a finite number")
    return value


def read_fsb_judge(path: Path) -> ScoreTable:
    """Per item, the mean of the judge's usable scores over the repetitions of an fsb-judge run."""
    path = Path(path)
    if path.is_dir():
        attempts, results = path / "attempts.jsonl", path / "results.json"
        if not attempts.is_file() or not results.is_file():
            raise DataError(
                f"PRED {path} is not a finished fsb-judge run folder (it needs results.json and "
                "attempts.jsonl); run `biaslab run fsb-judge --out DIR` first, or give a CSV id,score"
            )
        try:
            probe = json.loads(results.read_text(encoding="utf-8")).get("probe")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            raise DataError(f"{results} is not valid JSON; run the probe again to rewrite it") from None
        if probe != "fsb-judge":
            raise DataError(
                f"PRED {path} is a run of {probe!r}, not of fsb-judge; only fsb-judge runs hold judge scores per item"
            )
    else:
        attempts = path
    sums: dict[str, list[float]] = {}
    reps: set[int] = set()
    try:
        lines = attempts.read_text(encoding="utf-8").split("\n")  # an answer may hold other line breaks
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {attempts} ({exc}); it must be the UTF-8 attempts.jsonl of a run") from None
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise DataError(f"{attempts}, line {line_no}: not valid JSON") from None
        if not isinstance(row, dict) or "item_id" not in row or "judge_score" not in row:
            found = ", ".join(map(str, row)) if isinstance(row, dict) else type(row).__name__
            raise DataError(
                f"{attempts}, line {line_no}: not an fsb-judge attempt (needs item_id and judge_score; "
                f"found: {found or 'none'})"
            )
        values = sums.setdefault(str(row["item_id"]).strip(), [])
        if row.get("repetition") is not None:
            reps.add(int(row["repetition"]))
        score = row["judge_score"]
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                raise DataError(f"{attempts}, line {line_no}: judge_score {score!r} is not a number")
            values.append(float(score))
    if not sums:
        raise DataError(f"{attempts} has no attempts; the run rated no item")
    ids = tuple(sums)
    scores = np.array([float(np.mean(v)) if v else math.nan for v in sums.values()])
    n_none = int(np.isnan(scores).sum())
    detail = (
        f"judge_score of {attempts.name}: per item the mean of its usable scores over "
        f"{len(reps) or 1} repetition(s); {n_none} item(s) had none (undetected every time)"
    )
    return ScoreTable(str(path), "fsb-judge", "judge_score", ids, scores, None, detail)


def read_groups(path: str | Path, by: str) -> dict[str, str]:
    """``{id: group}`` from a table with an id column and the ``by`` column (``--groups``)."""
    table = read_table(Path(path), what="groups")
    source = str(path)
    j_id = id_column_of(table, source, "groups file")
    j_by = table.index(by)
    if j_by is None:
        raise DataError(f"groups file {source}: no column {by!r} for --by (columns found: {_columns(table)})")
    out: dict[str, str] = {}
    for row, line in zip(table.rows, table.row_numbers):
        item, group = row[j_id].strip(), row[j_by].strip()
        if not item:
            continue
        if not group:
            raise DataError(f"groups file {source}, row {line}: empty {by!r} for id {item!r}; every item needs a group")
        if item in out and out[item] != group:
            raise DataError(
                f"groups file {source}, row {line}: id {item!r} is in two groups ({out[item]!r} and {group!r})"
            )
        out[item] = group
    return out
