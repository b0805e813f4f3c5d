"""Where a project stands: tuples done, per-annotator counts, gold accuracy, reliability so far.

One function feeds ``biaslab annotate status``, the admin page and ``GET /api/admin/status``.
"""

from __future__ import annotations

import json
import time

from biaslab.annotate.db import Database
from biaslab.annotate.project import Settings

SHR_TRIALS = 100


ANNOTATION_COLUMNS = [
    "BestItem",
    "WorstItem",
    "tuple_id",
    "annotator",
    "positions",
    "shown_at",
    "submitted_at",
    "seconds_on_task",
    "feedback",
]


def iso(epoch: float | None) -> str:
    return "" if epoch is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def screen_positions(items: list[str], shown: str | None) -> str:
    """Where Item1..ItemK were shown (1-based screen positions, space-separated), e.g. "3 1 4 2"."""
    if not shown:
        return ""
    order = json.loads(shown)
    return " ".join(str(order.index(i) + 1) for i in items)


def annotations_frame(db: Database, *, include_flagged: bool = True):
    """Study (non-gold) annotations as a DataFrame in the FSB layout (Item1..ItemK in the tuple's
    design order, BestItem, WorstItem) plus ``ANNOTATION_COLUMNS``' presentation and timing fields."""
    import pandas as pd

    with db.read() as conn:
        rows = conn.execute(
            "SELECT t.id, t.items, a.best, a.worst, n.name, a.submitted_at, a.feedback, n.flagged, s.positions, "
            "s.handed_at, s.answered_at FROM annotations a "
            "JOIN tuples t ON t.id = a.tuple_id JOIN annotators n ON n.id = a.annotator_id "
            "LEFT JOIN assignments s ON s.tuple_id = a.tuple_id AND s.annotator_id = a.annotator_id "
            "WHERE t.is_gold = 0 ORDER BY a.id"
        ).fetchall()
        size = int(conn.execute("SELECT value FROM meta WHERE key = 'tuple_size'").fetchone()[0])
    columns = [f"Item{i + 1}" for i in range(size)] + ANNOTATION_COLUMNS
    records = []
    for r in rows:
        if not include_flagged and r["flagged"]:
            continue
        items = json.loads(r["items"])
        on_task = "" if r["answered_at"] is None else f"{max(r['answered_at'] - r['handed_at'], 0):.1f}"
        records.append(
            [
                *items,
                r["best"],
                r["worst"],
                r["id"],
                r["name"],
                screen_positions(items, r["positions"]),
                iso(r["handed_at"]),
                r["submitted_at"],
                on_task,
                r["feedback"],
            ]
        )
    return pd.DataFrame(records, columns=columns)


def skips_frame(db: Database):
    """Every skip still standing: tuple, annotator, what was shown where and when."""
    import pandas as pd

    with db.read() as conn:
        rows = conn.execute(
            "SELECT t.id, t.items, t.is_gold, n.name, s.positions, s.handed_at, s.skipped_at FROM assignments s "
            "JOIN tuples t ON t.id = s.tuple_id JOIN annotators n ON n.id = s.annotator_id "
            "WHERE s.state = 'skipped' ORDER BY s.skipped_at, t.id"
        ).fetchall()
        size = int(conn.execute("SELECT value FROM meta WHERE key = 'tuple_size'").fetchone()[0])
    columns = (
        ["tuple_id", "annotator", "gold"]
        + [f"Item{i + 1}" for i in range(size)]
        + ["positions", "shown_at", "skipped_at"]
    )
    records = [
        [
            r["id"],
            r["name"],
            int(r["is_gold"]),
            *json.loads(r["items"]),
            screen_positions(json.loads(r["items"]), r["positions"]),
            iso(r["handed_at"]),
            iso(r["skipped_at"]),
        ]
        for r in rows
    ]
    return pd.DataFrame(records, columns=columns)


def _reliability(db: Database) -> dict:
    """Split-half reliability of the study annotations so far (flat: pearson_mean, pearson_sd, ...)."""
    from biaslab.bws.data import index_annotations, validate_annotations
    from biaslab.bws.reliability import split_half_reliability

    frame = annotations_frame(db)
    items = [c for c in frame.columns if c.startswith("Item")]
    usable = int((frame.groupby(items).size() >= 2).sum()) if len(frame) else 0
    answer = {"annotations": int(len(frame)), "tuples_with_2_or_more": usable}
    if usable < 2:
        return {**answer, "note": "split-half reliability needs tuples with at least 2 annotations"}
    data = index_annotations(validate_annotations(frame[[*items, "BestItem", "WorstItem"]], source="the project"))
    result = split_half_reliability(data, trials=SHR_TRIALS, seed=0).as_dict()
    if result["pearson"]["mean"] is None:  # too few judgements: say why, never a figure without its spread
        return {**answer, "note": result["reason"] or "split-half reliability is undefined on these annotations"}
    for method in ("pearson", "spearman"):
        answer[f"{method}_mean"] = result[method]["mean"]
        answer[f"{method}_sd"] = result[method]["sd"]
    answer["trials"] = result["trials"]
    return answer


