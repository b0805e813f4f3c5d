"""The server on the Fifty Shades of Bias data: a project from the released texts and tuples (or a
fresh design), the released answers replayed through the assignment rules, and an export that
the BWS toolkit scores to the same counting scores as the released annotations it came from."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pandas as pd
import pytest

from biaslab.annotate.assignment import Submission, next_tuple, submit
from biaslab.annotate.auth import add_annotator
from biaslab.annotate.db import Database
from biaslab.annotate.export import export_csv
from biaslab.annotate.project import Settings, init_project
from biaslab.annotate.status import project_status
from biaslab.bws.data import index_annotations, read_annotations
from biaslab.bws.reliability import split_half_reliability
from biaslab.bws.score import score_counting
from tests.conftest import requires_data

pytestmark = requires_data


def fsb(name):
    from biaslab.data import data_path

    return data_path(f"fsb/{name}")


def test_project_from_the_released_files(tmp_path):
    summary = init_project(tmp_path / "fsb", fsb("FSB_text.csv"), tuples_file=fsb("fsb-tuples-annotations.csv"))
    # 5,360 annotation rows hold the 2,000 distinct tuples; the paper's 8% of them is 160 per annotator.
    assert (summary["items"], summary["tuples"], summary["cap_count"]) == (1000, 2000, 160)
    db = Database(tmp_path / "fsb")
    texts = dict(db.conn().execute("SELECT id, text FROM items WHERE id IN ('1', '2')").fetchall())
    db.close()
    released = pd.read_csv(fsb("FSB_text.csv"))
    assert texts["1"] == released.loc[released.uid == 1, "response"].item()


def test_designed_project_puts_every_text_in_eight_tuples(tmp_path):
    summary = init_project(tmp_path / "fsb", fsb("FSB_text.csv"), seed=7)
    assert summary["tuples"] == 2000 and summary["design"] == "designed with seed 7, each item in 8 tuples"
    db = Database(tmp_path / "fsb")
    tuples = [json.loads(r[0]) for r in db.conn().execute("SELECT items FROM tuples")]
    db.close()
    counts = Counter(i for t in tuples for i in t)
    assert len(counts) == 1000 and set(counts.values()) == {8}


def test_replayed_release_exports_what_bws_scores_like_the_release(tmp_path):
    released = read_annotations(fsb("fsb-tuples-annotations.csv"))
    cols = ["Item1", "Item2", "Item3", "Item4"]
    answers = defaultdict(list)  # tuple (as a set) -> released (best, worst) in file order
    for row in released.itertuples(index=False):
        answers[frozenset(getattr(row, c) for c in cols)].append((row.BestItem, row.WorstItem))
    first = released.drop_duplicates(subset=cols).head(150)  # the first 150 distinct tuples
    tuples_file = tmp_path / "tuples.csv"
    first[cols].to_csv(tuples_file, index=False)
    init_project(tmp_path / "p", fsb("FSB_text.csv"), tuples_file=tuples_file, per_tuple=2, cap=0.5)  # 75 each
    db = Database(tmp_path / "p")
    s = Settings.load(db)
    people = [f"a{k}" for k in range(4)]
    for name in people:
        add_annotator(db, name)
    ids = dict(db.conn().execute("SELECT name, id FROM annotators").fetchall())
    used = Counter()
    for name in people:  # each annotator works until nothing is left
        while (tup := next_tuple(db, s, ids[name], lease=600)) is not None:
            key = frozenset(i["id"] for i in tup["items"])
            best, worst = answers[key][used[key]]  # the next released answer for this tuple
            used[key] += 1
            submit(db, s, ids[name], Submission(tup["tuple_id"], best, worst, "", f"{name}-{tup['tuple_id']}"))
    out = tmp_path / "annotations.csv"
    assert export_csv(db, out) == (300, 0)
    status = project_status(db, s)
    db.close()
    exported = read_annotations(out)
    assert exported.groupby(cols).size().eq(2).all() and len(exported.groupby(cols)) == 150
    assert set(exported["annotator"]) == set(people)
    # The same released answers, taken directly from the file: the first two of each of these tuples.
    wanted = {frozenset(r) for r in first[cols].itertuples(index=False)}
    keys = [frozenset(r) for r in released[cols].itertuples(index=False)]
    taken = Counter()
    rows = []
    for position, key in enumerate(keys):
        if key in wanted and taken[key] < 2:
            taken[key] += 1
            rows.append(position)
    chosen = released.iloc[rows]
    ours = score_counting(exported).set_index("id").sort_index()
    theirs = score_counting(chosen).set_index("id").sort_index()
    pd.testing.assert_frame_equal(ours, theirs)
    # Reliability so far = the BWS toolkit's split-half reliability of the exported annotations.
    shr = split_half_reliability(index_annotations(exported), trials=100, seed=0)
    rel = status["reliability"]
    assert (rel["annotations"], rel["tuples_with_2_or_more"], rel["trials"]) == (300, 150, 100)
    assert rel["pearson_mean"] == pytest.approx(shr.pearson_mean, abs=1e-12)
    assert rel["spearman_sd"] == pytest.approx(shr.spearman_sd, abs=1e-12)
    assert 0.3 < rel["pearson_mean"] < 1
