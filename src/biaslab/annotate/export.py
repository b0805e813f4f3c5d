"""``biaslab annotate export``: the study's annotations as a CSV that ``biaslab bws score`` reads,
and the skips beside it.

Columns: Item1..ItemK (item ids in the tuple's design order, as in the Fifty Shades of Bias
release), BestItem, WorstItem, then tuple_id, annotator, positions (the screen positions, 1-based,
at which Item1..ItemK were shown to that annotator, e.g. ``3 1 4 2``), shown_at (when the tuple was
first handed to them, UTC), submitted_at, seconds_on_task (from shown to answered), feedback
(verbatim) and construct (what was rated, e.g. "gender bias": BestItem shows the most of it). Gold
tuples are left out. The skip list (``..._skips.csv``): tuple_id, annotator, gold, Item1..ItemK,
positions, shown_at, skipped_at.

No cell can run as a spreadsheet formula: a cell whose first character is a control or invisible
format character (tab, line break, NUL, zero-width space, byte-order mark...), or whose first
visible character is, after Unicode compatibility folding (fullwidth ``＝`` is ``=``), one of
``= + - @``, gets a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from pathlib import Path

from biaslab.annotate.db import Database
from biaslab.annotate.project import DEFAULT_CONSTRUCT
from biaslab.annotate.status import annotations_frame, skips_frame
from biaslab.errors import ConfigError
from biaslab.io import atomic_write_text

FORMULA_START = ("=", "+", "-", "@")


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def safe_cell(value) -> str:
    text = "" if value is None else str(value)
    if not text:
        return text
    if unicodedata.category(text[0]) in ("Cc", "Cf"):
        return "'" + text
    first = next((ch for ch in text if not _invisible(ch)), "")
    if first and unicodedata.normalize("NFKC", first).startswith(FORMULA_START):
        return "'" + text
    return text


def _csv(frame) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(list(frame.columns))
    for row in frame.itertuples(index=False):
        writer.writerow([safe_cell(v) for v in row])
    return buffer.getvalue()


def skips_path(out: Path) -> Path:
    out = Path(out)
    return out.with_name(f"{out.stem}_skips{out.suffix or '.csv'}")


def export_csv(db: Database, out: Path, *, include_flagged: bool = True) -> tuple[int, int]:
    """Write the annotations and the skip list atomically; returns (annotations, skips) written."""
    if Path(out).is_dir():
        raise ConfigError(f"--out {out} is a folder; give the CSV file to write, e.g. {Path(out) / 'annotations.csv'}")
    frame, skips = annotations_frame(db, include_flagged=include_flagged), skips_frame(db)
    frame["construct"] = db.read_meta().get("construct") or DEFAULT_CONSTRUCT
    atomic_write_text(Path(out), _csv(frame))
    atomic_write_text(skips_path(out), _csv(skips))
    return len(frame), len(skips)
