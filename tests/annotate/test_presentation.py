"""What annotators are shown and what the export records: per-annotator randomized order and
positions (seeded, recorded, reproducible), undo of the last skip, the export's presentation and
timing fields and skip list, instructions that match the study, bulk accounts, old projects."""

from __future__ import annotations

import csv
import json
import stat

import pytest

from biaslab.annotate.assignment import Refused, Submission, next_tuple, submit
from biaslab.annotate.auth import verify_password
from biaslab.annotate.client import ApiClient
from biaslab.annotate.db import Database
from biaslab.annotate.export import export_csv, skips_path
from biaslab.annotate.project import Settings, default_instructions
from biaslab.annotate.skips import skip, undo_skip
from tests.annotate.helpers import ServerProcess, make_accounts, make_project, write_csv
from tests.cli_runner import run_cli


def ids_of(db):
    return {r["name"]: r["id"] for r in db.conn().execute("SELECT name, id FROM annotators")}


def test_two_annotators_first_tuples_differ_in_order_or_positions(tmp_path):
    project = make_project(tmp_path, n_items=60, n_tuples=30, per_tuple=3, cap=0.5)
    passwords = make_accounts(project, [f"a{k}" for k in range(6)])
    with ServerProcess(project) as server:
        firsts = {}
        for name, password in passwords.items():
            c = ApiClient(server.url)
            c.login(name, password)
            seq = []
            for _ in range(3):
                tup = c.next()
                seq.append((tup["tuple_id"], tuple(i["id"] for i in tup["items"])))
                c.submit(tup["tuple_id"], tup["items"][0]["id"], tup["items"][1]["id"])
            firsts[name] = seq
    names = sorted(firsts)
    for k, a in enumerate(names):  # any two first tuples differ (ids or positions)
        assert all(firsts[a][0] != firsts[b][0] for b in names[k + 1 :])
    shown = [pair for seq in firsts.values() for pair in seq]  # (tuple, arrangement) pairs
    assert len(set(shown)) == len(shown)  # one tuple is never shown twice the same way
    assert len({seq[0][1] for seq in firsts.values()}) > 1  # items not in one fixed order for all
    assert len({tuple(t for t, _ in seq) for seq in firsts.values()}) > 1


def test_presentation_is_seeded_recorded_and_reproducible(tmp_path):
    def run(folder, seed):
        folder.mkdir()
        project = make_project(folder, n_items=40, n_tuples=20, per_tuple=1, cap=0.5)
        make_accounts(project, ["ann"])
        db = Database(project)
        db.transact(lambda conn: conn.execute("UPDATE annotators SET seed = ? WHERE name = 'ann'", (seed,)))
        s, me = Settings.load(db), ids_of(db)["ann"]
        shown = []
        for k in range(10):
            tup = next_tuple(db, s, me, lease=60, now=1000.0 + k)
            items = [i["id"] for i in tup["items"]]
            shown.append((tup["tuple_id"], items))
            submit(db, s, me, Submission(tup["tuple_id"], items[0], items[1], "", f"s{k}"), now=1000.5 + k)
        recorded = [
            (r[0], json.loads(r[1]))
            for r in db.conn().execute("SELECT tuple_id, positions FROM assignments ORDER BY handed_at")
        ]
        design = {r[0]: json.loads(r[1]) for r in db.conn().execute("SELECT id, items FROM tuples")}
        db.close()
        return shown, recorded, design

    first, recorded, design = run(tmp_path / "one", 12345)
    again, _, _ = run(tmp_path / "two", 12345)
    other, _, _ = run(tmp_path / "three", 999)
    assert first == recorded  # what was shown is what is stored
    assert first == again  # same seed, same presentation
    assert first != other
    assert [t for t, _ in first] != sorted(t for t, _ in first)  # not the design order of tuples ...
    assert sum(items != design[t] for t, items in first) >= 5  # ... nor of items (1 in 24 stays put)
    assert all(sorted(items) == sorted(design[t]) for t, items in first)


