"""`biaslab bws ...` end to end through the CLI (in process), including bad input."""

import csv
import json
from collections import Counter
from itertools import combinations

import pandas as pd
import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data


def biaslab(*args):
    return run_cli(*args)


def one_line_error(proc, *fragments):
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    text = " ".join(lines)
    assert text.startswith("error:"), proc.stderr
    for f in fragments:
        assert f in text, (f, proc.stderr)


def test_design_writes_valid_tuples(tmp_path):
    items = tmp_path / "items.csv"
    with open(items, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text"])
        for i in range(150):
            w.writerow([f"s{i}", f"sentence, number {i}"])
    out = tmp_path / "tuples.csv"
    proc = biaslab("bws", "design", "--items", items, "--out", out, "--seed", 3, "--attempts", 10)
    assert proc.returncode == 0, proc.stderr
    assert "300 tuples of 4 for 150 items" in proc.stdout and "share at most 2 items" in proc.stdout
    df = pd.read_csv(out, dtype=str)
    assert list(df.columns) == ["Item1", "Item2", "Item3", "Item4"] and len(df) == 300
    assert Counter(df.to_numpy().ravel()) == {f"s{i}": 8 for i in range(150)}
    assert max(Counter(t for row in df.to_numpy() for t in combinations(sorted(row), 3)).values()) == 1
    again = tmp_path / "again.csv"
    assert biaslab("bws", "design", "--items", items, "--out", again, "--seed", 3, "--attempts", 10).returncode == 0
    assert again.read_text() == out.read_text()


def test_design_errors(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text("id\n" + "".join(f"{i}\n" for i in range(6)))
    one_line_error(biaslab("bws", "design", "--items", items, "--out", tmp_path / "t.csv"), "no valid design exists")
    items.write_text("name\nx\n")
    one_line_error(biaslab("bws", "design", "--items", items, "--out", tmp_path / "t.csv"), "no id column")
    items.write_text("id\na\nb\na\n")
    one_line_error(biaslab("bws", "design", "--items", items, "--out", tmp_path / "t.csv"), "line 4", "a second time")


@requires_data
def test_score_and_reliability_on_the_release(tmp_path):
    from biaslab.data import data_path

    ann = data_path("fsb/fsb-tuples-annotations.csv")
    out = tmp_path / "scores.csv"
    proc = biaslab(
        "bws", "score", "--annotations", ann, "--out", out, "--decimals", 3, "--ci", "bootstrap", "--resamples", 200
    )
    assert proc.returncode == 0, proc.stderr
    got = pd.read_csv(out, dtype={"id": str}, keep_default_na=False)
    assert list(got.columns) == [
        "id",
        "score",
        "score_normalized",
        "n_best",
        "n_worst",
        "n_appearances",
        "ci_low",
        "ci_high",
        "interval",
        "note",
    ]
    assert (got.note == "").all()  # every item is in 8 tuples
    # items chosen best (or worst) at every appearance: the bootstrap collapses, the score interval stands in
    flat = got.interval == "score (the bootstrap had no spread)"
    assert (got.interval[~flat] == "bootstrap").all() and 0 < flat.sum() < 20
    assert (got.score[flat].abs() == 1).all() and (got.ci_high - got.ci_low > 0.05).all()
    score_ci = tmp_path / "score_ci.csv"
    assert biaslab("bws", "score", "--annotations", ann, "--out", score_ci).returncode == 0
    by_count = pd.read_csv(score_ci, dtype={"id": str}, keep_default_na=False)
    assert (by_count.interval == "score").all() and (by_count.ci_high - by_count.ci_low > 0).all()
    released = pd.read_csv(data_path("fsb/fsb_final_scores.csv"), index_col=0, dtype={"id": str})
    both = released.merge(got, on="id", suffixes=("_rel", ""))
    assert len(both) == 1000 and (both.score == both.score_rel).all()
    assert (both.score_normalized == both.score_normalized_rel).all()
    assert ((both.ci_low <= both.score + 1e-9) & (both.score <= both.ci_high + 1e-9)).all()

    rel = tmp_path / "rel.json"
    proc = biaslab("bws", "reliability", "--annotations", ann, "--trials", 100, "--seed", 0, "--out", rel)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(rel.read_text())
    assert d["trials"] == 100 and d["seed"] == 0 and d["reason"] is None
    assert f"{d['pearson']['mean']:.4f} +- {d['pearson']['sd']:.4f}" in proc.stdout
    assert f"{d['spearman']['mean']:.4f}" in proc.stdout


def test_few_judgements_end_to_end(tmp_path):
    # the case: two tuples sharing no item, one annotated twice
    ann = tmp_path / "ann.csv"
    ann.write_text("Item1,Item2,Item3,Item4,BestItem,WorstItem\na,b,c,d,a,d\nb,a,d,c,a,d\ne,f,g,h,e,h\n")
    out = tmp_path / "s.csv"
    proc = biaslab("bws", "score", "--annotations", ann, "--out", out)
    assert proc.returncode == 0, proc.stderr
    got = pd.read_csv(out).set_index("id")
    assert got.loc["a", "ci_low"] == pytest.approx(-0.3152, abs=1e-4) and got.loc["a", "ci_high"] == 1.0
    assert pd.isna(got.loc["e", "ci_low"]) and "too few judgements" in got.loc["e", "note"]
    assert "4 item(s) have no interval" in " ".join(proc.stdout.split())
    bt = tmp_path / "bt.csv"
    proc = biaslab("bws", "score", "--annotations", ann, "--out", bt, "--method", "bradley-terry", "--resamples", 10)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "the comparison graph is disconnected: 2 components (4, 4 items)" in text
    assert "component 2: e, f, g, h" in text
    got = pd.read_csv(bt)
    assert got.component.tolist() == [1, 1, 1, 1, 2, 2, 2, 2] and "e-0" not in bt.read_text()
    proc = biaslab("bws", "reliability", "--annotations", ann, "--out", tmp_path / "r.json")
    text = " ".join(proc.stdout.split())
    assert proc.returncode == 0 and "+- 0" not in text
    assert "Pearson too few judgements: 1 tuple with two or more annotations" in text
    assert json.loads((tmp_path / "r.json").read_text())["pearson"] == {"mean": None, "sd": None}
    one_line_error(
        biaslab("bws", "score", "--annotations", ann, "--out", bt, "--method", "bradley-terry", "--ci", "bootstrap"),
        "--ci applies to counting scores only",
    )


def test_score_bradley_terry_cli(tmp_path):
    from tests.bws.simulate import simulate

    df, latent = simulate(n_items=40, per_tuple=2, seed=8)
    ann = tmp_path / "ann.csv"
    df.assign(annotator="p1", feedback="ok, fine").to_csv(ann, index=False)
    out = tmp_path / "bt.csv"
    proc = biaslab("bws", "score", "--annotations", ann, "--method", "bradley-terry", "--resamples", 0, "--out", out)
    assert proc.returncode == 0, proc.stderr
    got = pd.read_csv(out)
    assert len(got) == 40 and got.ci_low.isna().all() and (got.component == 1).all()
    assert got.score.is_monotonic_decreasing


@pytest.mark.parametrize(
    "text,fragments",
    [
        ("", ["empty"]),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n5,6,7,8,6,6\n", ["line 3", "both 6"]),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,9,4\n", ["line 2", "BestItem 9"]),
        ("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,3,1,4\n", ["line 2", "id 3 appears twice"]),
        ("Item1,Item2,Item3,Item4,WorstItem\n1,2,3,4,4\n", ["missing column(s) BestItem"]),
    ],
)
@pytest.mark.parametrize("command", ["score", "reliability"])
def test_bad_annotations_give_one_line_errors(tmp_path, text, fragments, command):
    ann = tmp_path / "ann.csv"
    ann.write_text(text)
    extra = ["--out", tmp_path / "o.csv"] if command == "score" else []
    one_line_error(biaslab("bws", command, "--annotations", ann, *extra), str(ann), *fragments)


def test_ids_unknown_to_the_items_file(tmp_path):
    ann = tmp_path / "ann.csv"
    ann.write_text("Item1,Item2,Item3,Item4,BestItem,WorstItem\n1,2,3,4,1,4\n1,2,3,5,1,5\n")
    items = tmp_path / "items.csv"
    items.write_text("id,text\n1,a\n2,b\n3,c\n4,d\n6,f\n")
    one_line_error(
        biaslab("bws", "score", "--annotations", ann, "--items", items, "--out", tmp_path / "o.csv"),
        "line 3",
        "id 5 is not in",
    )
    items.write_text("id,text\n1,a\n2,b\n3,c\n4,d\n5,e\n6,f\n")
    proc = biaslab("bws", "score", "--annotations", ann, "--items", items, "--out", tmp_path / "o.csv")
    assert proc.returncode == 0 and "1 item(s)" in proc.stdout and "6" in proc.stdout


def test_help_texts_explain():
    for cmd in ("design", "score", "reliability"):
        proc = biaslab("bws", cmd, "--help")
        assert proc.returncode == 0 and "--annotations" in proc.stdout or "--items" in proc.stdout
    assert "split-half" in biaslab("bws", "--help").stdout.lower()
