"""The construct a study rates (``init --construct``), projects made before it, and what the status
counts against the cap. The pages themselves are checked in Chromium (test_browser.py)."""

from __future__ import annotations

import pytest

from biaslab.annotate.assignment import next_tuple
from biaslab.annotate.db import Database
from biaslab.annotate.export import export_csv
from biaslab.annotate.project import DEFAULT_CONSTRUCT, Settings, check_construct, default_instructions
from biaslab.annotate.skips import skip
from biaslab.annotate.status import project_status
from biaslab.errors import ConfigError
from tests.annotate.helpers import make_accounts, make_project
from tests.annotate.test_assignment import answer


def test_default_instructions_name_the_construct_and_keep_the_papers_for_gender():
    gender = default_instructions(gold=True)
    assert gender == default_instructions(gold=True, construct="Gender Bias")
    assert "most negatively gender-biased" in gender and "known answer" in gender
    other = default_instructions(gold=False, construct="antisemitism")
    assert "gender" not in other.lower() and "{construct}" not in other
    assert "the **most antisemitism**" in other and "Judge **antisemitism** only" in other
    assert "known answer" not in other and "known answer" in default_instructions(gold=True, construct="x bias")


@pytest.mark.parametrize("bad", ["", "   ", "x" * 81, "anti-\x1bMuslim", "bias\u202e"])
def test_a_construct_must_be_one_printable_line(bad):
    with pytest.raises(ConfigError, match="--construct"):
        check_construct(bad)


def test_construct_is_stored_and_exported(tmp_path):
    project = make_project(tmp_path, n_items=20, n_tuples=6, per_tuple=1, cap=1.0, construct="anti-LGBTQ+ bias")
    make_accounts(project, ["ann"])
    db = Database(project)
    s = Settings.load(db)
    me = db.conn().execute("SELECT id FROM annotators").fetchone()[0]
    answer(db, s, me, next_tuple(db, s, me, lease=60))
    assert s.construct == "anti-LGBTQ+ bias" and project_status(db, s, reliability=False)["construct"] == s.construct
    export_csv(db, tmp_path / "out.csv")
    db.close()
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert lines[0].endswith(",construct") and lines[1].endswith(",anti-LGBTQ+ bias")


def test_a_project_made_before_the_construct_field_reads_as_gender_bias(tmp_path):
    project = make_project(tmp_path, n_items=20, n_tuples=6, per_tuple=1, cap=1.0)
    db = Database(project)
    db.conn().execute("DELETE FROM meta WHERE key = 'construct'")
    assert "construct" not in db.read_meta()
    s = Settings.load(db)
    assert s.construct == DEFAULT_CONSTRUCT == "gender bias"
    export_csv(db, tmp_path / "old.csv")
    db.close()
    assert (tmp_path / "old.csv").read_text().splitlines()[0].endswith(",construct")


def test_seen_adds_up_what_the_cap_limits(tmp_path):
    # cap 0.5 of 12 tuples = 6; gold every 2nd answer. Shown: 2 study answered, 1 gold answered,
    # 1 skipped, 1 let expire, 1 open now = 6 seen: the cap is reached, although only 2 are "done".
    gold = [["1", "11", "21", "31", "11", "31"], ["2", "12", "22", "32", "12", "32"]]
    project = make_project(tmp_path, n_items=40, n_tuples=12, per_tuple=2, cap=0.5, gold=gold, gold_rate=0.5)
    make_accounts(project, ["ann"])
    db = Database(project)
    s = Settings.load(db)
    me = db.conn().execute("SELECT id FROM annotators").fetchone()[0]
    t = 1000.0
    answer(db, s, me, next_tuple(db, s, me, lease=60, now=t), now=t)  # study
    answer(db, s, me, next_tuple(db, s, me, lease=60, now=t), now=t)  # gold (rate 0.5)
    answer(db, s, me, next_tuple(db, s, me, lease=60, now=t), now=t)  # study
    skip(db, me, next_tuple(db, s, me, lease=60, now=t)["tuple_id"], now=t)
    next_tuple(db, s, me, lease=60, now=t)  # left to expire
    later = t + 120
    expired = next_tuple(db, s, me, lease=60, now=later)  # reclaims it, hands a new one
    assert expired is not None and next_tuple(db, s, me, lease=60, now=later) == expired
    row = next(a for a in project_status(db, s, reliability=False, now=later)["annotators"] if a["name"] == "ann")
    assert (row["done"], row["gold_answered"], row["skipped"], row["expired"], row["open"]) == (2, 1, 1, 1, 1)
    assert row["seen"] == 6 == s.cap_count and row["share_of_cap"] == 1.0
    answer(db, s, me, expired, now=later)
    assert next_tuple(db, s, me, lease=60, now=later) is None  # the cap holds what seen counts
    db.close()
