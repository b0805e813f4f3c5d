"""``biaslab annotate export``: the study's annotations as a CSV that ``biaslab bws score`` reads.

Columns: Item1..ItemK, BestItem, WorstItem (item ids, as in the Fifty Shades of Bias release),
then annotator, submitted_at, feedback. Gold tuples are left out. No cell can run as a
spreadsheet formula: a cell that would start with = + - @ (after any blank), a tab or a line
break gets a leading apostrophe. Item ids and names are validated when they enter the project
so that only free text (feedback) can ever need it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from biaslab.annotate.db import Database
from biaslab.annotate.status import annotations_frame
from biaslab.errors import ConfigError
from biaslab.io import atomic_write_text

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def safe_cell(value) -> str:
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_START) or text.lstrip(" \u00a0").startswith(FORMULA_START[:4]):
        return "'" + text
    return text


def export_csv(db: Database, out: Path, *, include_flagged: bool = True) -> int:
    """Write the CSV atomically; returns the number of annotations written."""
    if Path(out).is_dir():
        raise ConfigError(f"--out {out} is a folder; give the CSV file to write, e.g. {Path(out) / 'annotations.csv'}")
    frame = annotations_frame(db, include_flagged=include_flagged)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(list(frame.columns))
    for row in frame.itertuples(index=False):
        writer.writerow([safe_cell(v) for v in row])
    atomic_write_text(Path(out), buffer.getvalue())
    return len(frame)