CAP_NOTE = (
    "seen counts every tuple shown to the annotator: answered (study and gold), skipped, open now, or "
    "left unanswered past the time limit; the cap limits seen, so skipping never shows anyone more texts"
)


def project_status(db: Database, s: Settings, *, reliability: bool = True, now: float | None = None) -> dict:
    """Progress and per-annotator counts. Each annotator's ``seen`` (= done + gold_answered + skipped
    + open + expired) is what the cap limits; ``share_of_cap`` = seen / cap_count (see ``CAP_NOTE``)."""
    now = time.time() if now is None else now
    with db.read() as conn:
        filled = dict(
            conn.execute(
                "SELECT n, COUNT(*) FROM (SELECT t.id, COUNT(a.id) AS n FROM tuples t LEFT JOIN annotations a "
                "ON a.tuple_id = t.id WHERE t.is_gold = 0 GROUP BY t.id) GROUP BY n"
            ).fetchall()
        )
        open_now = conn.execute(
            "SELECT COUNT(*) FROM assignments WHERE state = 'open' AND expires_at >= ?", (now,)
        ).fetchone()[0]
        people = conn.execute(
            "SELECT n.id, n.name, n.is_admin, n.consented_at, n.flagged, n.flag_reason, n.flagged_at, "
            "(SELECT COUNT(*) FROM annotations a JOIN tuples t ON t.id = a.tuple_id "
            " WHERE a.annotator_id = n.id AND t.is_gold = 0) AS done, "
            "(SELECT COUNT(gold_correct) FROM annotations a WHERE a.annotator_id = n.id) AS gold_answered, "
            "(SELECT COALESCE(SUM(gold_correct), 0) FROM annotations a WHERE a.annotator_id = n.id) AS gold_correct, "
            "(SELECT COUNT(*) FROM assignments s WHERE s.annotator_id = n.id AND s.state = 'skipped') AS skipped, "
            "(SELECT COUNT(*) FROM assignments s WHERE s.annotator_id = n.id AND s.state = 'open' "
            " AND s.expires_at >= :now) AS open, "
            "(SELECT COUNT(*) FROM assignments s WHERE s.annotator_id = n.id AND (s.state = 'expired' OR "
            " (s.state = 'open' AND s.expires_at < :now))) AS expired, "
            "(SELECT COUNT(*) FROM assignments s WHERE s.annotator_id = n.id) AS seen, "
            "(SELECT MAX(submitted_at) FROM annotations a WHERE a.annotator_id = n.id) AS last_submitted_at "
            "FROM annotators n ORDER BY n.name",
            {"now": now},
        ).fetchall()
        counter_drift = conn.execute(
            "SELECT COUNT(*) FROM tuples t WHERE t.taken <> (SELECT COUNT(*) FROM assignments a "
            "WHERE a.tuple_id = t.id AND a.state IN ('open', 'done'))"
        ).fetchone()[0]
    done = sum(n * k for n, k in filled.items())
    annotators = []
    for p in people:
        answered, correct = p["gold_answered"], p["gold_correct"]
        annotators.append(
            {
                "name": p["name"],
                "admin": bool(p["is_admin"]),
                "consented": p["consented_at"] is not None,
                "done": p["done"],
                "gold_answered": answered,
                "gold_correct": correct,
                "gold_accuracy": correct / answered if answered else None,
                "skipped": p["skipped"],
                "open": p["open"],
                "expired": p["expired"],
                "seen": p["seen"],
                "share_of_cap": p["seen"] / s.cap_count,
                "last_submitted_at": p["last_submitted_at"],
                "flagged": bool(p["flagged"]),
                "flag_reason": p["flag_reason"],
                "flagged_at": p["flagged_at"],
            }
        )
    answer = {
        "construct": s.construct,
        "tuples": s.n_tuples,
        "gold_tuples": s.n_gold,
        "per_tuple": s.per_tuple,
        "cap": s.cap,
        "cap_count": s.cap_count,
        "complete_tuples": filled.get(s.per_tuple, 0),
        "tuples_by_annotations": {str(k): v for k, v in sorted(filled.items())},
        "annotations": done,
        "annotations_needed": s.per_tuple * s.n_tuples,
        "open_assignments": open_now,
        "progress": done / (s.per_tuple * s.n_tuples),
        "annotators": annotators,
        "annotators_needed": s.needed_annotators(),
        "flagged": [a["name"] for a in annotators if a["flagged"]],
        "consistent": counter_drift == 0,
    }
    if reliability:
        answer["reliability"] = _reliability(db)
    return answer


def cached_status(st) -> dict:
    """Status for the admin page/API; reliability recomputed only when annotations changed."""
    db = st.db
    key = tuple(db.conn().execute("SELECT COUNT(*), MAX(id) FROM annotations").fetchone())
    answer = project_status(db, st.settings, reliability=False)
    if st.status_cache.get("key") != key:
        st.status_cache.update(key=key, reliability=_reliability(db))
    answer["reliability"] = st.status_cache["reliability"]
    return answer
