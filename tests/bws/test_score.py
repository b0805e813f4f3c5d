"""Counting scores: a hand-computed case, the released FSB scores, and bad input."""

import numpy as np
import pandas as pd
import pytest

from biaslab.bws.data import index_annotations
from biaslab.bws.score import add_bootstrap_ci, read_annotations, score_counting
from biaslab.errors import DataError
from tests.conftest import requires_data

HAND = pd.DataFrame(
    [  # Item1..Item4, Best, Worst, annotator (extra column, ignored)
        ["a", "b", "c", "d", "a", "d", "p1"],
        ["a", "b", "c", "d", "b", "d", "p2"],
        ["c", "e", "a", "f", "a", "f", "p1"],
        ["b", "e", "d", "f", "e", "d", "p3"],
    ],
    columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem", "annotator"],
)


def test_counting_by_hand():
    got = score_counting(HAND).set_index("id")
    # a: 3 appearances, best 2, worst 0 -> 2/3; b: 3, best 1 -> 1/3; c: 3, none -> 0
    # d: 3, worst 3 -> -1; e: 2, best 1 -> 1/2; f: 2, worst 1 -> -1/2
    expected = {"a": (2 / 3, 2, 0, 3), "b": (1 / 3, 1, 0, 3), "c": (0.0, 0, 0, 3), "d": (-1.0, 0, 3, 3),
                "e": (0.5, 1, 0, 2), "f": (-0.5, 0, 1, 2)}
    assert set(got.index) == set(expected)
    for item, (score, nb, nw, na) in expected.items():
        row = got.loc[item]
        assert row.score == pytest.approx(score) and row.score_normalized == pytest.approx((score + 1) / 2)
        assert (row.n_best, row.n_worst, row.n_appearances) == (nb, nw, na)
    assert list(score_counting(HAND)["id"][:3]) == ["a", "e", "b"]  # highest first
    assert list(score_counting(HAND).columns) == ["id", "score", "score_normalized", "n_best", "n_worst",
                                                  "n_appearances"]


def test_numeric_frames_score_like_text_ids():
    df = pd.DataFrame({"Item1": [1, 5], "Item2": [2, 6], "Item3": [3, 7], "Item4": [4.0, 8.0],
                       "BestItem": [1, 8], "WorstItem": [4, 5]})
    got = score_counting(df).set_index("id")
    assert got.loc["1", "score"] == 1 and got.loc["4", "score"] == -1 and got.loc["8", "score"] == 1
    assert list(got.index[:3]) == ["1", "8", "2"]  # ties in natural (numeric) id order


def test_tuple_identity_ignores_presentation_order():
    data = index_annotations(HAND)
    assert data.n_tuples == 3  # rows 1 and 2 show the same set of items


@requires_data
def test_reproduces_released_fsb_scores_at_three_decimals():
    from biaslab.data import data_path

    ann = read_annotations(data_path("fsb/fsb-tuples-annotations.csv"))
    assert len(ann) == 5360
    released = pd.read_csv(data_path("fsb/fsb_final_scores.csv"), index_col=0, dtype={"id": str})
    ours = score_counting(ann, decimals=3)
    assert len(ours) == len(released) == 1000
    both = released.merge(ours, on="id", suffixes=("_rel", ""), validate="one_to_one")
    assert len(both) == 1000
    assert (both["score"] == both["score_rel"]).all()
    assert (both["score_normalized"] == both["score_normalized_rel"]).all()  # same float arithmetic
    # unrounded scores round to the release too, and the sort order agrees up to ties
    raw = score_counting(ann).set_index("id").loc[both["id"]]
    assert np.array_equal(np.round(raw["score"].to_numpy(), 3), both["score_rel"].to_numpy())
    assert np.all(np.diff(released["score"].to_numpy()) <= 0)
    assert (raw["n_appearances"] >= 16).all() and (raw["n_appearances"] <= 24).all()


def test_bootstrap_ci_brackets_the_score_and_is_seeded():
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(300):
        t = rng.choice(list("abcdefgh"), 4, replace=False)
        b, w = rng.choice(4, 2, replace=False)
        rows.append([*t, t[b], t[w]])
    df = pd.DataFrame(rows, columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"])
    data = index_annotations(df)
    scores = score_counting(df)
    a = add_bootstrap_ci(scores, data, n_resamples=300, seed=1)
    b = add_bootstrap_ci(scores, data, n_resamples=300, seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert ((a.ci_low <= a.score) & (a.score <= a.ci_high)).all()
    assert ((a.ci_high - a.ci_low) > 0).all() and ((a.ci_high - a.ci_low) < 0.6).all()


def write(tmp_path, text, name="ann.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("text,fragment", [
    ("", "empty"),
    ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n", "no annotations"),
    ("Item1,Item2,Item3,Item4,BestItem\n1,2,3,4,1\n", "missing column(s) WorstItem"),
    ("A,B,C\n1,2,3\n", "no Item1..ItemK"),
    ("Item1,Item2,Item4,BestItem,WorstItem\n1,2,3,1,2\n", "no gaps"),
    ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n1,2,3,4,2,2\n",
     "line 3: BestItem and WorstItem are both 2"),
    ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,9,4\n", "line 2: BestItem 9 is not one of"),
    ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n5,6,7,8,5,9\n", "line 3: WorstItem 9 is not one of"),
    ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n1,2,2,4,1,4\n", "line 3: id 2 appears twice"),
    ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,,3,4,1,4\n", "line 2: empty Item2"),
    # blank lines are skipped but counted, so the line is the file's
    ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n\n1,2,3,4,1,4\n,,,,,\n1,2,2,4,1,4\n", "line 5: id 2 appears twice"),
])
def test_bad_annotation_files(tmp_path, text, fragment):
    p = write(tmp_path, text)
    with pytest.raises(DataError) as err:
        read_annotations(p)
    msg = str(err.value)
    assert fragment in msg and str(p) in msg and "\n" not in msg


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_annotations(tmp_path / "nope.csv")


def test_tsv_and_extra_columns(tmp_path):
    p = write(tmp_path, "Item1\tItem2\tItem3\tBestItem\tWorstItem\tfeedback\nx\ty\tz\tx\tz\tfine\n", "a.tsv")
    got = score_counting(read_annotations(p)).set_index("id")
    assert got.loc["x", "score"] == 1 and got.loc["y", "score"] == 0 and got.loc["z", "score"] == -1
