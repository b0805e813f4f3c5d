"""`biaslab run fsb-judge` through the real CLI process; metrics recomputed from attempts.jsonl."""

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from biaslab.probes.fsb_judge.probe import FsbJudgeProbe
from biaslab.probing.config import RunConfig
from biaslab.probing.core import spread_subset
from tests.cli.test_run import biaslab, read_attempts
from tests.conftest import requires_data

pytestmark = requires_data
BINS = [
    (0.0, 0.25, "mae_bin_0_25"),
    (0.25, 0.5, "mae_bin_25_50"),
    (0.5, 0.75, "mae_bin_50_75"),
    (0.75, 1.01, "mae_bin_75_100"),
]


def canned_judge(tmp_path, probe, limit, repetitions, seed):
    """A canned-answer file for the scripted backend: noisy truths, some prose, some junk."""
    items = probe.load_items()
    planned = probe.plan(spread_subset(items, limit), RunConfig(repetitions=repetitions, seed=seed))
    rng = random.Random(7)
    answers = {}
    for p in planned:
        request, truth, roll = p.request, p.item.metadata["human_score"], rng.random()
        if roll < 0.1:
            answers[request.display()] = "I cannot rate that."
        elif roll < 0.15:
            answers[request.display()] = "-0.4"
        elif roll < 0.5:
            answers[request.display()] = f"The score is {min(1, max(0, truth + rng.gauss(0, 0.2))):.2f}."
        else:
            answers[request.display()] = f"{rng.random():.3f}" if roll > 0.9 else f"{truth:.2f}"
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    return path


def first_number(text):
    m = re.search(r"-?\d*\.?\d+", text)
    if not m:
        return None
    v = float(m.group())
    return v if 0 <= v <= 1 else None


def recompute(rows):
    per_rep = {}
    for r in rows:
        per_rep.setdefault(r["repetition"], []).append(r)
    out = {k: [] for k in ["pearson_r", "spearman_r", "mse", "mae", "undetected_rate"] + [b[2] for b in BINS]}
    for rep_rows in per_rep.values():
        scored = [(r["human_score"], first_number(r["text"])) for r in rep_rows]
        det = [(h, j) for h, j in scored if j is not None]
        h, j = np.array(det).T
        constant = np.ptp(j) == 0 or np.ptp(h) == 0
        out["pearson_r"].append(np.nan if constant else stats.pearsonr(h, j)[0])
        out["spearman_r"].append(np.nan if constant else stats.spearmanr(h, j)[0])
        out["mse"].append(np.mean((h - j) ** 2))
        out["mae"].append(np.mean(np.abs(h - j)))
        out["undetected_rate"].append(1 - len(det) / len(scored))
        for lo, hi, name in BINS:
            errs = [abs(a - b) for a, b in det if lo <= a < hi]
            if errs:
                out[name].append(np.mean(errs))
    # the documented rule: the mean over the repetitions where a metric is defined (a judge that gives
    # one score to every item of a repetition has no correlation there)
    return {k: float(np.nanmean(v)) for k, v in out.items()}


@pytest.mark.slow
def test_run_end_to_end_and_metrics_recomputed_from_attempts(tmp_path):
    probe = FsbJudgeProbe()
    answers = canned_judge(tmp_path, probe, limit=120, repetitions=3, seed=4)
    out = tmp_path / "run"
    biaslab(
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
        out,
        cache=tmp_path / "c",
    )
    results = json.loads((out / "results.json").read_text())
    rows = read_attempts(out)
    assert results["probe"] == "fsb-judge" and results["n_items"] == 120 and results["n_attempts"] == len(rows)
    for r in rows:
        assert {"item_id", "human_score", "text", "judge_score", "repetition", "example_ids"} <= set(r)
        assert r["judge_score"] == first_number(r["text"])
        assert r["item_id"] not in r["example_ids"] and len(r["example_ids"]) == 8
    expected = recompute(rows)
    for name, value in expected.items():
        m = results["metrics"][name]
        assert m["value"] == pytest.approx(value, abs=1e-9), name
        assert m["ci_low"] <= m["value"] <= m["ci_high"], name
    details = results["details"]
    assert len(details["repetitions"]) == 3 and details["paper_table6"]["GPT-4"] == {"pearson_r": 0.813, "mse": 0.024}
    html = (out / "report.html").read_text()
    assert html.count("<img") >= 2

    (out / "report.html").unlink()
    biaslab("report", out, cache=tmp_path / "c")
    assert (out / "report.html").read_text().count("<img") >= 2


