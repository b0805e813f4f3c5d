"""The pairs CSV: writing a built benchmark, reading any pairs file (CrowS-Pairs included).

A pairs file needs ``sent_more`` and ``sent_less``; ``target_ID`` (the group; "all" when
missing), ``predicate_id`` (the clustering unit; when missing, the pairs that share a
stereotypical sentence form one cluster) and any other column are optional. Bad rows are
one-line errors naming the file and the row (the header is row 1).
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from biaslab.errors import DataError
from biaslab.io import atomic_write_text
from biaslab.wino.build.build import PAIR_COLUMNS, Pair

REQUIRED = ("sent_more", "sent_less")
DEFAULT_GROUP = "all"


@dataclass
class PairRow:
    row: int  # line of the CSV (header = 1)
    sent_more: str
    sent_less: str
    target_ID: str
    predicate_id: str
    extra: dict[str, str] = field(default_factory=dict)


def pairs_csv_text(pairs: list[Pair]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=PAIR_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for p in pairs:
        writer.writerow(p.row())
    return buf.getvalue()


def write_pairs(path: Path, pairs: list[Pair]) -> Path:
    atomic_write_text(Path(path), pairs_csv_text(pairs))
    return Path(path)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise DataError(f"{name}, row 1: missing column(s) {', '.join(missing)}; a pairs CSV needs "
                            "sent_more, sent_less and optionally target_ID, predicate_id")
        rows = []
        for rec in reader:
            line = reader.line_num
            more, less = (rec.get("sent_more") or "").strip(), (rec.get("sent_less") or "").strip()
            if not more or not less:
                which = "sent_more" if not more else "sent_less"
                raise DataError(f"{name}, row {line}: {which} is empty; every pair needs two sentences")
            if more == less:
                raise DataError(f"{name}, row {line}: sent_more and sent_less are identical ({more[:60]!r}); "
                                "a pair must differ in its target group")
            group = (rec.get("target_ID") or "").strip() or DEFAULT_GROUP
            pid = (rec.get("predicate_id") or "").strip() or f"sent_more:{more}"
            extra = {k: v for k, v in rec.items() if k and k not in (*REQUIRED, "target_ID", "predicate_id") and v}
            rows.append(PairRow(line, more, less, rec.get("target_ID") or group, pid, extra))
    except csv.Error as exc:
        raise DataError(f"{name}: not valid CSV ({exc})") from None
    if not rows:
        raise DataError(f"{name}: no pairs below the header")
    return rows
