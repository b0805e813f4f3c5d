"""The default cap, and `init` on an existing study: settings change until the first tuple is shown."""

from __future__ import annotations

import pytest

from biaslab.annotate.assignment import Submission, next_tuple, submit
from biaslab.annotate.db import Database, try_lock
from biaslab.annotate.project import Settings, cap_count, default_cap, init_project
from tests.annotate.helpers import make_project, write_csv
from tests.cli_runner import run_cli


def biaslab(*args):
    return run_cli("annotate", *args, env={"COLUMNS": "200"})


def settings(project) -> Settings:
    db = Database(project)
    try:
        return Settings.load(db)
    finally:
        db.close()


@pytest.fixture
def twelve(tmp_path):
    return write_csv(tmp_path / "items.csv", ["id", "text"], [[str(i), f"text {i}"] for i in range(1, 13)])


@pytest.mark.parametrize(
    "n_tuples, share, count",
    [
        (24, 0.5, 12),  # 12 items: 6 annotators at 3 per tuple, not 72
        (25, 0.48, 12),
        (320, 0.5, 160),
        (1000, 0.16, 160),
        (2000, 0.08, 160),  # the paper's study: 8%, as before
        (10_000, 0.08, 800),
        (3, 1 / 3, 1),
        (1, 1.0, 1),
    ],
)
def test_default_cap_scales_with_the_study(n_tuples, share, count):
    assert default_cap(n_tuples) == pytest.approx(share)
    assert cap_count(default_cap(n_tuples), n_tuples) == count


def test_init_prints_what_the_cap_means(tmp_path, twelve):
    made = biaslab("init", tmp_path / "p", "--items", twelve, "--attempts", 1)  # 1 design attempt: quick
    assert made.returncode == 0, made.stderr
    assert "12 items, 24 tuples (designed with seed 0, each item in 8 tuples), 0 gold tuples\n" in made.stdout
    assert (
        "3 annotations per tuple; each annotator may be shown 12 of the 24 tuples (cap 0.5: the default for 24 "
        "tuples; answered and skipped alike); at least 6 annotators are needed\n"
    ) in made.stdout
    own = biaslab(
        "init", tmp_path / "q", "--items", twelve, "--attempts", 1, "--cap", 1, "--per-tuple", 1
    )  # an explicit cap wins
    assert own.returncode == 0, own.stderr
    assert (
        "1 annotation per tuple; each annotator may be shown 24 of the 24 tuples (cap 1: --cap; answered and "
        "skipped alike); at least 1 annotator is needed\n"
    ) in own.stdout


def test_init_again_changes_settings_before_the_study_starts(tmp_path, twelve):
    project = tmp_path / "p"
    init_project(project, twelve, attempts=1)
    db = Database(project)
    db.transact(
        lambda conn: conn.execute(
            "INSERT INTO annotators (name, pw_hash, created_at, consented_at) VALUES ('a', 'x', 'then', 'then')"
        )
    )
    db.close()
    changed = biaslab("init", project, "--cap", 0.25)
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.splitlines()[0] == f"changed {project}: cap 0.5 -> 0.25"
    assert "may be shown 6 of the 24 tuples (cap 0.25: --cap;" in changed.stdout
    assert "at least 12 annotators are needed" in changed.stdout
    assert "1 annotator who accepted the content warning will be shown it" in changed.stdout
    s = settings(project)
    assert (s.cap, s.cap_count, s.per_tuple) == (0.25, 6, 3)  # what was not given is kept
    db = Database(project)
    assert db.conn().execute("SELECT consented_at FROM annotators").fetchone()[0] is None
    db.close()
    renamed = biaslab("init", project, "--construct", "anti-Muslim bias", "--per-tuple", 2)
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout.splitlines()[0] == (
        f"changed {project}: per-tuple 3 -> 2, construct 'gender bias' -> 'anti-Muslim bias', instructions (new text)"
    )
    s = settings(project)
    assert s.per_tuple == 2 and "most anti-Muslim bias" in s.instructions  # the default instructions follow


def test_init_again_after_an_answer_is_refused(tmp_path):
    project = make_project(tmp_path, n_tuples=12, per_tuple=3, cap=0.5)
    db = Database(project)
    me = db.transact(
        lambda conn: (
            conn.execute("INSERT INTO annotators (name, pw_hash, created_at) VALUES ('a', 'x', 'now')").lastrowid
        )
    )
    s = Settings.load(db)
    tup = next_tuple(db, s, me, lease=60)
    ids = [i["id"] for i in tup["items"]]
    submit(db, s, me, Submission(tup["tuple_id"], ids[0], ids[1], "", "s1"))
    before = db.read_meta()
    db.close()
    refused = biaslab("init", project, "--cap", 1.0, "--per-tuple", 2)
    assert refused.returncode != 0 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "--cap and --per-tuple cannot change: 1 tuple has been shown to annotators (1 answered)" in refused.stderr
    assert "make a new study in a new folder" in refused.stderr
    db = Database(project)
    assert db.read_meta() == before
    db.close()


def test_init_again_never_changes_the_content_nor_under_a_server(tmp_path, twelve):
    project = tmp_path / "p"
    init_project(project, twelve, attempts=1)
    other = write_csv(tmp_path / "other.csv", ["id", "text"], [[str(i), f"other {i}"] for i in range(1, 13)])
    refused = biaslab("init", project, "--items", other, "--cap", 1)
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
    assert "the items of other.csv (not the study's)" in refused.stderr and "fixed when it is made" in refused.stderr
    redesigned = biaslab("init", project, "--items", twelve, "--seed", 1, "--attempts", 1, "--cap", 1)
    assert redesigned.returncode != 0 and "the designed tuples (not the study's)" in redesigned.stderr
    server = try_lock(project)  # what a running `serve` holds
    assert server is not None
    try:
        busy = biaslab("init", project, "--cap", 1)
    finally:
        server.close()
    assert busy.returncode != 0 and "stop it, run init again, then start it again" in busy.stderr
    assert settings(project).cap == 0.5
    same = biaslab(
        "init", project, "--items", twelve, "--seed", 0, "--attempts", 1, "--cap", 1
    )  # the same content: fine
    assert same.returncode == 0 and "cap 0.5 -> 1" in same.stdout, same.stderr
