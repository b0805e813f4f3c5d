"""Skipping a tuple, and taking back the last skip.

A skipped tuple goes back to the pool for others and is not handed to the skipper again, but it
still counts toward the skipper's cap (it was shown to them). The last skip can be undone as long
as nothing was answered since and the tuple's slot is still free: the tuple is opened again and
is the next one shown.
"""

from __future__ import annotations

import sqlite3
import time

from biaslab.annotate.assignment import reclaim_expired, tuple_payload, undoable_skip
from biaslab.annotate.db import Database
from biaslab.annotate.parsing import Refused
from biaslab.annotate.project import Settings


def skip(db: Database, me: int, tuple_id: int, *, now: float | None = None) -> dict:
    """Give back the tuple ``me`` holds; it is not handed to them again (unless the skip is undone)."""
    now = time.time() if now is None else now

    def tx(conn: sqlite3.Connection) -> None:
        reclaim_expired(conn, now)
        held = conn.execute(
            "SELECT state FROM assignments WHERE tuple_id = ? AND annotator_id = ?", (tuple_id, me)
        ).fetchone()
        if held is None:
            raise Refused(403, f"tuple {tuple_id} was not handed to you; get one from GET /api/next")
        if held["state"] == "done":
            raise Refused(409, f"you already annotated tuple {tuple_id}")
        if held["state"] == "open":
            conn.execute("UPDATE tuples SET taken = taken - 1 WHERE id = ?", (tuple_id,))
        conn.execute(
            "UPDATE assignments SET state = 'skipped', skipped_at = ? WHERE tuple_id = ? AND annotator_id = ?",
            (now, tuple_id, me),
        )

    db.transact(tx)
    return {"ok": True, "tuple_id": tuple_id, "skipped": True}


def undo_skip(db: Database, s: Settings, me: int, *, lease: float, now: float | None = None) -> dict:
    """Open ``me``'s last skipped tuple again (shown next); 409 when there is none to take back."""
    now = time.time() if now is None else now

    def tx(conn: sqlite3.Connection) -> dict:
        reclaim_expired(conn, now)
        tuple_id = undoable_skip(conn, me)
        if tuple_id is None:
            raise Refused(409, "no skip to undo (only the last skip, before your next answer, can be undone)")
        tup = conn.execute("SELECT items, is_gold, taken FROM tuples WHERE id = ?", (tuple_id,)).fetchone()
        if not tup["is_gold"] and tup["taken"] >= s.per_tuple:
            raise Refused(409, f"tuple {tuple_id} went to another annotator after you skipped it")
        first = conn.execute(
            "SELECT MIN(handed_at) FROM assignments WHERE annotator_id = ? AND state = 'open'", (me,)
        ).fetchone()[0]
        handed = conn.execute(
            "SELECT handed_at, positions FROM assignments WHERE tuple_id = ? AND annotator_id = ?", (tuple_id, me)
        ).fetchone()
        # Shown next: before any tuple already open (the one handed out after the skip).
        order = handed["handed_at"] if first is None else min(handed["handed_at"], first - 1e-3)
        conn.execute(
            "UPDATE assignments SET state = 'open', skipped_at = NULL, handed_at = ?, expires_at = ? "
            "WHERE tuple_id = ? AND annotator_id = ?",
            (order, now + lease, tuple_id, me),
        )
        conn.execute("UPDATE tuples SET taken = taken + 1 WHERE id = ?", (tuple_id,))
        return {"ok": True, "undone": True, **tuple_payload(conn, tuple_id, tup["items"], handed["positions"])}

    return db.transact(tx)
