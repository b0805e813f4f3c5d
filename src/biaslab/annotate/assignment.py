"""Handing out tuples and taking in annotations: the rules of fair assignment.

Invariants, each kept inside one write transaction (:meth:`Database.transact`):

* a study tuple is ``taken`` by at most ``per_tuple`` annotators (assignments open or done), so
  it ends with exactly ``per_tuple`` annotations from distinct annotators;
* an annotator is handed a tuple at most once (primary key tuple + annotator), gold ones included;
* the tuples shown to an annotator (answered, open, skipped or let expire: every assignment)
  never exceed ``cap_count``, so skipping cannot widen anyone's exposure (they hold one open tuple
  at a time -- two after taking back a skip -- and asking again returns the one they hold, so two
  racing tabs get the same tuple);
* an open assignment not answered within the lease goes back to the pool ("expired"); its
  annotator may still submit it late if the slot is still free;
* presentation is randomized per annotator and reproducible: their recorded ``seed`` orders the
  tuples (within a fill level) and shuffles each tuple's items (re-drawn while it repeats what
  another annotator of the tuple was shown); the order shown is stored with the assignment
  (``positions``) and exported;
* an annotation is accepted only for a tuple handed to that annotator, once; a repeated
  ``submission_id`` (per annotator) returns the answer first sent and stores nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sqlite3
import time
from collections.abc import Set as AbstractSet

from biaslab.annotate.db import Database
from biaslab.annotate.parsing import MAX_FEEDBACK, Refused, Submission, parse_submission, parse_tuple_id
from biaslab.annotate.project import Settings, now_iso

__all__ = [
    "MAX_FEEDBACK",
    "Refused",
    "Submission",
    "parse_submission",
    "parse_tuple_id",
    "next_tuple",
    "submit",
    "progress",
]
_P = 2_147_483_647  # a prime above every tuple id: (id * m + c) mod P orders ids per annotator


def reclaim_expired(conn: sqlite3.Connection, now: float) -> int:
    """Open assignments past their lease go back to the pool."""
    rows = conn.execute(
        "SELECT tuple_id, annotator_id FROM assignments WHERE state = 'open' AND expires_at < ?", (now,)
    ).fetchall()
    for row in rows:
        conn.execute(
            "UPDATE assignments SET state = 'expired' WHERE tuple_id = ? AND annotator_id = ?",
            (row["tuple_id"], row["annotator_id"]),
        )
        conn.execute("UPDATE tuples SET taken = taken - 1 WHERE id = ?", (row["tuple_id"],))
    return len(rows)


def tuple_payload(conn: sqlite3.Connection, tuple_id: int, items_json: str, shown: str | None = None) -> dict:
    """The tuple as the annotator sees it: items in the order they were shown to them (``shown``)."""
    ids = json.loads(shown) if shown else json.loads(items_json)
    texts = {
        row["id"]: row["text"]
        for row in conn.execute(f"SELECT id, text FROM items WHERE id IN ({','.join('?' * len(ids))})", ids)
    }
    return {"tuple_id": tuple_id, "items": [{"id": i, "text": texts[i]} for i in ids]}


def _usage(conn: sqlite3.Connection, me: int) -> int:
    """Distinct tuples shown to ``me`` (answered, open, skipped or let expire): what the cap limits."""
    return conn.execute("SELECT COUNT(*) FROM assignments WHERE annotator_id = ?", (me,)).fetchone()[0]


def annotator_seed(conn: sqlite3.Connection, me: int) -> int:
    """The annotator's recorded presentation seed (accounts from before seeds: one derived from the id)."""
    row = conn.execute("SELECT seed FROM annotators WHERE id = ?", (me,)).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else (me * 0x9E3779B97F4A7C15) % 2**62


def shown_order(
    seed: int, tuple_id: int, items: list[str], taken: AbstractSet[tuple[str, ...]] = frozenset()
) -> list[str]:
    """The positions of a tuple's items for one annotator: a shuffle seeded by (seed, tuple id),
    re-drawn (seeded by the attempt number) while it repeats an arrangement in ``taken`` (those
    other annotators of the tuple were shown), so annotators of one tuple see it differently."""
    first: list[str] | None = None
    for attempt in range(64):
        order = list(items)
        random.Random(f"{seed}:{tuple_id}" + (f":{attempt}" if attempt else "")).shuffle(order)
        if tuple(order) not in taken:
            return order
        first = first or order
    assert first is not None  # set on the first attempt
    return first


def _want_gold(conn: sqlite3.Connection, s: Settings, me: int) -> bool:
    if not s.n_gold or s.gold_rate <= 0:
        return False
    done, gold = conn.execute(
        "SELECT COUNT(*), COUNT(gold_correct) FROM annotations WHERE annotator_id = ?", (me,)
    ).fetchone()
    return gold < math.floor((done + 1) * s.gold_rate + 1e-9)


