"""`biaslab annotate init / add-annotator / reset-password / status / export` through the CLI (in process)."""

from __future__ import annotations

import csv
import json

import pytest

from biaslab.annotate.assignment import Submission, next_tuple, submit
from biaslab.annotate.db import Database
from biaslab.annotate.export import safe_cell
from biaslab.annotate.project import Settings
from biaslab.bws.data import read_annotations
from biaslab.bws.score import score_counting
from tests.annotate.helpers import ring_tuples, write_csv
from tests.cli_runner import run_cli


def biaslab(*args):
    return run_cli("annotate", *args, env={"COLUMNS": "200"})


@pytest.fixture
def files(tmp_path):
    ids = [str(i) for i in range(1, 21)]
    items = write_csv(tmp_path / "items.tsv", ["uid", "response"], [[i, f"text {i}"] for i in ids])
    items.write_text(items.read_text().replace(",", "\t"))
    tuples = write_csv(
        tmp_path / "tuples.csv",
        ["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"],
        [t + [t[0], t[1]] for t in ring_tuples(ids, 10)] * 2,
    )  # each tuple twice, as in FSB
    gold = write_csv(
        tmp_path / "gold.csv",
        ["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"],
        [["1", "6", "11", "16", "6", "16"]],
    )
    return tmp_path, items, tuples, gold


