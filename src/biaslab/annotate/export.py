"""``biaslab annotate export``: the study's annotations as a CSV that ``biaslab bws score`` reads,
and the skips beside it.

Columns: Item1..ItemK (item ids in the tuple's design order, as in the Fifty Shades of Bias
release), BestItem, WorstItem, then tuple_id, annotator, positions (the screen positions, 1-based,
at which Item1..ItemK were shown to that annotator, e.g. ``3 1 4 2``), shown_at (when the tuple was
first handed to them, UTC), submitted_at, seconds_on_task (from shown to answered), feedback
(verbatim) and construct (what was rated, e.g. "gender bias": BestItem shows the most of it). Gold
tuples are left out. The skip list (``..._skips.csv``): tuple_id, annotator, gold, Item1..ItemK,
positions, shown_at, skipped_at.

No cell can run as a spreadsheet formula (:func:`biaslab.spreadsheet_cells.safe_cell`).
"""

from __future__ import annotations

from pathlib import Path

from biaslab.annotate.db import Database
from biaslab.annotate.project import DEFAULT_CONSTRUCT
from biaslab.annotate.status import annotations_frame, skips_frame
from biaslab.errors import ConfigError
from biaslab.io import atomic_write_text
from biaslab.spreadsheet_cells import csv_text, safe_cell


def _csv(frame) -> str:
    return csv_text([list(frame.columns), *([safe_cell(v) for v in row] for row in frame.itertuples(index=False))])


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