def _order_key(seed: int) -> tuple[int, int]:
    """(m, c) of the annotator's order: tuple ids sorted by (id * m + c) mod P, a per-seed permutation
    (m and c drawn from a hash of the seed, so that nearby seeds give unrelated orders)."""
    digest = hashlib.sha256(f"tuple-order:{seed}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % (_P - 1), int.from_bytes(digest[8:16], "big") % _P


def _pick_gold(conn: sqlite3.Connection, me: int, seed: int) -> sqlite3.Row | None:
    m, c = _order_key(seed)
    return conn.execute(
        "SELECT id, items FROM tuples WHERE is_gold = 1 AND id NOT IN "
        "(SELECT tuple_id FROM assignments WHERE annotator_id = ?) "
        "ORDER BY (id * ? + ?) % ? LIMIT 1",
        (me, m, c, _P),
    ).fetchone()


def _pick_study(conn: sqlite3.Connection, s: Settings, me: int, seed: int) -> sqlite3.Row | None:
    # Fullest tuples first, so complete tuples accumulate instead of every tuple being half done;
    # within a fill level, in the annotator's own seeded order.
    m, c = _order_key(seed)
    for level in range(s.per_tuple - 1, -1, -1):
        row = conn.execute(
            "SELECT id, items FROM tuples WHERE is_gold = 0 AND taken = ? AND id NOT IN "
            "(SELECT tuple_id FROM assignments WHERE annotator_id = ?) ORDER BY (id * ? + ?) % ? LIMIT 1",
            (level, me, m, c, _P),
        ).fetchone()
        if row is not None:
            return row
    return None


def next_tuple(db: Database, s: Settings, me: int, *, lease: float, now: float | None = None) -> dict | None:
    """The tuple ``me`` holds open (lease renewed), else a newly handed one, else None."""
    now = time.time() if now is None else now

    def tx(conn: sqlite3.Connection) -> dict | None:
        reclaim_expired(conn, now)
        held = conn.execute(
            "SELECT t.id, t.items, a.positions FROM assignments a JOIN tuples t ON t.id = a.tuple_id "
            "WHERE a.annotator_id = ? AND a.state = 'open' ORDER BY a.handed_at LIMIT 1",
            (me,),
        ).fetchone()
        if held is not None:
            conn.execute(
                "UPDATE assignments SET expires_at = ? WHERE tuple_id = ? AND annotator_id = ?",
                (now + lease, held["id"], me),
            )
            return tuple_payload(conn, held["id"], held["items"], held["positions"])
        if _usage(conn, me) >= s.cap_count:
            return None
        seed = annotator_seed(conn, me)
        row = _pick_gold(conn, me, seed) if _want_gold(conn, s, me) else None
        row = row or _pick_study(conn, s, me, seed)
        if row is None:
            return None
        taken = {
            tuple(json.loads(r[0]))
            for r in conn.execute(
                "SELECT positions FROM assignments WHERE tuple_id = ? AND positions IS NOT NULL", (row["id"],)
            )
        }
        shown = json.dumps(shown_order(seed, row["id"], json.loads(row["items"]), taken))
        conn.execute(
            "INSERT INTO assignments (tuple_id, annotator_id, state, handed_at, expires_at, positions) "
            "VALUES (?, ?, 'open', ?, ?, ?)",
            (row["id"], me, now, now + lease, shown),
        )
        conn.execute("UPDATE tuples SET taken = taken + 1 WHERE id = ?", (row["id"],))
        return tuple_payload(conn, row["id"], row["items"], shown)

    return db.transact(tx)


def _update_flag(conn: sqlite3.Connection, s: Settings, me: int) -> None:
    n, correct = conn.execute(
        "SELECT COUNT(gold_correct), COALESCE(SUM(gold_correct), 0) FROM annotations WHERE annotator_id = ?", (me,)
    ).fetchone()
    flagged = n >= s.gold_min and correct / n < s.gold_threshold
    reason = f"gold accuracy {correct}/{n} = {correct / n:.0%} < {s.gold_threshold:.0%}" if flagged else None
    current = conn.execute("SELECT flagged FROM annotators WHERE id = ?", (me,)).fetchone()[0]
    if bool(current) != flagged or flagged:
        conn.execute(
            "UPDATE annotators SET flagged = ?, flag_reason = ?, flagged_at = CASE WHEN ? THEN "
            "COALESCE(flagged_at, ?) ELSE NULL END WHERE id = ?",
            (int(flagged), reason, int(flagged), now_iso(), me),
        )


def submit(db: Database, s: Settings, me: int, sub: Submission, *, now: float | None = None) -> dict:
    """Store one annotation; returns the JSON answer (the same one again for a repeated submission_id)."""
    now = time.time() if now is None else now

    def tx(conn: sqlite3.Connection) -> dict:
        reclaim_expired(conn, now)
        prev = conn.execute(
            "SELECT * FROM annotations WHERE annotator_id = ? AND submission_id = ?", (me, sub.submission_id)
        ).fetchone()
        if prev is not None:  # a repeat: the first answer again, nothing stored (whatever the body)
            return json.loads(prev["response"])
        tup = conn.execute("SELECT * FROM tuples WHERE id = ?", (sub.tuple_id,)).fetchone()
        held = conn.execute(
            "SELECT state FROM assignments WHERE tuple_id = ? AND annotator_id = ?", (sub.tuple_id, me)
        ).fetchone()
        if tup is None or held is None:
            raise Refused(403, f"tuple {sub.tuple_id} was not handed to you; get one from GET /api/next")
        items = json.loads(tup["items"])
        for field, value in (("best", sub.best), ("worst", sub.worst)):
            if value not in items:
                raise Refused(422, f"{field} {value!r} is not one of tuple {sub.tuple_id}'s items {', '.join(items)}")
        state = held["state"]
        if state == "done":
            raise Refused(409, f"you already annotated tuple {sub.tuple_id}")
        if state == "skipped":
            raise Refused(409, f"you skipped tuple {sub.tuple_id}; get the next one from GET /api/next")
        if state == "expired":
            if not tup["is_gold"] and tup["taken"] >= s.per_tuple:
                raise Refused(
                    409,
                    f"tuple {sub.tuple_id} went to another annotator after you left it unanswered; "
                    "get the next one from GET /api/next",
                )
            conn.execute("UPDATE tuples SET taken = taken + 1 WHERE id = ?", (sub.tuple_id,))
        conn.execute(
            "UPDATE assignments SET state = 'done', answered_at = ? WHERE tuple_id = ? AND annotator_id = ?",
            (now, sub.tuple_id, me),
        )
        gold_correct = None
        if tup["is_gold"]:
            gold_correct = int(sub.best == tup["gold_best"] and sub.worst == tup["gold_worst"])
        submitted_at = now_iso()
        cur = conn.execute(
            "INSERT INTO annotations (tuple_id, annotator_id, best, worst, feedback, submission_id, submitted_at, "
            "gold_correct, response) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '')",
            (sub.tuple_id, me, sub.best, sub.worst, sub.feedback, sub.submission_id, submitted_at, gold_correct),
        )
        done = conn.execute("SELECT COUNT(*) FROM annotations WHERE annotator_id = ?", (me,)).fetchone()[0]
        answer = {
            "ok": True,
            "annotation_id": cur.lastrowid,
            "tuple_id": sub.tuple_id,
            "submission_id": sub.submission_id,
            "submitted_at": submitted_at,
            "done": done,
            "cap": s.cap_count,
            "take_break": done % s.break_every == 0,
        }
        conn.execute("UPDATE annotations SET response = ? WHERE id = ?", (json.dumps(answer), cur.lastrowid))
        if gold_correct is not None:
            _update_flag(conn, s, me)
        return answer

    return db.transact(tx)


def undoable_skip(conn: sqlite3.Connection, me: int) -> int | None:
    """The tuple of ``me``'s last skip, if nothing was answered since (only the last skip can be undone)."""
    row = conn.execute(
        "SELECT tuple_id, skipped_at FROM assignments WHERE annotator_id = ? AND state = 'skipped' "
        "AND skipped_at IS NOT NULL ORDER BY skipped_at DESC LIMIT 1",
        (me,),
    ).fetchone()
    if row is None:
        return None
    later = conn.execute(
        "SELECT 1 FROM assignments WHERE annotator_id = ? AND answered_at >= ? LIMIT 1", (me, row["skipped_at"])
    ).fetchone()
    return None if later else row["tuple_id"]


def progress(db: Database, s: Settings, me: int) -> dict:
    """The caller's counts. ``seen`` (tuples shown: answered, skipped, open or let expire) is what
    the cap limits; ``remaining`` = cap - seen; ``undo_tuple_id`` is the skip that can be taken back."""
    with db.read() as conn:
        counts = dict(
            conn.execute(
                "SELECT state, COUNT(*) FROM assignments WHERE annotator_id = ? GROUP BY state", (me,)
            ).fetchall()
        )
        held = conn.execute(
            "SELECT tuple_id FROM assignments WHERE annotator_id = ? AND state = 'open' "
            "AND expires_at >= ? ORDER BY handed_at LIMIT 1",
            (me, time.time()),
        ).fetchone()
        undo = undoable_skip(conn, me)
    done, seen = counts.get("done", 0), sum(counts.values())
    return {
        "done": done,
        "skipped": counts.get("skipped", 0),
        "seen": seen,
        "cap": s.cap_count,
        "remaining": max(s.cap_count - seen, 0),
        "open_tuple_id": held["tuple_id"] if held else None,
        "undo_tuple_id": undo,
        "break_every": s.break_every,
    }