def test_init_add_status_export(files):
    tmp, items, tuples, gold = files
    project = tmp / "study"
    proc = biaslab(
        "init", project, "--items", items, "--tuples", tuples, "--per-tuple", 2, "--cap", 0.3, "--gold", gold
    )
    assert proc.returncode == 0, proc.stderr
    assert "20 items, 10 tuples" in proc.stdout and "1 gold tuple\n" in proc.stdout
    assert "may be shown 3 of the 10 tuples (cap 0.3: --cap;" in proc.stdout
    assert "at least 7 annotators are needed" in proc.stdout
    out = biaslab("add-annotator", project, "ann1")
    assert out.returncode == 0, out.stderr
    password = out.stdout.strip().splitlines()[-1]
    assert len(password) >= 12 and " " not in password
    db = Database(project)
    stored = db.conn().execute("SELECT pw_hash FROM annotators WHERE name = 'ann1'").fetchone()[0]
    assert stored.startswith("$argon2id$") and password not in stored
    assert biaslab("add-annotator", project, "boss", "--admin").returncode == 0
    dup = biaslab("add-annotator", project, "ann1")
    assert dup.returncode != 0 and "already exists" in dup.stderr and "Traceback" not in dup.stderr
    # Annotate a few tuples directly, with hostile feedback, then look at status and the export.
    s = Settings.load(db)
    me = db.conn().execute("SELECT id FROM annotators WHERE name = 'ann1'").fetchone()[0]
    feedbacks = ['=HYPERLINK("http://x","y")', "+1", 'fine, "quoted"\nand a new line']
    for k, fb in enumerate(feedbacks):
        tup = next_tuple(db, s, me, lease=60)
        items_ = [i["id"] for i in tup["items"]]
        submit(db, s, me, Submission(tup["tuple_id"], items_[0], items_[3], fb, f"s{k}"))
    db.close()
    status = biaslab("status", project, "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["annotations"] == 3 and data["tuples"] == 10 and data["gold_tuples"] == 1
    ann = next(a for a in data["annotators"] if a["name"] == "ann1")
    assert ann["done"] == 3 and ann["gold_answered"] == 0
    table = biaslab("status", project)
    assert table.returncode == 0 and "ann1" in table.stdout and "3 of 20 annotations" in table.stdout
    out_csv = tmp / "annotations.csv"
    exp = biaslab("export", project, "--out", out_csv)
    assert exp.returncode == 0, exp.stderr
    with open(out_csv, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == [
        "Item1",
        "Item2",
        "Item3",
        "Item4",
        "BestItem",
        "WorstItem",
        "tuple_id",
        "annotator",
        "positions",
        "shown_at",
        "submitted_at",
        "seconds_on_task",
        "feedback",
        "construct",
    ]
    assert {r["construct"] for r in rows} == {"gender bias"}  # the default: the Fifty Shades of Bias study
    assert len(rows) == 3 and all(r["annotator"] == "ann1" for r in rows)
    for r in rows:  # best was the statement shown 1st, worst the one shown 4th: positions say which Items those were
        where = {int(p): r[f"Item{k + 1}"] for k, p in enumerate(r["positions"].split())}
        assert sorted(where) == [1, 2, 3, 4] and (r["BestItem"], r["WorstItem"]) == (where[1], where[4])
        assert r["shown_at"].endswith("Z") and float(r["seconds_on_task"]) >= 0 and int(r["tuple_id"]) >= 1
    assert [r["feedback"] for r in rows] == ["'" + feedbacks[0], "'+1", feedbacks[2]]
    assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r.values())
    scores = score_counting(read_annotations(out_csv)).set_index("id")  # what `biaslab bws score` computes
    shown = {r[f"Item{k}"] for r in rows for k in range(1, 5)}
    assert set(scores.index) == shown and scores["n_appearances"].sum() == 12
    scored = run_cli("bws", "score", "--annotations", out_csv, "--out", tmp / "scores.csv", "--resamples", "0")
    assert scored.returncode == 0, scored.stderr
    with open(tmp / "scores.csv", newline="") as fh:
        cli_scores = {r["id"]: float(r["score"]) for r in csv.DictReader(fh)}
    assert cli_scores == pytest.approx(scores["score"].to_dict())
    assert all(scores.loc[r["BestItem"], "n_best"] >= 1 and scores.loc[r["WorstItem"], "n_worst"] >= 1 for r in rows)


def test_safe_cell_neutralises_formulas():
    for cell in ("=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1", "  =1", "\u00a0=cmd|' /C calc'!A0"):
        assert safe_cell(cell).startswith("'"), cell
    for cell in ("plain text", "1.5", "a=b", "", None, "595"):
        assert safe_cell(cell) == ("" if cell is None else cell)


def test_reset_password(files):
    tmp, items, tuples, _ = files
    project = tmp / "p"
    assert biaslab("init", project, "--items", items, "--tuples", tuples, "--cap", 0.5).returncode == 0
    first = biaslab("add-annotator", project, "ann").stdout.splitlines()[-1]
    second = biaslab("reset-password", project, "ann")
    assert second.returncode == 0 and second.stdout.splitlines()[-1] != first
    missing = biaslab("reset-password", project, "nobody")
    assert missing.returncode != 0 and "no annotator named" in missing.stderr


@pytest.mark.parametrize(
    "case, args, message",
    [
        ("no items", ["--items", "missing.csv"], "missing.csv: no such file"),
        ("both", ["--tuples", "tuples.csv", "--seed", "1"], "either --tuples FILE"),
        ("cap", ["--tuples", "tuples.csv", "--cap", "1.5"], "--cap 1.5"),
        ("tiny cap", ["--tuples", "tuples.csv", "--cap", "0.01"], "no tuple at all"),
        ("per tuple", ["--tuples", "tuples.csv", "--per-tuple", "0"], "--per-tuple 0"),
        ("unknown item", ["--tuples", "bad_tuples.csv"], "row 2 column Item3: item 99 is not in the items file"),
        ("gold answer", ["--tuples", "tuples.csv", "--gold", "bad_gold.csv"], "row 2 column BestItem"),
        ("bad id", ["--items", "bad_items.csv"], "row 3 column id: item id '=1+1'"),
        ("empty construct", ["--tuples", "tuples.csv", "--construct", " "], "--construct ' ': name the bias"),
        ("appearances with tuples", ["--tuples", "tuples.csv", "--appearances", "4"], "with --tuples FILE leave them"),
        ("too few items", ["--items", "eight.csv"], "lower --appearances to 7 or less, or give at least 9 items"),
        ("no appearances", ["--items", "eight.csv", "--appearances", "0"], "--appearances 0 must be at least 1"),
    ],
)
def test_init_errors_are_one_line(files, case, args, message, monkeypatch):
    tmp, items, tuples, _ = files
    write_csv(tmp / "bad_tuples.csv", ["Item1", "Item2", "Item3", "Item4"], [["1", "2", "99", "4"]])
    write_csv(
        tmp / "bad_gold.csv",
        ["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"],
        [["1", "2", "3", "4", "7", "1"]],
    )
    write_csv(tmp / "bad_items.csv", ["id", "text"], [["1", "ok"], ["=1+1", "formula id"]])
    write_csv(tmp / "eight.csv", ["id", "text"], [[str(i), f"text {i}"] for i in range(8)])
    if "--items" not in args:
        args = ["--items", str(items), *args]
    monkeypatch.chdir(tmp)  # relative file names; restored after the test
    proc = biaslab("init", tmp / f"proj-{case.replace(' ', '-')}", *args)
    assert proc.returncode != 0
    assert message in proc.stderr.replace("\n", "")
    assert "Traceback" not in proc.stderr
    assert not (tmp / f"proj-{case.replace(' ', '-')}" / "annotate.sqlite").exists()


def test_commands_on_a_folder_without_project(tmp_path):
    for cmd in (
        ["status", tmp_path],
        ["export", tmp_path, "--out", tmp_path / "x.csv"],
        ["serve", tmp_path],
        ["add-annotator", tmp_path, "ann"],
    ):
        proc = biaslab(*cmd)
        assert proc.returncode != 0 and "is not an annotation project" in proc.stderr, cmd
        assert "Traceback" not in proc.stderr


def test_init_again_with_the_same_settings_changes_nothing(files):
    tmp, items, tuples, _ = files
    assert biaslab("init", tmp / "p", "--items", items, "--tuples", tuples, "--cap", 0.5).returncode == 0
    again = biaslab("init", tmp / "p", "--items", items, "--tuples", tuples, "--cap", 0.5)
    assert again.returncode == 0 and "nothing to change" in again.stdout, again.stderr


def test_serve_refuses_a_busy_port_and_a_second_server(files):
    import socket

    from tests.annotate.helpers import ServerProcess

    tmp, items, tuples, _ = files
    project = tmp / "p"
    assert biaslab("init", project, "--items", items, "--tuples", tuples, "--cap", 0.5).returncode == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        proc = biaslab("serve", project, "--port", busy.getsockname()[1])
    assert proc.returncode != 0 and "cannot listen on 127.0.0.1" in proc.stderr and "Traceback" not in proc.stderr
    with ServerProcess(project):
        second = biaslab("serve", project, "--port", 1)
    assert second.returncode != 0 and "already serving" in second.stderr


def test_init_with_few_items_takes_the_appearances_the_message_names(files):
    tmp, _, _, _ = files
    eight = write_csv(tmp / "eight.csv", ["id", "text"], [[str(i), f"text {i}"] for i in range(8)])
    refused = biaslab("init", tmp / "p", "--items", eight)
    assert refused.returncode != 0 and "lower --appearances to 7 or less" in refused.stderr.replace("\n", "")
    made = biaslab("init", tmp / "p", "--items", eight, "--appearances", 4, "--seed", 3, "--cap", 0.5)
    assert made.returncode == 0, made.stderr
    assert "8 items, 8 tuples (designed with seed 3, each item in 4 tuples)" in made.stdout
    db = Database(tmp / "p")
    tuples = [json.loads(r[0]) for r in db.conn().execute("SELECT items FROM tuples")]
    db.close()
    assert len(tuples) == 8 and all(sum(i in t for t in tuples) == 4 for i in map(str, range(8)))


def test_init_construct_names_the_study(files):
    tmp, items, tuples, _ = files
    made = biaslab(
        "init", tmp / "p", "--items", items, "--tuples", tuples, "--cap", 0.5, "--construct", "  anti-Muslim   bias "
    )
    assert made.returncode == 0, made.stderr
    assert "construct: anti-Muslim bias" in made.stdout and "default instructions" in made.stdout
    db = Database(tmp / "p")
    s = Settings.load(db)
    db.close()
    assert s.construct == "anti-Muslim bias"
    assert "most anti-Muslim bias" in s.instructions and "gender" not in s.instructions.lower()
    status = biaslab("status", tmp / "p")
    assert status.returncode == 0 and "study of anti-Muslim bias" in status.stdout
    own = tmp / "own.md"
    own.write_text("Pick the most anti-Muslim statement.\n")
    hinted = biaslab("init", tmp / "q", "--items", items, "--tuples", tuples, "--cap", 0.5, "--instructions", own)
    assert hinted.returncode == 0 and "--construct" in hinted.stdout and "your --instructions" in hinted.stdout
