"""Counting scores: a hand-computed case, the released FSB scores, and bad input."""

import numpy as np
import pandas as pd
import pytest

from biaslab.bws.data import index_annotations
from biaslab.bws.score import (
    add_bootstrap_ci,
    add_score_ci,
    counting_scores,
    read_annotations,
    score_ci,
    score_counting,
)
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
    expected = {
        "a": (2 / 3, 2, 0, 3),
        "b": (1 / 3, 1, 0, 3),
        "c": (0.0, 0, 0, 3),
        "d": (-1.0, 0, 3, 3),
        "e": (0.5, 1, 0, 2),
        "f": (-0.5, 0, 1, 2),
    }
    assert set(got.index) == set(expected)
    for item, (score, nb, nw, na) in expected.items():
        row = got.loc[item]
        assert row.score == pytest.approx(score) and row.score_normalized == pytest.approx((score + 1) / 2)
        assert (row.n_best, row.n_worst, row.n_appearances) == (nb, nw, na)
    assert list(score_counting(HAND)["id"][:3]) == ["a", "e", "b"]  # highest first
    assert list(score_counting(HAND).columns) == [
        "id",
        "score",
        "score_normalized",
        "n_best",
        "n_worst",
        "n_appearances",
    ]


def test_numeric_frames_score_like_text_ids():
    df = pd.DataFrame(
        {
            "Item1": [1, 5],
            "Item2": [2, 6],
            "Item3": [3, 7],
            "Item4": [4.0, 8.0],
            "BestItem": [1, 8],
            "WorstItem": [4, 5],
        }
    )
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
    assert (a.interval == "bootstrap").all() and (a.note == "").all()


def test_two_appearances_both_best_get_an_interval_from_their_count():
    # the issue: counting gave [1.0, 1.0] from 2 appearances; the score interval for 2 of 2 "best"
    # is [(2 - z^2) / (2 + z^2), 1] = [-0.315, 1]; items seen once have no interval and say why
    df = pd.DataFrame(
        [["a", "b", "c", "d", "a", "d"], ["b", "a", "d", "c", "a", "d"], ["e", "f", "g", "h", "e", "h"]],
        columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"],
    )
    data = index_annotations(df)
    z2 = 1.959963984540054**2
    for how in ("score", "bootstrap"):
        got = (
            add_score_ci(score_counting(df), data)
            if how == "score"
            else add_bootstrap_ci(score_counting(df), data, n_resamples=200)
        ).set_index("id")
        assert got.loc["a", "ci_low"] == pytest.approx((2 - z2) / (2 + z2)) and got.loc["a", "ci_high"] == 1.0
        assert got.loc["d", "ci_low"] == -1.0 and got.loc["d", "ci_high"] == pytest.approx(-(2 - z2) / (2 + z2))
        assert got.loc["b", "ci_low"] == pytest.approx(-got.loc["b", "ci_high"]) and got.loc["b", "ci_high"] > 0.6
        assert np.isnan(got.loc["e", "ci_low"]) and got.loc["e", "note"].startswith("too few judgements (1 appearance")
        assert got.loc["e", "interval"] == "" and got.loc["a", "note"] == ""
    assert got.loc["a", "interval"] == "score (in fewer than 6 tuples: no bootstrap)"
    assert add_score_ci(score_counting(df), data).set_index("id").loc["a", "interval"] == "score"


def test_score_intervals_cover_in_a_simulated_study():
    """150 items in designed 4-tuples, 3 noisy annotators per tuple (latent + Gaussian noise, best =
    highest seen). The truth is each item's expected counting score given the design, from 400
    replicate studies; over 30 more, the 95% score intervals must cover at least 93% of the items
    (they are conservative when the chance of best/worst differs between an item's tuples)."""
    from biaslab.bws.data import BwsData
    from biaslab.bws.design import design_tuples

    rng = np.random.default_rng(11)
    ids = [f"t{i:03d}" for i in range(150)]
    latent = rng.normal(size=150)
    tuples = np.array([[ids.index(x) for x in t] for t in design_tuples(ids, seed=2, attempts=3)])
    shown = np.repeat(tuples, 3, axis=0)

    def study():
        seen = latent[shown] + rng.normal(scale=0.7, size=shown.shape)
        rows = np.arange(len(shown))
        return BwsData(
            ids=np.array(ids, dtype=object),
            items=shown,
            best=shown[rows, seen.argmax(1)],
            worst=shown[rows, seen.argmin(1)],
            tuple_of=np.repeat(np.arange(len(tuples)), 3),
            n_tuples=len(tuples),
        )

    def scores(data):
        nb, nw, na = counting_scores(data)
        return (nb - nw) / na

    truth = np.mean([scores(study()) for _ in range(400)], axis=0)
    covered = []
    for _ in range(30):
        data = study()
        low, high, note = score_ci(data)
        assert not any(note) and (high - low > 0).all()
        covered.append(np.mean((low <= truth) & (truth <= high)))
    print(f"score-interval coverage {np.mean(covered):.4f}")
    assert np.mean(covered) >= 0.93


def write(tmp_path, text, name="ann.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("", "empty"),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n", "no annotations"),
        ("Item1,Item2,Item3,Item4,BestItem\n1,2,3,4,1\n", "missing column(s) WorstItem"),
        ("A,B,C\n1,2,3\n", "no Item1..ItemK"),
        ("Item1,Item2,Item4,BestItem,WorstItem\n1,2,3,1,2\n", "no gaps"),
        (
            "Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n1,2,3,4,2,2\n",
            "line 3: BestItem and WorstItem are both 2",
        ),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,9,4\n", "line 2: BestItem 9 is not one of"),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n5,6,7,8,5,9\n", "line 3: WorstItem 9 is not one of"),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n1,2,2,4,1,4\n", "line 3: id 2 appears twice"),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,,3,4,1,4\n", "line 2: empty Item2"),
        # blank lines are skipped but counted, so the line is the file's
        (
            "Item1,Item2,Item3,Item4,BestItem,WorstItem\n\n1,2,3,4,1,4\n,,,,,\n1,2,2,4,1,4\n",
            "line 5: id 2 appears twice",
        ),
    ],
)
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
