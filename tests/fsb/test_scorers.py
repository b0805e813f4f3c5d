"""`biaslab fsb scorers`: agreement metrics by hand, VADER on the released scores checked
independently, the split-half ceiling, the report, the cache, and a finished fsb-judge run as a scorer."""

import csv
import json
import math
import random
import re

import numpy as np
import pytest
from scipy import stats

from biaslab.fsb.scorers_study import agreement, ceiling_from_split_half, fit_line, scorer_summary
from biaslab.probes.fsb_judge.probe import FsbJudgeProbe
from biaslab.probing.config import RunConfig
from tests.cli.test_run import biaslab
from tests.conftest import requires_data


def test_agreement_by_hand():
    # human [0, .5, 1], scorer [0, 1, 3]: r = 1.5 / sqrt(42/9 * 0.5); the fit human = 1/14 + (9/28) scorer
    # leaves residuals 1/14, -3/28, -1/28 -> MAE 1/14; both orders agree, so rho = 1
    m = agreement({"human": np.array([0.0, 0.5, 1.0]), "scorer": np.array([0.0, 1.0, 3.0])})
    assert m["pearson"] == pytest.approx(1.5 / math.sqrt(42 / 9 * 0.5), abs=1e-12)
    assert m["spearman"] == pytest.approx(1.0)
    assert m["mae_fit"] == pytest.approx(1 / 14, abs=1e-12)
    assert fit_line(np.array([0.0, 1, 3]), np.array([0.0, 0.5, 1.0])) == pytest.approx((1 / 14, 9 / 28))
    assert fit_line(np.array([2.0, 2.0]), np.array([0.0, 1.0])) == (0.5, 0.0)  # constant scorer: the mean
    assert ceiling_from_split_half(0.8) == pytest.approx(math.sqrt(1.6 / 1.8))
    assert math.isnan(ceiling_from_split_half(-0.1))


def test_summary_leaves_out_texts_without_a_score():
    human = np.array([0.1, 0.4, 0.35, 0.8, 0.9])
    s = scorer_summary(human, [0.0, 2.0, float("nan"), 1.0, 5.0])
    assert s["n"] == 4 and s["n_missing"] == 1
    assert s["pearson"]["value"] == pytest.approx(stats.pearsonr([0.1, 0.4, 0.8, 0.9], [0, 2, 1, 5])[0])
    assert s["spearman"]["value"] == pytest.approx(stats.spearmanr([0.1, 0.4, 0.8, 0.9], [0, 2, 1, 5])[0])


def test_summary_intervals_by_hand():
    """Correlations: Fisher's z over the texts (rho on the ranks), p against 0. MAE after the fit: the t interval
    of the texts' values |e_i| + (influence of the line), whose mean is the MAE and whose variance matches the
    jackknife's (an independent estimate of the same sampling variance)."""
    from biaslab.fsb.scorers_study import mae_fit_units

    rng = np.random.default_rng(8)
    human = rng.uniform(0, 1, 200)
    scorer = 3 * human + rng.normal(0, 1, 200)
    s = scorer_summary(human, scorer)
    for name, x, y in [
        ("pearson", human, scorer),
        ("spearman", stats.rankdata(human), stats.rankdata(scorer)),
    ]:
        r = np.corrcoef(x, y)[0, 1]
        z, se = np.arctanh(r), 1 / np.sqrt(197)
        assert s[name]["value"] == pytest.approx(r) and s[name]["null"] == 0.0
        assert (s[name]["ci_low"], s[name]["ci_high"]) == pytest.approx(
            tuple(np.tanh([z - 1.959964 * se, z + 1.959964 * se]))
        )
        assert s[name]["p"] == pytest.approx(2 * stats.norm.sf(abs(z) / se))
    u = mae_fit_units(human, scorer)
    mae = agreement({"human": human, "scorer": scorer})["mae_fit"]
    assert u.mean() == pytest.approx(mae, abs=1e-12) and s["mae_fit"]["value"] == mae
    half = stats.t.ppf(0.975, 199) * u.std(ddof=1) / np.sqrt(200)
    assert (s["mae_fit"]["ci_low"], s["mae_fit"]["ci_high"]) == pytest.approx((mae - half, mae + half), abs=1e-9)
    keep = ~np.eye(200, dtype=bool)
    loo = np.array([agreement({"human": human[k], "scorer": scorer[k]})["mae_fit"] for k in keep])
    jackknife = 199 / 200 * np.sum((loo - loo.mean()) ** 2)
    assert jackknife == pytest.approx(u.var(ddof=1) / 200, rel=0.05)  # the residuals alone: 11% short