def write_items(path, rows, header="id,text,score"):
    path.write_text(header + "\n" + "".join(f'{i},"{t}",{s}\n' for i, t, s in rows))
    return path


def test_items_file_evaluates_other_bws_data(tmp_path):
    rows = [(f"t{i}", f"Text number {i} about a nurse.", round(i / 39, 4)) for i in range(40)]
    items = write_items(tmp_path / "items.csv", rows)
    out = tmp_path / "run"
    biaslab(
        "run",
        "fsb-judge",
        "--model",
        "scripted/echo",
        "--items",
        items,
        "--repetitions",
        "2",
        "--out",
        out,
        cache=tmp_path / "c",
    )
    results = json.loads((out / "results.json").read_text())
    attempts = read_attempts(out)
    assert results["n_items"] == 40 and len(attempts) == 2 * (40 - 8)
    assert results["data"] == {} and results["details"]["items_source"]["items_file"] == str(items)
    assert {a["item_id"] for a in attempts} <= {r[0] for r in rows}


@pytest.fixture(scope="module")
def good_run(tmp_path_factory):
    """One finished run on a valid items file, copied by each bad-input test."""
    base = tmp_path_factory.mktemp("good")
    good = write_items(base / "good.csv", [(i, f"text {i}", round(i / 19, 3)) for i in range(20)])
    biaslab("run", "fsb-judge", "--model", "scripted/echo", "--items", good, "--out", base / "run", cache=base / "c")
    return base / "run"


@pytest.mark.parametrize(
    "content, needle",
    [
        ("id,text\n1,hello\n", "missing column(s) score"),
        ("id,text,score\n1,hello,1.2\n", "line 2: score '1.2' is outside [0, 1]"),
        ("id,text,score\n1,hello,high\n", "line 2: score 'high' is not a number"),
        ("id,text,score\n1,hello,0.2\n1,again,0.3\n", "id '1' repeats line 2"),
        ("id,text,score\n1,,0.2\n", "line 2: empty text"),
        ("id,text,score\n" + "".join(f"{i},t{i},0.1\n" for i in range(20)), "needs 2 per bin"),
        ("id,text,score\n" + "".join(f"{i},t{i},{i / 7:.3f}\n" for i in range(8)), "the judge needs more than 8"),
    ],
)
def test_bad_items_files_are_one_line_errors_and_keep_earlier_results(tmp_path, good_run, content, needle):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(good_run, out)
    before = (out / "results.json").read_text()
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    proc = biaslab(
        "run", "fsb-judge", "--model", "scripted/echo", "--items", bad, "--out", out, cache=tmp_path / "c", check=False
    )
    assert proc.returncode != 0 and needle in " ".join(proc.stderr.split()), proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 3
    assert (out / "results.json").read_text() == before


def test_items_option_is_refused_by_probes_with_fixed_items(tmp_path):
    proc = biaslab(
        "run",
        "jobs-lum",
        "--model",
        "scripted/he",
        "--items",
        Path(__file__),
        "--out",
        tmp_path / "o",
        cache=tmp_path / "c",
        check=False,
    )
    assert proc.returncode != 0 and "--items does not apply to the jobs-lum probe" in proc.stderr
    assert "fsb-judge" in proc.stderr
