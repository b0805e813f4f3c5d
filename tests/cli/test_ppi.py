"""`biaslab ppi` through the CLI (in process): CSV, fsb-judge run and `bws score` inputs, the JSON
keys, the terminal table, exit codes and one-line errors."""

import csv
import json
import os

import numpy as np
import pytest

from biaslab.stats.ppi import ppi_mean
from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = requires_data
DATA = os.environ.get("BIASLAB_DATA_DIR", "")
KEYS = {
    "estimate",
    "ci_low",
    "ci_high",
    "se",
    "n_pred",
    "n_gold",
    "classical",
    "effective_n",
    "effective_n_gain",
    "effective_n_definition",
    "width_ratio",
    "lambda",
    "method",
    "target",
    "confidence",
    "pred",
    "gold",
    "n_pred_imputed",
    "groups",
    "differences",
    "correction",
    "warnings",
}


def biaslab(*args, cache=None):
    return run_cli(*args, env=None if cache is None else {"BIASLAB_CACHE_DIR": str(cache)})


def one_line_error(proc, *fragments, code=2):
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    text = " ".join(lines)
    assert text.startswith("error:"), proc.stderr
    for f in fragments:
        assert f in text, (f, proc.stderr)


def release_scores():
    with open(os.path.join(DATA, "fsb", "fsb_final_scores.csv"), newline="") as fh:
        return {r["id"]: float(r["score_normalized"]) for r in csv.DictReader(fh)}


def write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """A biased, noisy judge on the 1,000 released texts and 120 of their human scores as gold."""
    tmp = tmp_path_factory.mktemp("ppi")
    human = release_scores()
    ids = list(human)
    rng = np.random.default_rng(5)
    y = np.array([human[i] for i in ids])
    f = np.clip(0.3 + 0.6 * y + rng.normal(0, 0.1, y.size), 0, 1)
    gold = rng.choice(len(ids), 120, replace=False)
    pred = write_csv(tmp / "pred.csv", ["id", "score"], [(i, f"{v:.6f}") for i, v in zip(ids, f)])
    gold_csv = write_csv(tmp / "gold.csv", ["id", "score"], [(ids[k], human[ids[k]]) for k in gold])
    mask = np.zeros(len(ids), dtype=bool)
    mask[gold] = True
    f6 = np.round(f, 6)
    return {"tmp": tmp, "pred": pred, "gold": gold_csv, "ids": ids, "expected": ppi_mean(y[mask], f6[mask], f6[~mask])}