def released_texts_and_scores(data_dir):
    with open(data_dir / "fsb" / "fsb_final_scores.csv", newline="") as fh:
        scores = {r["id"]: float(r["score_normalized"]) for r in csv.DictReader(fh)}
    with open(data_dir / "fsb" / "FSB_text.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [r["response"] for r in rows], np.array([scores[r["uid"]] for r in rows])


@requires_data
def test_vader_against_the_released_scores_matches_an_independent_computation(tmp_path):
    import os
    from pathlib import Path

    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    out = tmp_path / "study"
    proc = biaslab("fsb", "scorers", "--scorer", "vader", "--out", out, cache=tmp_path / "c")
    results = json.loads((out / "results.json").read_text())
    texts, human = released_texts_and_scores(Path(os.environ["BIASLAB_DATA_DIR"]))
    analyzer = SentimentIntensityAnalyzer()
    vader = np.array([analyzer.polarity_scores(t)["compound"] for t in texts])
    r = np.corrcoef(vader, human)[0, 1]
    assert results["metrics"]["pearson:vader"]["value"] == pytest.approx(r, abs=1e-3)
    assert results["metrics"]["spearman:vader"]["value"] == pytest.approx(stats.spearmanr(vader, human)[0], abs=1e-3)
    slope, intercept = np.polyfit(vader, human, 1)
    mae = np.mean(np.abs(human - (intercept + slope * vader)))
    assert results["metrics"]["mae_fit:vader"]["value"] == pytest.approx(mae, abs=1e-9)
    p = results["metrics"]["pearson:vader"]
    assert p["ci_low"] < p["value"] < p["ci_high"] and p["n"] == 1000 == results["n_items"]
    rel = results["reliability"]
    assert rel["available"] and rel["n_annotations"] == 5360
    half = rel["split_half"]["pearson"]["mean"]
    assert 0.8 < half < 0.95 and rel["ceiling"]["pearson"] == pytest.approx(math.sqrt(2 * half / (1 + half)))
    assert f"Pearson {r:.3f}" in proc.stdout.replace("\n", " ") and "ceiling" in proc.stdout
    with open(out / "scores.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [float(row["vader"]) for row in table] == pytest.approx(vader.tolist())
    report = (out / "report.html").read_text()
    assert report.count("<svg") == 1 and report.count("<circle") == 1000
    assert "<script" not in report and not re.search(r"""(src|href)=["']https?:""", report)
    assert "Spearman-Brown" in report and results["paper_table6_pearson"]["GPT-4 judge"] == 0.813
    again = biaslab("fsb", "scorers", "--scorer", "vader", "--out", out, cache=tmp_path / "c")
    assert json.loads((out / "results.json").read_text())["scorers"][0]["cache"] == {
        **results["scorers"][0]["cache"],
        "hits": 1000,
        "computed": 0,
    }
    assert again.stdout == proc.stdout


def judge_items(tmp_path, n=40):
    rng = random.Random(3)
    path = tmp_path / "items.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text", "score"])
        for i in range(n):
            w.writerow(
                [
                    f"t{i}",
                    f"Sentence number {i} about {rng.choice(['women', 'men', 'people'])}.",
                    f"{(i + 0.5) / n:.4f}",
                ]
            )
    return path


@requires_data
def test_a_finished_judge_run_is_a_scorer(tmp_path):
    items = judge_items(tmp_path)
    probe = FsbJudgeProbe(items_file=items)
    planned = probe.plan(probe.load_items(), RunConfig(repetitions=2, seed=1))
    rng = random.Random(5)
    answers = {}
    for p in planned:
        truth = p.item.metadata["human_score"]
        answers[p.request.display()] = (
            f"{min(1, max(0, truth + rng.gauss(0, 0.15))):.3f}" if rng.random() > 0.1 else "No idea."
        )
    canned = tmp_path / "answers.json"
    canned.write_text(json.dumps(answers))
    run = tmp_path / "judge"
    biaslab(
        "run",
        "fsb-judge",
        "--model",
        f"scripted/canned:file={canned}",
        "--items",
        items,
        "--repetitions",
        "2",
        "--seed",
        "1",
        "--out",
        run,
        cache=tmp_path / "c",
    )
    rows = [json.loads(line) for line in (run / "attempts.jsonl").read_text().splitlines()]
    by_id = {}
    for r in rows:
        by_id.setdefault(r["item_id"], [])
        if r["judge_score"] is not None:
            by_id[r["item_id"]].append(r["judge_score"])
    truth = {r["id"]: float(r["score"]) for r in csv.DictReader(open(items, newline=""))}
    pairs = [(truth[i], np.mean(v)) for i, v in by_id.items() if v]
    out = tmp_path / "study"
    proc = biaslab(
        "fsb",
        "scorers",
        "--scorer",
        f"judge-run:{run}",
        "--texts",
        items,
        "--scores",
        items,
        "--score-column",
        "score",
        "--out",
        out,
        cache=tmp_path / "c",
    )
    results = json.loads((out / "results.json").read_text())
    summary = results["scorers"][0]
    assert summary["n"] == len(pairs) and summary["n_missing"] == 40 - len(pairs) > 0
    assert results["metrics"][f"pearson:judge-run:{run}"]["value"] == pytest.approx(
        stats.pearsonr(*zip(*pairs))[0], abs=1e-9
    )
    assert not results["reliability"]["available"] and "--annotations" in results["reliability"]["reason"]
    assert "no ceiling" in proc.stdout and results["paper_table6_pearson"] is None
    assert "the paper's scorers" not in (out / "report.html").read_text()


