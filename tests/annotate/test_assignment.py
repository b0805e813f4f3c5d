"""Fair assignment and submission rules, called directly (no HTTP): per-tuple counts from distinct
annotators, never the same tuple twice, the cap (also under races), leases, skips, gold, idempotency."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict

import pytest

from biaslab.annotate.assignment import Refused, Submission, next_tuple, progress, submit
from biaslab.annotate.db import Database
from biaslab.annotate.project import Settings
from biaslab.annotate.skips import skip
from tests.annotate.helpers import make_accounts, make_project

LEASE = 60.0


def ids_of(project):
    db = Database(project)
    rows = {r["name"]: r["id"] for r in db.conn().execute("SELECT name, id FROM annotators")}
    return db, Settings.load(db), rows


def answer(db, s, me, tup, sid=None, best=0, worst=1, now=None, feedback=""):
    items = [i["id"] for i in tup["items"]]
    sub = Submission(tup["tuple_id"], items[best], items[worst], feedback, sid or f"{me}-{tup['tuple_id']}")
    return submit(db, s, me, sub, now=now)


def work_until_done(db, s, me, now=1000.0):
    """Annotate everything ``me`` can get; returns the tuple ids done."""
    done = []
    while (tup := next_tuple(db, s, me, lease=LEASE, now=now)) is not None:
        answer(db, s, me, tup, now=now)
        done.append(tup["tuple_id"])
    return done


def test_every_tuple_gets_exactly_per_tuple_distinct_annotators(tmp_path):
    # 12 tuples x 3 = 36 annotations; cap 0.5 -> 6 each; 8 annotators have room for 48.
    project = make_project(tmp_path, n_tuples=12, per_tuple=3, cap=0.5)
    make_accounts(project, [f"a{i}" for i in range(8)])
    db, s, who = ids_of(project)
    assert s.cap_count == 6
    per_annotator = {name: work_until_done(db, s, me) for name, me in who.items()}
    for name, done in per_annotator.items():
        assert len(done) == len(set(done)) <= 6, name
    rows = db.conn().execute("SELECT tuple_id, annotator_id FROM annotations").fetchall()
    by_tuple = defaultdict(list)
    for r in rows:
        by_tuple[r["tuple_id"]].append(r["annotator_id"])
    assert sorted(by_tuple) == list(range(1, 13))
    assert all(len(a) == 3 and len(set(a)) == 3 for a in by_tuple.values())
    # Once all tuples are full nobody gets anything more, even annotators under their cap.
    assert sum(len(d) for d in per_annotator.values()) == 36
    assert all(next_tuple(db, s, me, lease=LEASE, now=2000.0) is None for me in who.values())


def test_cap_is_floor_of_share_and_holds(tmp_path):
    project = make_project(tmp_path, n_tuples=25, per_tuple=3, cap=0.08)  # 0.08 * 25 = 2
    make_accounts(project, ["solo"])
    db, s, who = ids_of(project)
    assert s.cap_count == 2
    assert len(work_until_done(db, s, who["solo"])) == 2
    assert progress(db, s, who["solo"])["remaining"] == 0


def test_two_tabs_racing_get_the_same_tuple_and_the_cap_holds(tmp_path):
    project = make_project(tmp_path, n_tuples=20, per_tuple=3, cap=0.1)  # cap 2
    make_accounts(project, ["tabs"])
    root = Database(project)
    me = root.conn().execute("SELECT id FROM annotators").fetchone()[0]
    s = Settings.load(root)
    # Each "tab" is a separate Database object (own connections, own Python lock): only SQLite's
    # BEGIN IMMEDIATE serialises them, as with two server processes.
    tabs = [Database(project) for _ in range(6)]
    results: list = []
    lock = threading.Lock()

    def tab(db, k):
        for round_ in range(6):
            tup = next_tuple(db, s, me, lease=LEASE, now=1000.0 + round_)
            if tup is None:
                return
            try:
                out = answer(db, s, me, tup, sid=f"tab{k}-{round_}", now=1000.0 + round_)
                with lock:
                    results.append(("ok", tup["tuple_id"], out["annotation_id"]))
            except Refused as exc:
                with lock:
                    results.append((exc.status, tup["tuple_id"], None))

    threads = [threading.Thread(target=tab, args=(db, k)) for k, db in enumerate(tabs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    stored = root.conn().execute("SELECT tuple_id FROM annotations WHERE annotator_id = ?", (me,)).fetchall()
    assert len(stored) == 2  # the cap, whatever the interleaving
    assert len({r[0] for r in stored}) == 2
    oks = [r for r in results if r[0] == "ok"]
    assert len(oks) == 2 and all(r[0] in ("ok", 409) for r in results)


def test_abandoned_tuple_returns_to_the_pool_after_the_lease(tmp_path):
    project = make_project(tmp_path, n_tuples=4, per_tuple=1, cap=1.0)
    make_accounts(project, ["slow", "fast"])
    db, s, who = ids_of(project)
    held = next_tuple(db, s, who["slow"], lease=LEASE, now=1000.0)
    # Within the lease the tuple is taken (per_tuple 1): "fast" gets another one.
    other = next_tuple(db, s, who["fast"], lease=LEASE, now=1030.0)
    assert other["tuple_id"] != held["tuple_id"]
    answer(db, s, who["fast"], other, now=1031.0)
    # Asking again renews the lease of the tuple one holds (same tuple back).
    assert next_tuple(db, s, who["slow"], lease=LEASE, now=1050.0) == held
    # Past the (renewed) lease it goes back to the pool and "fast" gets it (the fullest-first rule
    # does not apply: per_tuple 1, every free tuple is at level 0; "fast" may get another first).
    got = [next_tuple(db, s, who["fast"], lease=LEASE, now=1111.0)]
    while got[-1]["tuple_id"] != held["tuple_id"]:
        answer(db, s, who["fast"], got[-1], now=1111.0)
        got.append(next_tuple(db, s, who["fast"], lease=LEASE, now=1111.0))
    # The late answer from "slow" is refused: the only slot went to "fast".
    with pytest.raises(Refused) as exc:
        answer(db, s, who["slow"], held, now=1112.0)
    assert exc.value.status == 409
    # "slow" is never handed that tuple again, and gets a fresh one (or none is left).
    again = next_tuple(db, s, who["slow"], lease=LEASE, now=1113.0)
    assert again is None or again["tuple_id"] not in {held["tuple_id"], other["tuple_id"]}


def _items(db, tuple_id):
    ids = json.loads(db.conn().execute("SELECT items FROM tuples WHERE id = ?", (tuple_id,)).fetchone()[0])
    return [{"id": i, "text": ""} for i in ids]


def test_late_answer_accepted_while_the_slot_is_still_free(tmp_path):
    project = make_project(tmp_path, n_tuples=4, per_tuple=1, cap=1.0)
    make_accounts(project, ["slow"])
    db, s, who = ids_of(project)
    held = next_tuple(db, s, who["slow"], lease=LEASE, now=1000.0)
    out = answer(db, s, who["slow"], held, now=5000.0)  # long after the lease; nobody took the slot
    assert out["ok"] and out["tuple_id"] == held["tuple_id"]
    taken = db.conn().execute("SELECT taken FROM tuples WHERE id = ?", (held["tuple_id"],)).fetchone()[0]
    assert taken == 1


def test_submission_rules(tmp_path):
    project = make_project(tmp_path, n_tuples=6, per_tuple=2, cap=1.0)
    make_accounts(project, ["ann", "other"])
    db, s, who = ids_of(project)
    mine = next_tuple(db, s, who["ann"], lease=LEASE, now=1000.0)
    theirs = next_tuple(db, s, who["other"], lease=LEASE, now=1000.0)
    assert mine["tuple_id"] == theirs["tuple_id"]  # fullest-first: both on tuple 1
    free = next(t for t in range(1, 7) if t != mine["tuple_id"])
    other_tuple = {"tuple_id": free, "items": _items(db, free)}
    with pytest.raises(Refused) as exc:  # never handed to "ann"
        answer(db, s, who["ann"], other_tuple, now=1001.0)
    assert exc.value.status == 403
    with pytest.raises(Refused) as exc:  # unknown tuple: same answer, no hint
        submit(db, s, who["ann"], Submission(999, "1", "2", "", "x"), now=1001.0)
    assert exc.value.status == 403
    with pytest.raises(Refused) as exc:  # an id not in the tuple
        submit(db, s, who["ann"], Submission(mine["tuple_id"], "39", mine["items"][0]["id"], "", "y"), now=1001.0)
    assert exc.value.status == 422
    first = answer(db, s, who["ann"], mine, sid="sub-1", now=1002.0, feedback="hard one")
    again = answer(db, s, who["ann"], mine, sid="sub-1", now=1003.0, feedback="hard one")
    assert again == first  # replay: same answer, nothing new
    assert db.conn().execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 1
    with pytest.raises(Refused) as exc:  # same tuple, new submission id
        answer(db, s, who["ann"], mine, sid="sub-2", now=1004.0)
    assert exc.value.status == 409
    # A reused submission id with another body is still a repeat: first answer, nothing stored.
    assert answer(db, s, who["ann"], mine, sid="sub-1", best=2, now=1005.0) == first
    assert db.conn().execute("SELECT best FROM annotations").fetchone()[0] == mine["items"][0]["id"]
    # The other annotator may use the same submission id: ids are per annotator.
    assert answer(db, s, who["other"], theirs, sid="sub-1", now=1006.0)["ok"]
    assert db.conn().execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 2


def test_skip_frees_the_slot_and_is_not_offered_again(tmp_path):
    project = make_project(tmp_path, n_tuples=3, per_tuple=1, cap=1.0)
    make_accounts(project, ["a", "b"])
    db, s, who = ids_of(project)
    first = next_tuple(db, s, who["a"], lease=LEASE, now=1000.0)
    assert skip(db, who["a"], first["tuple_id"], now=1001.0)["skipped"]
    assert next_tuple(db, s, who["a"], lease=LEASE, now=1002.0)["tuple_id"] != first["tuple_id"]
    assert first["tuple_id"] in work_until_done(db, s, who["b"], now=1003.0)  # the slot went back to the pool
    assert progress(db, s, who["a"])["skipped"] == 1
    with pytest.raises(Refused) as exc:
        answer(db, s, who["a"], first, now=1004.0)
    assert exc.value.status == 409


def test_gold_interleaved_at_the_rate_and_flag_survives_reopen(tmp_path):
    # Items k, k+10, k+20, k+30: never a window of consecutive ids like the study tuples.
    gold = [[str(k), str(k + 10), str(k + 20), str(k + 30), str(k + 10), str(k + 30)] for k in range(1, 6)]
    project = make_project(
        tmp_path,
        n_items=40,
        n_tuples=30,
        per_tuple=1,
        cap=1.0,
        gold=gold,
        gold_rate=0.2,
        gold_threshold=0.7,
        gold_min=3,
    )
    make_accounts(project, ["careless", "careful"])
    db, s, who = ids_of(project)
    assert (s.n_gold, s.n_tuples) == (5, 30)
    kinds = {}
    for name in ("careless", "careful"):
        me, seq = who[name], []
        for k in range(15):
            tup = next_tuple(db, s, me, lease=LEASE, now=1000.0 + k)
            is_gold = (
                db.conn()
                .execute("SELECT is_gold, gold_best, gold_worst FROM tuples WHERE id = ?", (tup["tuple_id"],))
                .fetchone()
            )
            items = [i["id"] for i in tup["items"]]
            if is_gold["is_gold"] and name == "careful":
                best, worst = items.index(is_gold["gold_best"]), items.index(is_gold["gold_worst"])
            else:  # careless: picks the reverse of the expected answer on gold
                best, worst = (
                    (items.index(is_gold["gold_worst"]), items.index(is_gold["gold_best"]))
                    if is_gold["is_gold"]
                    else (0, 1)
                )
            answer(db, s, me, tup, best=best, worst=worst, now=1000.0 + k)
            seq.append(bool(is_gold["is_gold"]))
        kinds[name] = seq
    # rate 0.2: every 5th tuple handed out is gold (3 of 15).
    assert kinds["careful"] == [False, False, False, False, True] * 3
    flags = {
        r["name"]: (r["flagged"], r["flag_reason"])
        for r in db.conn().execute("SELECT name, flagged, flag_reason FROM annotators")
    }
    assert flags["careful"] == (0, None)
    assert flags["careless"][0] == 1 and flags["careless"][1].startswith("gold accuracy 0/3")
    db.close()
    # A new process (a restarted server) reads the same flag from the database.
    reopened = Database(project)
    row = reopened.conn().execute("SELECT flagged FROM annotators WHERE name = 'careless'").fetchone()
    assert row[0] == 1
    counts = Counter(
        r[0] for r in reopened.conn().execute("SELECT t.is_gold FROM annotations a JOIN tuples t ON t.id = a.tuple_id")
    )
    assert counts == {0: 24, 1: 6}