def test_csv_inputs_give_the_ppi_estimate_as_json_and_as_a_table(simulated):
    proc = biaslab(
        "ppi",
        "--pred",
        simulated["pred"],
        "--gold",
        simulated["gold"],
        "--json",
        "--out",
        simulated["tmp"] / "ppi.json",
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert KEYS <= set(res) and {"estimate", "ci_low", "ci_high", "se"} <= set(res["classical"])
    e = simulated["expected"]
    assert res["estimate"] == pytest.approx(e.ppi.estimate) and res["ci_low"] == pytest.approx(e.ppi.ci_low)
    assert res["classical"]["ci_high"] == pytest.approx(e.classical.ci_high)
    assert (res["n_pred"], res["n_gold"]) == (1000, 120) and res["pred"]["format"] == res["gold"]["format"] == "csv"
    assert res["width_ratio"] < 0.75 and res["effective_n"] > 200  # an informative judge: r about 0.8
    assert json.loads((simulated["tmp"] / "ppi.json").read_text()) == res
    table = biaslab("ppi", "--pred", simulated["pred"], "--gold", simulated["gold"])
    assert table.returncode == 0, table.stderr
    assert "judge + humans (PPI++)" in table.stdout and "humans only" in table.stdout
    assert f"{e.ppi.estimate:.3f}" in table.stdout and "effective sample size" in table.stdout
    wide = json.loads(
        biaslab(
            "ppi",
            "--pred",
            simulated["pred"],
            "--gold",
            simulated["gold"],
            "--json",
            "--target",
            "population",
            "--confidence",
            "0.9",
        ).stdout
    )
    assert wide["target"] == "population" and wide["confidence"] == 0.9


def test_a_bws_score_output_as_gold(simulated, tmp_path):
    scores = tmp_path / "bws.csv"
    proc = biaslab(
        "bws",
        "score",
        "--annotations",
        os.path.join(DATA, "fsb", "fsb-tuples-annotations.csv"),
        "--decimals",
        "3",
        "--resamples",
        "0",
        "--out",
        scores,
    )
    assert proc.returncode == 0, proc.stderr
    gold_ids = {row[0] for row in csv.reader(open(simulated["gold"]))} - {"id"}
    lines = scores.read_text().splitlines()
    (tmp_path / "gold_bws.csv").write_text(
        "\n".join([lines[0]] + [ln for ln in lines[1:] if ln.split(",")[0] in gold_ids]) + "\n"
    )
    res = json.loads(biaslab("ppi", "--pred", simulated["pred"], "--gold", tmp_path / "gold_bws.csv", "--json").stdout)
    assert res["gold"]["format"] == "bws" and res["gold"]["column"] == "score_normalized"
    # `bws score --decimals 3` reproduces the released normalised scores, so the estimate is the CSV one
    assert res["n_gold"] == 120 and res["estimate"] == pytest.approx(simulated["expected"].ppi.estimate)


def test_an_fsb_judge_run_as_pred_with_groups(tmp_path):
    from biaslab.probes.fsb_judge.probe import FsbJudgeProbe
    from tests.probes.fsb_judge.test_cli import canned_judge

    answers = canned_judge(tmp_path, FsbJudgeProbe(), limit=120, repetitions=3, seed=4)
    run = tmp_path / "run"
    proc = biaslab(
        "run",
        "fsb-judge",
        "--model",
        f"scripted/canned:file={answers}",
        "--limit",
        "120",
        "--repetitions",
        "3",
        "--seed",
        "4",
        "--out",
        run,
        cache=tmp_path / "c",
    )
    assert proc.returncode == 0, proc.stderr
    judge: dict[str, list[float]] = {}
    for line in (run / "attempts.jsonl").read_text().splitlines():
        row = json.loads(line)
        judge.setdefault(row["item_id"], [])
        if row["judge_score"] is not None:
            judge[row["item_id"]].append(row["judge_score"])
    ids = list(judge)
    f = np.array([np.mean(v) if v else np.nan for v in judge.values()])
    f[np.isnan(f)] = np.nanmean(f)
    human = release_scores()
    rng = np.random.default_rng(0)
    gold = rng.choice(len(ids), 48, replace=False)
    write_csv(tmp_path / "gold.csv", ["id", "score"], [(ids[k], human[ids[k]]) for k in gold])
    res = json.loads(
        biaslab(
            "ppi",
            "--pred",
            run,
            "--gold",
            tmp_path / "gold.csv",
            "--json",
            "--by",
            "seed_type",
            "--groups",
            os.path.join(DATA, "fsb", "FSB_text.csv"),
            "--min-gold",
            "5",
        ).stdout
    )
    mask = np.zeros(len(ids), dtype=bool)
    mask[gold] = True
    y = np.array([human[i] for i in ids])
    e = ppi_mean(y[mask], f[mask], f[~mask])
    assert res["pred"]["format"] == "fsb-judge" and "3 repetition(s)" in res["pred"]["detail"]
    assert res["n_pred"] == len(ids) and res["estimate"] == pytest.approx(e.ppi.estimate)
    assert res["gold_judge_r"] > 0.3  # the canned judge answers near the truth half of the time
    assert {g["group"] for g in res["groups"]} == {"explicit", "implicit", "neutral", "random"}
    assert sum(g["n_pred"] for g in res["groups"]) == len(ids) and len(res["differences"]) == 6
    assert "Holm" in res["correction"]
    table = biaslab(
        "ppi",
        "--pred",
        run,
        "--gold",
        tmp_path / "gold.csv",
        "--by",
        "seed_type",
        "--groups",
        os.path.join(DATA, "fsb", "FSB_text.csv"),
        "--min-gold",
        "5",
    )
    assert table.returncode == 0 and "By seed_type" in table.stdout and "Differences a - b" in table.stdout
    assert " ± " in table.stdout
    one_line_error(
        biaslab("ppi", "--pred", tmp_path / "gold.csv", "--gold", run), "is an fsb-judge run", "give it as --pred"
    )


def test_errors_are_one_line_with_exit_code_2(simulated, tmp_path):
    pred, gold = simulated["pred"], simulated["gold"]
    write_csv(tmp_path / "cols.csv", ["id", "rating"], [("1", "0.5")])
    one_line_error(
        biaslab("ppi", "--pred", tmp_path / "cols.csv", "--gold", gold),
        "no 'score' column (columns found: id, rating)",
        "--pred-column",
    )
    ok_cols = biaslab(
        "ppi",
        "--pred",
        tmp_path / "cols.csv",
        "--gold",
        tmp_path / "cols.csv",
        "--pred-column",
        "rating",
        "--gold-column",
        "rating",
    )
    one_line_error(ok_cols, "too few gold items", "1 with a human score")
    write_csv(tmp_path / "stranger.csv", ["id", "score"], [("no-such-id", "0.3"), ("38", "1.0")])
    one_line_error(
        biaslab("ppi", "--pred", pred, "--gold", tmp_path / "stranger.csv"),
        "1 of the 2 GOLD id(s) are not in PRED (no-such-id)",
    )
    write_csv(tmp_path / "few.csv", ["id", "score"], [(i, "0.5") for i in simulated["ids"][:9]])
    one_line_error(
        biaslab("ppi", "--pred", pred, "--gold", tmp_path / "few.csv"),
        "too few gold items",
        "9 with a human score, at least 10",
    )
    write_csv(tmp_path / "text.csv", ["id", "score"], [("38", "very biased")])
    one_line_error(
        biaslab("ppi", "--pred", pred, "--gold", tmp_path / "text.csv"), "row 2: score 'very biased' is not a number"
    )
    one_line_error(biaslab("ppi", "--pred", tmp_path / "missing.csv", "--gold", gold), "no such file")
    one_line_error(biaslab("ppi", "--pred", pred, "--gold", gold, "--groups", gold), "--groups needs --by")
    one_line_error(
        biaslab("ppi", "--pred", pred, "--gold", gold, "--by", "model"),
        "no column 'model' for --by (columns found: id, score)",
    )
    one_line_error(biaslab("ppi", "--pred", pred, "--gold", gold, "--confidence", "95"), "--confidence")
    usage = biaslab("ppi", "--pred", pred, "--gold", gold, "--target", "everything")
    assert usage.returncode == 2 and "Traceback" not in usage.stderr
