"""`biaslab fsb analyze`: the released data's bins and Table 5 phrases, any texts/scores pair, bad input."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from biaslab.fsb.analysis import AnalysisConfig, analyze, assign_bins, histogram, join_texts_scores
from tests.cli_runner import run_cli
from tests.conftest import requires_data

TABLE5 = {2: ["she had", "with his", "his wife", "the male"], 3: ["women are", "are not", "emotional and", "that men"]}


def biaslab(*args):
    return run_cli(*args)


def test_bins_and_histogram_edges():
    s = np.array([0.0, 0.3159, 0.316, 0.5789, 0.579, 1.0])
    assert assign_bins(s, (0.316, 0.579)).tolist() == [1, 1, 2, 2, 3, 3]
    h = histogram(np.array([0.0, 0.1, 0.15, 0.3, 0.999, 1.0]))
    assert h["count"].tolist() == [1, 2, 0, 1, 0, 0, 0, 0, 0, 2]


@pytest.fixture(scope="module")
def fsb_run(tmp_path_factory):
    if not os.environ.get("BIASLAB_DATA_DIR"):
        pytest.skip("needs BIASLAB_DATA_DIR")
    out = tmp_path_factory.mktemp("fsb")
    proc = biaslab("fsb", "analyze", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out, json.loads((out / "results.json").read_text())


@requires_data
def test_released_bins_match_an_independent_count(fsb_run):
    from biaslab.data import data_path

    out, r = fsb_run
    s = pd.read_csv(data_path("fsb/fsb_final_scores.csv"))["score_normalized"]
    expected = [int((s < 0.316).sum()), int(((s >= 0.316) & (s < 0.579)).sum()), int((s >= 0.579).sum())]
    assert [b["count"] for b in r["bins"]] == expected == [253, 366, 381]
    assert r["n_items"] == 1000 and r["n_unscored"] == 0
    assert sum(h["count"] for h in r["histogram"]) == 1000
    seed = pd.read_csv(out / "crosstab_seed_type.csv", index_col=0)
    assert seed.sum(axis=1).to_dict() == {"explicit": 300, "implicit": 300, "neutral": 300, "random": 100}
    assert seed.sum(axis=0).tolist() == expected
    prompt = pd.read_csv(out / "crosstab_prompt_type.csv", index_col=0)
    assert prompt.sum(axis=1).to_dict() == {"completion": 500, "conversion": 500}
    # the paper's reading of Figure 2: explicit seeds mostly in bin 3, neutral mostly in bin 1
    assert seed.loc["explicit"].idxmax() == "bin3" and seed.loc["neutral"].idxmax() == "bin1"
    assert set(r["parameters"]["group_columns"]) == {"seed_type", "prompt_type"}


@requires_data
def test_table5_phrases_in_the_top_ten_of_their_side(fsb_run):
    _, r = fsb_run
    comp = next(c for c in r["log_odds"] if (c["a"], c["b"]) == (2, 3))
    top2 = [t["ngram"] for t in comp["top_a"]]
    top3 = [t["ngram"] for t in comp["top_b"]]
    assert len(top2) == len(top3) == 10
    assert set(TABLE5[2]) <= set(top2) and set(TABLE5[3]) <= set(top3)
    assert all(t["z"] > 0 for t in comp["top_a"]) and all(t["z"] < 0 for t in comp["top_b"])


@requires_data
def test_report_and_tables_are_written(fsb_run):
    out, r = fsb_run
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3  # histogram + two stacked-bar figures
    assert "women are" in html and "bin 3" in html
    pmi = pd.read_csv(out / "pmi.csv")
    # PMI ranking is decreasing within each bin, ties broken by count in the bin
    for _, g in pmi.groupby("bin"):
        key = list(zip(-g["pmi"].round(9), -g["count_in_bin"]))
        assert key == sorted(key)
    assert "superior" in set(pmi[(pmi.bin == 3) & (pmi["rank"] <= 10)].word)
    lo = pd.read_csv(out / "logodds_bin2_vs_bin3.csv")
    assert {"ngram", "count_a", "count_b", "prior", "z"} <= set(lo.columns)


@requires_data
def test_informative_prior_runs_and_ranks_the_same_extremes():
    from biaslab.bws.data import read_items, read_table
    from biaslab.data import data_path

    texts = read_items(data_path("fsb/FSB_text.csv"), "uid")
    scores = read_table(data_path("fsb/fsb_final_scores.csv"))
    merged, _ = join_texts_scores(
        texts,
        scores,
        id_column="uid",
        text_column="response",
        score_column="score_normalized",
        texts_source="t",
        scores_source="s",
    )
    res = analyze(
        merged, text_column="response", cfg=AnalysisConfig(prior="informative", compare=[(2, 3)]), group_columns=[]
    )
    comp = res["log_odds"][0]
    assert comp["top_b"][0][0] == "women are" and "she had" in [t for t, _ in comp["top_a"][:3]]
    assert (comp["table"]["prior"] > 0).all()


def test_any_texts_scores_pair_without_metadata(tmp_path):
    rng = np.random.default_rng(0)
    words_lo = ["calm", "garden", "river", "bread"]
    words_hi = ["always", "never", "weak", "inferior"]
    rows, scores = [], []
    for i in range(120):
        hi = i % 2
        pool = words_hi if hi else words_lo
        rows.append({"id": f"x{i}", "text": " ".join(rng.choice(pool, 6)) + " the end"})
        scores.append({"id": f"x{i}", "score_normalized": 0.8 if hi else 0.2})
    pd.DataFrame(rows).to_csv(tmp_path / "t.csv", index=False)
    pd.DataFrame(scores).to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "out"
    proc = biaslab(
        "fsb",
        "analyze",
        "--texts",
        tmp_path / "t.csv",
        "--scores",
        tmp_path / "s.csv",
        "--out",
        out,
        "--thresholds",
        "0.5",
        "--compare",
        "1,2",
        "--min-words",
        "1",
        "--min-df",
        "2",
        "--max-df",
        "0.9",
    )
    assert proc.returncode == 0, proc.stderr
    r = json.loads((out / "results.json").read_text())
    assert [b["count"] for b in r["bins"]] == [60, 60] and r["crosstabs"] == {}
    comp = r["log_odds"][0]
    assert {t["ngram"] for t in comp["top_a"][:4]} == set(words_lo)
    assert {t["ngram"] for t in comp["top_b"][:4]} == set(words_hi)
    assert {w["word"] for w in r["pmi_top"]["2"][:4]} == set(words_hi)


@pytest.mark.parametrize(
    "scores_text,fragments",
    [
        ("id,score_normalized\nx0,0.5\nzz,0.4\n", ["line 3", "id zz is not in"]),
        ("id,score_normalized\nx0,1.5\n", ["line 2", "not a number in [0, 1]"]),
        ("id,score\nx0,0.5\n", ["no 'score_normalized' column"]),
        ("id,score_normalized\nx0,0.5\nx0,0.4\n", ["line 3", "scored twice"]),
        ("", ["empty"]),
    ],
)
def test_bad_scores_give_one_line_errors(tmp_path, scores_text, fragments):
    (tmp_path / "t.csv").write_text("id,text\nx0,hello there\nx1,good day\n")
    (tmp_path / "s.csv").write_text(scores_text)
    proc = biaslab(
        "fsb", "analyze", "--texts", tmp_path / "t.csv", "--scores", tmp_path / "s.csv", "--out", tmp_path / "o"
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    msg = " ".join(proc.stderr.split())
    assert msg.startswith("error:") and "s.csv" in msg
    for f in fragments:
        assert f in msg, (f, msg)
