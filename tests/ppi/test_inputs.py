"""Reading PRED and GOLD for `biaslab ppi`: the formats, their detection, and one-line errors."""

import json
import math

import numpy as np
import pytest

from biaslab.errors import DataError
from biaslab.ppi.inputs import detect_format, read_fsb_judge, read_groups, read_scores


def write_run(folder, rows, probe="fsb-judge"):
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"schema_version": 1, "probe": probe}))
    (folder / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def attempt(item, rep, score):
    return {"item_id": item, "repetition": rep, "human_score": 0.5, "text": str(score), "judge_score": score}


def test_fsb_judge_run_mean_over_repetitions_and_undetected_answers(tmp_path):
    rows = [
        attempt("a", 0, 0.2),
        attempt("a", 1, 0.4),
        attempt("b", 0, None),
        attempt("b", 1, 0.6),
        attempt("c", 0, None),
        attempt("c", 1, None),
        attempt("d", 1, 0.9),
    ]  # d was an example in rep 0
    run = write_run(tmp_path / "run", rows)
    for path in (run, run / "attempts.jsonl"):
        assert detect_format(path) == "fsb-judge"
        t = read_scores(path, role="PRED")
        assert t.format == "fsb-judge" and t.column == "judge_score" and t.ids == ("a", "b", "c", "d")
        assert t.scores[[0, 1, 3]].tolist() == pytest.approx([0.3, 0.6, 0.9]) and math.isnan(t.scores[2])
        assert "2 repetition(s)" in t.detail and "1 item(s) had none" in t.detail


def test_fsb_judge_answers_with_other_line_breaks_are_read_whole(tmp_path):
    rows = [attempt("a", 0, 0.2), attempt("b", 0, 0.6)]
    rows[0]["text"] = "first\u2028second\u0085third"  # json.dumps(ensure_ascii=False) leaves these as they are
    run = tmp_path / "run"
    write_run(run, [])
    (run / "attempts.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    assert read_scores(run, role="PRED").scores.tolist() == pytest.approx([0.2, 0.6])


def test_fsb_judge_run_errors(tmp_path):
    run = write_run(tmp_path / "run", [attempt("a", 0, 0.2)], probe="jobs-lum")
    with pytest.raises(DataError, match="run of 'jobs-lum', not of fsb-judge"):
        read_scores(run, role="PRED")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="not a finished fsb-judge run folder"):
        read_scores(empty, role="PRED")
    good = write_run(tmp_path / "good", [attempt("a", 0, 0.2)])
    with pytest.raises(DataError, match="give it as --pred"):
        read_scores(good, role="GOLD")
    with pytest.raises(DataError, match="--groups FILE"):
        read_scores(good, role="PRED", by="seed_type")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "a", "judge_score": 0.1}\n{"id": "b", "score": 0.3}\n')
    with pytest.raises(DataError, match=r"line 2: not an fsb-judge attempt .*found: id, score"):
        read_fsb_judge(bad)
    bad.write_text('{"item_id": "a", "judge_score": "high"}\n')
    with pytest.raises(DataError, match="line 1: judge_score 'high' is not a number"):
        read_fsb_judge(bad)


def test_bws_scores_use_the_normalised_score(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(
        "id,score,score_normalized,n_best,n_worst,n_appearances,ci_low,ci_high\n"
        "7,0.5,0.75,3,1,4,0.1,0.9\n8,-1.0,0.0,0,4,4,-1,-0.5\n"
    )
    assert detect_format(path) == "bws"
    t = read_scores(path, role="GOLD")
    assert (t.format, t.column, t.ids) == ("bws", "score_normalized", ("7", "8"))
    assert t.scores.tolist() == [0.75, 0.0]
    raw = read_scores(path, role="GOLD", column="score")
    assert raw.scores.tolist() == [0.5, -1.0]


def test_released_fsb_scores_are_read_as_bws_scores():
    from biaslab.data import data_path

    t = read_scores(data_path("fsb/fsb_final_scores.csv"), role="GOLD")
    assert t.format == "bws" and len(t.ids) == 1000 and t.ids[0] == "38" and t.scores[0] == 1.0
    assert 0.0 <= t.scores.min() and t.scores.max() <= 1.0


def test_csv_with_groups_and_missing_judge_scores(tmp_path):
    path = tmp_path / "pred.csv"
    path.write_text("item_id,score,model\nx,0.5,A\ny,,B\nz,NA,A\nw,1e-1,B\n")
    t = read_scores(path, role="PRED", by="model")
    assert detect_format(path) == "csv" and t.ids == ("x", "y", "z", "w") and t.groups == ("A", "B", "A", "B")
    assert t.scores[0] == 0.5 and t.scores[3] == pytest.approx(0.1) and np.isnan(t.scores[1:3]).all()
    with pytest.raises(DataError, match=r"row 3: no score \(empty\); every GOLD row needs a human score"):
        read_scores(path, role="GOLD")


@pytest.mark.parametrize(
    "content, role, kwargs, message",
    [
        (
            "id,rating\n1,0.5\n",
            "PRED",
            {},
            r"no 'score' column \(columns found: id, rating\); name the score column "
            "with --pred-column",
        ),
        (
            "name,score\na,0.5\n",
            "GOLD",
            {},
            r"no id column \(looked for id, uid, item_id, item; columns found: name, "
            r"score\)",
        ),
        ("id,score\n1,0.5\n2,high\n", "PRED", {}, r"row 3: score 'high' is not a number"),
        ("id,score\n1,0.5\n2,inf\n", "GOLD", {}, r"row 3: score 'inf' is not a finite number"),
        ("id,score\n1,0.5\n1,0.7\n", "GOLD", {}, r"row 3: id '1' repeats row 2"),
        ("id,score\n", "GOLD", {}, r"has a header but no rows"),
        ("id,score\n1,0.5\n", "PRED", {"by": "model"}, r"no column 'model' for --by \(columns found: id, score\)"),
        ("id,score,model\n1,0.5,\n", "PRED", {"by": "model"}, r"row 2: empty 'model' \(--by\) for id '1'"),
        ("id,score\n1,0.5\n", "GOLD", {"fmt": "bws"}, r"no 'score_normalized' column \(columns found: id, score\)"),
    ],
)
def test_table_errors_are_one_line_and_name_what_is_wrong(tmp_path, content, role, kwargs, message):
    path = tmp_path / "scores.csv"
    path.write_text(content)
    with pytest.raises(DataError, match=message) as exc:
        read_scores(path, role=role, **kwargs)
    assert "\n" not in str(exc.value) and str(exc.value).startswith(f"{role} {path}")


def test_groups_file(tmp_path):
    path = tmp_path / "groups.csv"
    path.write_text("uid,seed_type\n1,explicit\n2,neutral\n")
    assert read_groups(path, "seed_type") == {"1": "explicit", "2": "neutral"}
    with pytest.raises(DataError, match=r"no column 'kind' for --by \(columns found: uid, seed_type\)"):
        read_groups(path, "kind")
    path.write_text("uid,seed_type\n1,explicit\n1,neutral\n")
    with pytest.raises(DataError, match="is in two groups"):
        read_groups(path, "seed_type")
