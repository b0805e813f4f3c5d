"""Texts with human degree-of-bias scores in [0, 1]: the released Fifty Shades of Bias texts with
their normalised BWS scores, or any CSV with ``id, text, score`` (other BWS datasets)."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

from biaslab.data import data_path
from biaslab.errors import DataError
from biaslab.spreadsheet_cells import read_cell

TEXTS_FILE = "fsb/FSB_text.csv"
SCORES_FILE = "fsb/fsb_final_scores.csv"
ITEM_COLUMNS = ("id", "text", "score")


@dataclass(frozen=True)
class ScoredText:
    id: str
    text: str
    score: float  # normalised degree of bias, 0 = least, 1 = most negatively biased


def _reader(path: Path, what: str) -> tuple[csv.DictReader, list[str]]:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {what} {path} ({exc}); it must be a UTF-8 CSV") from None
    reader = csv.DictReader(io.StringIO(text))
    return reader, [c.strip() for c in reader.fieldnames or []]


def _score(raw: str | None, path: Path, line: int, column: str) -> float:
    try:
        value = float((raw or "").strip())
    except ValueError:
        raise DataError(f"{path}, line {line}: {column} {raw!r} is not a number") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise DataError(
            f"{path}, line {line}: {column} {raw!r} is outside [0, 1]; give normalised scores "
            "(a BWS counting score s in [-1, 1] becomes (s + 1) / 2)"
        )
    return value


def load_items_file(path: Path) -> list[ScoredText]:
    """An items CSV with columns ``id, text, score`` (score in [0, 1]; extra columns are ignored)."""
    path = Path(path)
    reader, columns = _reader(path, "items file")
    missing = [c for c in ITEM_COLUMNS if c not in columns]
    if missing:
        raise DataError(
            f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(columns) or 'none'}); "
            "an items file needs columns id,text,score with score in [0, 1]"
        )
    items: list[ScoredText] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(reader, start=2):
        row = {(k or "").strip(): read_cell(v) if isinstance(v, str) else v for k, v in row.items()}
        item_id, text = (row.get("id") or "").strip(), (row.get("text") or "").strip()
        if not item_id:
            raise DataError(f"{path}, line {line}: empty id")
        if item_id in seen:
            raise DataError(f"{path}, line {line}: id {item_id!r} repeats line {seen[item_id]}; ids must be unique")
        if not text:
            raise DataError(f"{path}, line {line}: empty text for id {item_id!r}")
        seen[item_id] = line
        items.append(ScoredText(item_id, text, _score(row.get("score"), path, line, "score")))
    if not items:
        raise DataError(f"{path} has no rows; an items file needs columns id,text,score")
    return items


def load_released_items() -> list[ScoredText]:
    """The 1,000 released texts (``response`` of FSB_text.csv) with ``score_normalized``."""
    scores_path = data_path(SCORES_FILE)
    reader, columns = _reader(scores_path, "scores file")
    if not {"id", "score_normalized"} <= set(columns):
        raise DataError(f"{scores_path}: expected columns id and score_normalized")
    scores = {}
    for line, row in enumerate(reader, start=2):
        scores[row["id"].strip()] = _score(row["score_normalized"], scores_path, line, "score_normalized")
    texts_path = data_path(TEXTS_FILE)
    reader, columns = _reader(texts_path, "texts file")
    items = []
    for line, row in enumerate(reader, start=2):
        uid = row["uid"].strip()
        if uid not in scores:
            raise DataError(f"{texts_path}, line {line}: uid {uid} has no score in {scores_path}")
        items.append(ScoredText(uid, row["response"].strip(), scores[uid]))
    return items