def test_undo_the_last_skip(tmp_path):
    project = make_project(tmp_path, n_tuples=6, per_tuple=1, cap=1.0)
    password = make_accounts(project, ["ann"])["ann"]
    with ServerProcess(project) as server:
        c = ApiClient(server.url)
        c.login("ann", password)
        assert c.request("POST", "/api/skip/undo", {})[0] == 409  # nothing to undo yet
        first = c.next()
        c.skip(first["tuple_id"])
        assert c.progress()["undo_tuple_id"] == first["tuple_id"]
        second = c.next()
        assert second["tuple_id"] != first["tuple_id"]
        undone = c.undo_skip()
        assert undone["tuple_id"] == first["tuple_id"] and undone["items"] == first["items"]
        assert c.next() == first  # the undone tuple comes first, same positions
        ids = [i["id"] for i in first["items"]]
        c.submit(first["tuple_id"], ids[0], ids[1])
        assert c.next() == second  # then the one handed out after the skip
        c.skip(second["tuple_id"])
        third = c.next()
        ids = [i["id"] for i in third["items"]]
        c.submit(third["tuple_id"], ids[0], ids[1])
        status, body, _ = c.request("POST", "/api/skip/undo", {})
        assert status == 409 and "only the last skip" in body["detail"]  # an answer came after the skip
        progress = c.progress()
        assert progress["skipped"] == 1 and progress["done"] == 2 and progress["seen"] == 3


def test_undo_is_refused_when_the_slot_went_to_someone_else(tmp_path):
    project = make_project(tmp_path, n_tuples=3, per_tuple=1, cap=1.0)
    make_accounts(project, ["a", "b"])
    db = Database(project)
    try:
        s, who = Settings.load(db), ids_of(db)
        tup = next_tuple(db, s, who["a"], lease=60, now=1000.0)
        skip(db, who["a"], tup["tuple_id"], now=1001.0)
        taken = []
        while (t := next_tuple(db, s, who["b"], lease=60, now=1002.0)) is not None:
            taken.append(t["tuple_id"])
            items = [i["id"] for i in t["items"]]
            submit(db, s, who["b"], Submission(t["tuple_id"], items[0], items[1], "", f"b{len(taken)}"), now=1002.0)
        assert tup["tuple_id"] in taken
        with pytest.raises(Refused) as exc:
            undo_skip(db, s, who["a"], lease=60, now=1003.0)
        assert exc.value.status == 409 and "another annotator" in exc.value.detail
    finally:
        db.close()


