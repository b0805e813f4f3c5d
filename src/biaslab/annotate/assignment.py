"""Handing out tuples and taking in annotations: the rules of fair assignment.

Invariants, each kept inside one write transaction (:meth:`Database.transact`):

* a study tuple is ``taken`` by at most ``per_tuple`` annotators (assignments open or done), so
  it ends with exactly ``per_tuple`` annotations from distinct annotators;
* an annotator is handed a tuple at most once (primary key tuple + annotator), gold ones included;
* an annotator's open + done assignments never exceed ``cap_count`` (they hold at most one open
  tuple: asking again returns the one they hold, so two racing tabs get the same tuple);
* an open assignment not answered within the lease goes back to the pool ("expired"); its
  annotator may still submit it late if the slot is still free and the cap allows;
* an annotation is accepted only for a tuple handed to that annotator, once; a repeated
  ``submission_id`` (per annotator) returns the answer first sent and stores nothing.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from biaslab.annotate.db import Database
from biaslab.annotate.project import Settings, now_iso

MAX_FEEDBACK = 2000
MAX_SUBMISSION_ID = 128


class Refused(Exception):
    """A request the rules refuse: ``status`` is the HTTP status, ``detail`` says why."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


@dataclass(frozen=True)
class Submission:
    tuple_id: int
    best: str
    worst: str
    feedback: str
    submission_id: str