def test_bad_input_is_a_one_line_error(tmp_path):
    proc = biaslab(
        "fsb",
        "scorers",
        "--scorer",
        "vader",
        "--scorer",
        "vader",
        "--out",
        tmp_path / "o",
        cache=tmp_path / "c",
        check=False,
    )
    assert proc.returncode != 0 and "given twice" in proc.stderr and "Traceback" not in proc.stderr
    proc = biaslab(
        "fsb",
        "scorers",
        "--scorer",
        "judge-run:/no/such/run",
        "--out",
        tmp_path / "o",
        cache=tmp_path / "c",
        check=False,
    )
    assert proc.returncode != 0 and "not a finished run folder" in proc.stderr and "Traceback" not in proc.stderr
    proc = biaslab(
        "fsb", "scorers", "--scorer", "sentiment", "--out", tmp_path / "o", cache=tmp_path / "c", check=False
    )
    assert proc.returncode != 0 and "unknown scorer" in proc.stderr and "Traceback" not in proc.stderr


@requires_data
def test_the_released_scores_named_explicitly_still_get_the_ceiling(tmp_path):
    import os
    from pathlib import Path

    released = Path(os.environ["BIASLAB_DATA_DIR"]) / "fsb" / "fsb_final_scores.csv"
    copy = tmp_path / "scores.csv"
    copy.write_bytes(released.read_bytes())
    out = tmp_path / "o"
    biaslab(
        "fsb",
        "scorers",
        "--scorer",
        "vader",
        "--scores",
        copy,
        "--trials",
        "5",
        "--out",
        out,
        cache=tmp_path / "c",
    )
    results = json.loads((out / "results.json").read_text())
    assert results["reliability"]["available"] and results["reliability"]["split_half"]["trials"] == 5
    assert results["metrics"]["pearson:vader"]["ci_low"] < results["metrics"]["pearson:vader"]["value"]


def test_scatter_puts_the_scorer_across_the_human_score_up_and_the_fit_through_a_perfect_line():
    from biaslab.fsb.scorers_report import scatter_svg

    svg = str(scatter_svg([0.0, 0.5, 1.0, 0.2], [10, 20, 30, float("nan")], label="x<y", intercept=-0.5, slope=0.05))
    dots = [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)]
    assert len(dots) == 3  # the text without a score is not drawn
    assert dots[0][0] < dots[1][0] < dots[2][0] and dots[0][1] > dots[1][1] > dots[2][1]  # SVG y grows down
    x1, y1, x2, y2 = map(
        float,
        re.search(
            r'<line x1="([\d.-]+)" y1="([\d.-]+)" x2="([\d.-]+)" y2="([\d.-]+)" '
            r'stroke="#1d2330"',
            svg,
        ).groups(),
    )
    for x, y in dots:  # human = -0.5 + 0.05 * scorer holds exactly: every dot lies on the line
        assert abs((y2 - y1) * (x - x1) - (y - y1) * (x2 - x1)) / math.hypot(x2 - x1, y2 - y1) < 0.2
    assert "x&lt;y" in svg and "<script" not in svg and "style=" not in svg


def test_ceiling_needs_enough_judgements(tmp_path):
    from biaslab.fsb.scorers_run import reliability_ceiling

    ann = tmp_path / "few.csv"
    rows = ["Item1,Item2,Item3,Item4,BestItem,WorstItem"]
    for t in range(4):  # 4 tuples annotated twice: too few for a split-half figure
        items = [f"{t}{j}" for j in "abcd"]
        rows += [",".join([*items, items[0], items[3]]), ",".join([*items, items[1], items[2]])]
    ann.write_text("\n".join(rows) + "\n")
    rel = reliability_ceiling(ann, [f"{t}{j}" for t in range(4) for j in "abcd"], trials=5, seed=0)
    assert not rel["available"] and "ceiling" not in rel
    assert rel["reason"] == (
        "split-half reliability: too few judgements: 4 tuples with two or more annotations "
        "(split-half reliability needs 10)"
    )