def test_export_records_tuple_positions_times_and_skips(tmp_path):
    project = make_project(tmp_path, n_tuples=6, per_tuple=1, cap=1.0)
    make_accounts(project, ["ann"])
    db = Database(project)
    try:
        s, me = Settings.load(db), ids_of(db)["ann"]
        tup = next_tuple(db, s, me, lease=60, now=1_700_000_000.0)
        skip(db, me, tup["tuple_id"], now=1_700_000_003.0)
        tup2 = next_tuple(db, s, me, lease=60, now=1_700_000_004.0)
        shown = [i["id"] for i in tup2["items"]]
        submit(db, s, me, Submission(tup2["tuple_id"], shown[2], shown[0], "=fine", "x"), now=1_700_000_016.5)
        out = tmp_path / "export.csv"
        assert export_csv(db, out) == (1, 1)
    finally:
        db.close()
    with open(out, newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    with open(skips_path(out), newline="") as fh:
        (skipped,) = list(csv.DictReader(fh))
    assert row["tuple_id"] == str(tup2["tuple_id"]) and row["shown_at"] == "2023-11-14T22:13:24Z"
    assert row["seconds_on_task"] == "12.5" and row["feedback"] == "'=fine"
    design = [row[f"Item{k}"] for k in range(1, 5)]
    assert [design[row["positions"].split().index(str(p))] for p in range(1, 5)] == shown
    assert (row["BestItem"], row["WorstItem"]) == (shown[2], shown[0])
    assert skipped["tuple_id"] == str(tup["tuple_id"]) and skipped["annotator"] == "ann"
    assert skipped["shown_at"] == "2023-11-14T22:13:20Z" and skipped["skipped_at"] == "2023-11-14T22:13:23Z"
    assert sorted(skipped["positions"].split()) == ["1", "2", "3", "4"]


def test_default_instructions_match_the_study(tmp_path):
    assert "known answer" not in default_instructions(gold=False)
    assert "known answer" in default_instructions(gold=True)
    assert "[gold]" not in default_instructions(gold=True)
    plain = make_project(tmp_path, n_tuples=4, name="plain")
    gold = [["1", "11", "21", "31", "11", "31"]]
    with_gold = make_project(tmp_path, n_tuples=4, name="gold", gold=gold)
    for project, expected in ((plain, False), (with_gold, True)):
        db = Database(project)
        assert ("known answer" in Settings.load(db).instructions) is expected
        db.close()


def _cli(*args):
    return run_cli("annotate", *args, env={"COLUMNS": "200"})


def test_add_annotators_from_a_csv_writes_passwords_privately(tmp_path):
    project = make_project(tmp_path, n_tuples=4)
    accounts = write_csv(tmp_path / "people.csv", ["name", "admin"], [["ann", ""], ["bob", "no"], ["lead", "yes"]])
    proc = _cli("add-annotators", project, accounts)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "people_passwords.csv"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with open(out, newline="") as fh:
        passwords = {r["name"]: r["password"] for r in csv.DictReader(fh)}
    assert set(passwords) == {"ann", "bob", "lead"}
    assert not any(pw in proc.stdout + proc.stderr for pw in passwords.values())
    db = Database(project)
    rows = {r["name"]: r for r in db.conn().execute("SELECT name, pw_hash, is_admin, seed FROM annotators")}
    db.close()
    assert all(verify_password(rows[n]["pw_hash"], pw) for n, pw in passwords.items())
    assert [rows[n]["is_admin"] for n in ("ann", "bob", "lead")] == [0, 0, 1]
    assert len({rows[n]["seed"] for n in rows}) == 3
    again = _cli("add-annotators", project, accounts, "--passwords-out", tmp_path / "new.csv")
    assert again.returncode != 0 and "already exists" in again.stderr and "Traceback" not in again.stderr
    mixed = write_csv(tmp_path / "mixed.csv", ["name"], [["carol"], ["bad name!"]])
    refused = _cli("add-annotators", project, mixed)
    assert refused.returncode != 0 and "bad name" in refused.stderr
    db = Database(project)
    assert db.conn().execute("SELECT COUNT(*) FROM annotators WHERE name = 'carol'").fetchone()[0] == 0  # all or none
    db.close()
    exists = _cli(
        "add-annotators", project, write_csv(tmp_path / "d.csv", ["name"], [["dave"]]), "--passwords-out", out
    )
    assert exists.returncode != 0 and "already exists" in exists.stderr


def test_a_project_from_the_previous_schema_is_migrated(tmp_path):
    project = make_project(tmp_path, n_tuples=4, per_tuple=1, cap=1.0)
    make_accounts(project, ["ann"])
    db = Database(project)
    conn = db.conn()
    for table, column in (
        ("annotators", "seed"),
        ("sessions", "last_seen"),
        ("assignments", "positions"),
        ("assignments", "skipped_at"),
        ("assignments", "answered_at"),
    ):
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.close()
    db = Database(project)
    try:
        assert db.read_meta()["schema_version"] == "2"
        s, me = Settings.load(db), ids_of(db)["ann"]
        tup = next_tuple(db, s, me, lease=60)
        items = [i["id"] for i in tup["items"]]
        assert submit(db, s, me, Submission(tup["tuple_id"], items[0], items[1], "", "m"))["ok"]
    finally:
        db.close()