def _id(value: Any, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise Refused(422, f"{field} must be an item id (a string)")
    return str(value).strip()


def parse_tuple_id(value: Any) -> int:
    if isinstance(value, bool):
        raise Refused(422, "tuple_id must be an integer")
    try:
        tuple_id = int(value)
    except (TypeError, ValueError):
        raise Refused(422, "tuple_id must be an integer") from None
    if str(tuple_id) != str(value).strip():
        raise Refused(422, "tuple_id must be an integer")
    return tuple_id


def parse_submission(body: Any) -> Submission:
    """Validate a JSON body ``{"tuple_id", "best", "worst", "feedback", "submission_id"}``.

    Any other field (an ``annotator``, say) is ignored: identity comes from the session only."""
    if not isinstance(body, dict):
        raise Refused(422, "the body must be a JSON object with tuple_id, best, worst, feedback, submission_id")
    for field in ("tuple_id", "best", "worst", "submission_id"):
        if body.get(field) is None:
            raise Refused(422, f"missing field {field!r}")
    feedback = body.get("feedback") or ""
    if not isinstance(feedback, str):
        raise Refused(422, "feedback must be a string")
    if len(feedback) > MAX_FEEDBACK:
        raise Refused(422, f"feedback is limited to {MAX_FEEDBACK} characters")
    submission_id = body["submission_id"]
    if not isinstance(submission_id, str) or not 1 <= len(submission_id) <= MAX_SUBMISSION_ID \
            or not submission_id.isprintable():
        raise Refused(422, f"submission_id must be a string of 1 to {MAX_SUBMISSION_ID} printable characters")
    sub = Submission(parse_tuple_id(body["tuple_id"]), _id(body["best"], "best"), _id(body["worst"], "worst"),
                     feedback.strip(), submission_id)
    if sub.best == sub.worst:
        raise Refused(422, "best and worst must be different texts")
    return sub


def reclaim_expired(conn: sqlite3.Connection, now: float) -> int:
    """Open assignments past their lease go back to the pool."""
    rows = conn.execute("SELECT tuple_id, annotator_id FROM assignments WHERE state = 'open' AND expires_at < ?",
                        (now,)).fetchall()
    for row in rows:
        conn.execute("UPDATE assignments SET state = 'expired' WHERE tuple_id = ? AND annotator_id = ?",
                     (row["tuple_id"], row["annotator_id"]))
        conn.execute("UPDATE tuples SET taken = taken - 1 WHERE id = ?", (row["tuple_id"],))
    return len(rows)


def tuple_payload(conn: sqlite3.Connection, tuple_id: int, items_json: str) -> dict:
    ids = json.loads(items_json)
    texts = {row["id"]: row["text"] for row in conn.execute(
        f"SELECT id, text FROM items WHERE id IN ({','.join('?' * len(ids))})", ids)}
    return {"tuple_id": tuple_id, "items": [{"id": i, "text": texts[i]} for i in ids]}


def _usage(conn: sqlite3.Connection, me: int) -> int:
    return conn.execute("SELECT COUNT(*) FROM assignments WHERE annotator_id = ? AND state IN ('open', 'done')",
                        (me,)).fetchone()[0]


def _want_gold(conn: sqlite3.Connection, s: Settings, me: int) -> bool:
    if not s.n_gold or s.gold_rate <= 0:
        return False
    done, gold = conn.execute("SELECT COUNT(*), COUNT(gold_correct) FROM annotations WHERE annotator_id = ?",
                              (me,)).fetchone()
    return gold < math.floor((done + 1) * s.gold_rate + 1e-9)


def _pick_gold(conn: sqlite3.Connection, me: int) -> sqlite3.Row | None:
    # A per-annotator order (a multiplicative hash of the ids), so gold tuples come in different orders.
    return conn.execute(
        "SELECT id, items FROM tuples WHERE is_gold = 1 AND id NOT IN "
        "(SELECT tuple_id FROM assignments WHERE annotator_id = ?) "
        "ORDER BY (id * 2654435761 + ? * 40503) % 1000003 LIMIT 1", (me, me)).fetchone()


def _pick_study(conn: sqlite3.Connection, s: Settings, me: int) -> sqlite3.Row | None:
    # Fullest tuples first, so complete tuples accumulate instead of every tuple being half done.
    for level in range(s.per_tuple - 1, -1, -1):
        row = conn.execute(
            "SELECT id, items FROM tuples WHERE is_gold = 0 AND taken = ? AND id NOT IN "
            "(SELECT tuple_id FROM assignments WHERE annotator_id = ?) ORDER BY id LIMIT 1", (level, me)).fetchone()
        if row is not None:
            return row
    return None


def next_tuple(db: Database, s: Settings, me: int, *, lease: float, now: float | None = None) -> dict | None:
    """The tuple ``me`` holds open (lease renewed), else a newly handed one, else None."""
    now = time.time() if now is None else now
    def tx(conn: sqlite3.Connection) -> dict | None:
        reclaim_expired(conn, now)
        held = conn.execute(
            "SELECT t.id, t.items FROM assignments a JOIN tuples t ON t.id = a.tuple_id "
            "WHERE a.annotator_id = ? AND a.state = 'open' ORDER BY a.handed_at LIMIT 1", (me,)).fetchone()
        if held is not None:
            conn.execute("UPDATE assignments SET expires_at = ? WHERE tuple_id = ? AND annotator_id = ?",
                         (now + lease, held["id"], me))
            return tuple_payload(conn, held["id"], held["items"])
        if _usage(conn, me) >= s.cap_count:
            return None
        row = _pick_gold(conn, me) if _want_gold(conn, s, me) else None
        row = row or _pick_study(conn, s, me)
        if row is None:
            return None
        conn.execute("INSERT INTO assignments (tuple_id, annotator_id, state, handed_at, expires_at) "
                     "VALUES (?, ?, 'open', ?, ?)", (row["id"], me, now, now + lease))
        conn.execute("UPDATE tuples SET taken = taken + 1 WHERE id = ?", (row["id"],))
        return tuple_payload(conn, row["id"], row["items"])

    return db.transact(tx)


def _update_flag(conn: sqlite3.Connection, s: Settings, me: int) -> None:
    n, correct = conn.execute("SELECT COUNT(gold_correct), COALESCE(SUM(gold_correct), 0) FROM annotations "
                              "WHERE annotator_id = ?", (me,)).fetchone()
    flagged = n >= s.gold_min and correct / n < s.gold_threshold
    reason = f"gold accuracy {correct}/{n} = {correct / n:.0%} < {s.gold_threshold:.0%}" if flagged else None
    current = conn.execute("SELECT flagged FROM annotators WHERE id = ?", (me,)).fetchone()[0]
    if bool(current) != flagged or flagged:
        conn.execute("UPDATE annotators SET flagged = ?, flag_reason = ?, flagged_at = CASE WHEN ? THEN "
                     "COALESCE(flagged_at, ?) ELSE NULL END WHERE id = ?",
                     (int(flagged), reason, int(flagged), now_iso(), me))


def submit(db: Database, s: Settings, me: int, sub: Submission, *, now: float | None = None) -> dict:
    """Store one annotation; returns the JSON answer (the same one again for a repeated submission_id)."""
    now = time.time() if now is None else now
    def tx(conn: sqlite3.Connection) -> dict:
        reclaim_expired(conn, now)
        prev = conn.execute("SELECT * FROM annotations WHERE annotator_id = ? AND submission_id = ?",
                            (me, sub.submission_id)).fetchone()
        if prev is not None:       # a repeat: the first answer again, nothing stored (whatever the body)
            return json.loads(prev["response"])
        tup = conn.execute("SELECT * FROM tuples WHERE id = ?", (sub.tuple_id,)).fetchone()
        held = conn.execute("SELECT state FROM assignments WHERE tuple_id = ? AND annotator_id = ?",
                            (sub.tuple_id, me)).fetchone()
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
                raise Refused(409, f"tuple {sub.tuple_id} went to another annotator after you left it unanswered; "
                                   "get the next one from GET /api/next")
            if _usage(conn, me) >= s.cap_count:
                raise Refused(409, f"you have reached your limit of {s.cap_count} tuples")
            conn.execute("UPDATE tuples SET taken = taken + 1 WHERE id = ?", (sub.tuple_id,))
        conn.execute("UPDATE assignments SET state = 'done' WHERE tuple_id = ? AND annotator_id = ?",
                     (sub.tuple_id, me))
        gold_correct = None
        if tup["is_gold"]:
            gold_correct = int(sub.best == tup["gold_best"] and sub.worst == tup["gold_worst"])
        submitted_at = now_iso()
        cur = conn.execute(
            "INSERT INTO annotations (tuple_id, annotator_id, best, worst, feedback, submission_id, submitted_at, "
            "gold_correct, response) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '')",
            (sub.tuple_id, me, sub.best, sub.worst, sub.feedback, sub.submission_id, submitted_at, gold_correct))
        done = conn.execute("SELECT COUNT(*) FROM annotations WHERE annotator_id = ?", (me,)).fetchone()[0]
        answer = {"ok": True, "annotation_id": cur.lastrowid, "tuple_id": sub.tuple_id,
                  "submission_id": sub.submission_id, "submitted_at": submitted_at, "done": done,
                  "cap": s.cap_count, "take_break": done % s.break_every == 0}
        conn.execute("UPDATE annotations SET response = ? WHERE id = ?", (json.dumps(answer), cur.lastrowid))
        if gold_correct is not None:
            _update_flag(conn, s, me)
        return answer

    return db.transact(tx)


def skip(db: Database, me: int, tuple_id: int, *, now: float | None = None) -> dict:
    """Give back the tuple ``me`` holds; it is not handed to them again."""
    now = time.time() if now is None else now
    def tx(conn: sqlite3.Connection) -> None:
        reclaim_expired(conn, now)
        held = conn.execute("SELECT state FROM assignments WHERE tuple_id = ? AND annotator_id = ?",
                            (tuple_id, me)).fetchone()
        if held is None:
            raise Refused(403, f"tuple {tuple_id} was not handed to you; get one from GET /api/next")
        if held["state"] == "done":
            raise Refused(409, f"you already annotated tuple {tuple_id}")
        if held["state"] == "open":
            conn.execute("UPDATE tuples SET taken = taken - 1 WHERE id = ?", (tuple_id,))
        conn.execute("UPDATE assignments SET state = 'skipped' WHERE tuple_id = ? AND annotator_id = ?",
                     (tuple_id, me))

    db.transact(tx)
    return {"ok": True, "tuple_id": tuple_id, "skipped": True}


def progress(db: Database, s: Settings, me: int) -> dict:
    with db.read() as conn:
        counts = dict(conn.execute("SELECT state, COUNT(*) FROM assignments WHERE annotator_id = ? GROUP BY state",
                                   (me,)).fetchall())
        held = conn.execute("SELECT tuple_id FROM assignments WHERE annotator_id = ? AND state = 'open' "
                            "AND expires_at >= ?", (me, time.time())).fetchone()
    done = counts.get("done", 0)
    return {"done": done, "skipped": counts.get("skipped", 0), "cap": s.cap_count,
            "remaining": max(s.cap_count - done, 0),
            "open_tuple_id": held["tuple_id"] if held else None, "break_every": s.break_every}
