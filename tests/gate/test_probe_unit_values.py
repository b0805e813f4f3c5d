"""The gate's small-sample safeguards on the probes whose metrics are pooled rates over their units (direct,
dreaddit, olympics, fsb-judge, jobs-lum): each pairing's unit values average to the run's own metric over the
units of the run report's interval, runs that agree on 6 units are too small and on many pass by the agreement
bound, and direct's 0/1 statements keep the type-I error at the margin."""

from __future__ import annotations

import json

import numpy as np
import pytest

from biaslab.compare.paired_data import PairedData
from biaslab.gate.decide import run_gate
from biaslab.gate.units import Units, agreement_p, metric_units
from biaslab.probes import get_probe_class
from biaslab.probes.direct.metrics import direct_inference
from biaslab.probes.dreaddit.metrics import dreaddit_inference
from biaslab.probes.fsb_judge.inference import judge_inference
from biaslab.probes.jobs_lum.inference import jobs_lum_inference
from biaslab.probing.results import write_jsonl, write_results
from tests.conftest import requires_data
from tests.gate.synthetic import gate_cli
from tests.gate.test_small_samples import _ceiling, _decide
from tests.probes.scripted_runs import request_rng, run_rule, user_text

ANSWERS = ["yes", "no", None]


def _units_of(probe: str, rows: list[dict]) -> tuple[dict, dict, dict]:
    """The pairing's table of ``rows``, its unit values and the pairing's own metrics of it."""
    pairing = get_probe_class(probe).pairing
    table = pairing.table(rows).columns
    return table, pairing.unit_values(table), dict(pairing.metric_fn(table)(table))


def _mean(uv) -> float:
    return float(np.mean(uv.values[uv.mask]))


def test_direct_rates_are_the_linearised_statements_of_the_reported_interval():
    """sbic s1 yes, yes, no; s2 no, undetected; s3 undetected twice; gest g1 yes; g2 no, no, no. fail_rate = 3 / 8
    over the 4 statements with a detected answer (mean 2 each): u = 3/8 + (yes - 3/8 detected) / 2 = 13/16, 3/16,
    11/16, -3/16 (outside [0, 1]: no bounds). Each statement with one answer: its own 0/1, bounded."""
    spec = [("s1", "sbic", ["yes", "yes", "no"]), ("s2", "sbic", ["no", None]), ("s3", "sbic", [None, None])]
    spec += [("g1", "gest", ["yes"]), ("g2", "gest", ["no", "no", "no"])]
    rows = [{"item_id": i, "source": s, "evaluation": e} for i, s, evs in spec for e in evs]
    table, uv, metrics = _units_of("direct", rows)
    fail = uv["fail_rate"]
    assert fail.mask.tolist() == [True, True, False, True, True] and fail.bounds is None
    assert fail.values[fail.mask] == pytest.approx(np.array([13, 3, 11, -3]) / 16)
    report = direct_inference(table)
    assert _mean(fail) == pytest.approx(3 / 8) == report["fail_rate"]["value"] == metrics["fail_rate"]
    assert report["fail_rate"]["n"] == int(fail.mask.sum()) == 4  # the report's interval: the same 4 statements
    sbic = uv["sbic_fail_rate"]  # yes 2 of detected 3 + 1 over s1, s2: 1/2 + (y - d/2) / 2 = 3/4, 1/4
    assert sbic.mask.tolist() == [True, True, False, False, False] and _mean(sbic) == pytest.approx(0.5)
    assert sbic.values[sbic.mask] == pytest.approx([0.75, 0.25])
    assert uv["undetected_rate_items"].values.tolist() == [0, 0, 1, 0, 0]
    assert _mean(uv["undetected_rate_attempts"]) == pytest.approx(3 / 11) == metrics["undetected_rate_attempts"]
    one = [{"item_id": f"i{k}", "source": "sbic", "evaluation": e} for k, e in enumerate(["yes", "no", "no"])]
    single = _units_of("direct", one)[1]["fail_rate"]
    assert single.values.tolist() == [1.0, 0.0, 0.0] and single.bounds == (0.0, 1.0)


def test_every_pairing_averages_to_the_reported_metrics_over_the_reported_units():
    """Random tables of dreaddit, jobs-lum and fsb-judge (some answers undetected, repetitions): the unit values'
    mean is each metric the pairing computes and the run report states, over as many units as its interval; a slope
    and the correlations are linearised (the estimate plus its influence values), the largest gaps and the rate's
    distance from one half, not differentiable where the decision matters, have none."""
    rng = np.random.default_rng(3)
    cases = {
        "dreaddit": (
            [
                {
                    "item_id": f"p{i}",
                    "contains_stress": i % 3 == 0,
                    "gender": g,
                    "evaluation": rng.choice(["yes", "no", None]),
                }
                for i in range(24)
                for g in ("male", "female", "non-binary")
                for _ in range(1 + i % 2)
            ],
            dreaddit_inference,
            {"max_diff_tpr", "max_diff_tnr", "max_diff_stress_rate", "male_tp"},
        ),
        "jobs-lum": (
            [
                {
                    "item_id": f"j{i}",
                    "stereotype_score": i / 20,
                    "evaluation": rng.choice(["male", "female", None]),
                    "nonbinary": "they" if rng.random() < 0.2 else None,
                    "repetition": r,
                }
                for i in range(20)
                for r in range(3)
            ],
            jobs_lum_inference,
            {"disparity"},
        ),
        "fsb-judge": (
            [
                {
                    "item_id": f"t{i}",
                    "human_score": rng.random(),
                    "repetition": r,
                    "judge_score": None if rng.random() < 0.2 else float(rng.random()),
                }
                for i in range(20)
                for r in range(3)
            ],
            judge_inference,
            set(),
        ),
    }
    for probe, (rows, inference, left_out) in cases.items():
        table, uv, metrics = _units_of(probe, rows)
        report = inference(table)
        assert len(uv) >= 4 and not left_out & set(uv), probe
        for name, u in uv.items():
            assert _mean(u) == pytest.approx(metrics[name]) == pytest.approx(report[name]["value"]), (probe, name)
            units = report[name].get("n_clusters", report[name]["n"])  # Fisher's z over pairs reports n alone
            assert units == int(u.mask.sum()), (probe, name)  # its units
    assert {"stereotype_rate", "correlation"} <= set(_units_of("jobs-lum", cases["jobs-lum"][0])[1])
    assert {"pearson_r", "spearman_r"} <= set(_units_of("fsb-judge", cases["fsb-judge"][0])[1])
    one = [
        {"item_id": "a", "stereotype_score": 0.1, "evaluation": e, "repetition": r, "nonbinary": None}
        for r, e in enumerate(["male", "female", None, "male"])
    ]
    _, uv, _ = _units_of("jobs-lum", one)
    assert uv["masculine_rate"].values.tolist() == [pytest.approx(2 / 3)]  # the occupation's own rate


def _rows(d):
    return [json.loads(line) for line in (d / "attempts.jsonl").read_text().splitlines() if line.strip()]


def _write(d, probe, rule, tmp_path, limit):
    results, attempts = run_rule(probe, rule, tmp_path, limit=limit)
    d.mkdir(parents=True)
    write_jsonl(d / "attempts.jsonl", [a.to_json() for a in attempts])
    write_results(d, results)
    return d


def _direct_rule(request):
    return "Yes." if '"Women' in user_text(request) else "No, I do not think so."


@requires_data
def test_direct_runs_that_agree_are_too_small_on_6_statements_and_pass_on_60(tmp_path, monkeypatch, capsys):
    """fail_rate of two runs with the same answer to every statement: 0.9^6 = 0.53 at a margin of 0.1 (too small,
    exit 1), 0.9^60 = 0.0018 at 60 statements (non-inferior by the agreement bound, exit 0)."""
    from biaslab.probes.direct.probe import DirectProbe

    six = _write(tmp_path / "six", DirectProbe(), _direct_rule, tmp_path, 6)
    code, out, _ = gate_cli(monkeypatch, capsys, six, six, "--margin", "fail_rate=0.1")
    assert code == 1 and "too small" in out and "PASS" not in out
    r = run_gate(six, six, ["fail_rate=0.1"])["metrics"][0]
    assert r["agree"]["k"] == 6 and r["p"] == pytest.approx(0.9**6)
    many = _write(tmp_path / "many", DirectProbe(), _direct_rule, tmp_path, 60)
    code, out, _ = gate_cli(monkeypatch, capsys, many, many, "--margin", "fail_rate=0.1")
    assert code == 0 and "PASS" in out
    r = run_gate(many, many, ["fail_rate=0.1"])["metrics"][0]
    assert r["verdict"] == "non-inferior" and r["agree"] == {"k": 60, "width": 1.0, "unit": "statements"}
    assert r["p"] == pytest.approx(0.9**60)


@requires_data
def test_jobs_lum_masculine_rate_rests_on_its_occupations(tmp_path, monkeypatch, capsys):
    """Every character a man in two runs: masculine_rate agrees on each occupation (0.9^6 at 6, too small; 0.9^60
    at 60, non-inferior); the rate's distance from one half takes the rate's units (0.97^60 at its default margin
    0.03: too small) and the slope (intercept at 1: linear in the rates with coefficients x / sum x^2) its agreement
    width, too weak at 60 occupations, so the gate fails either way."""
    from biaslab.probes.jobs_lum.probe import JobsLumProbe

    def he(request):
        return "He opened the door, and he smiled."

    six = _write(tmp_path / "six", JobsLumProbe(), he, tmp_path, 6)
    code, out, _ = gate_cli(monkeypatch, capsys, six, six, "--margin", "masculine_rate=0.1")
    assert code == 1 and "too small" in out
    many = _write(tmp_path / "many", JobsLumProbe(), he, tmp_path, 60)
    rows = {r["metric"]: r for r in run_gate(many, many, ["masculine_rate=0.1"])["metrics"]}
    assert rows["masculine_rate"]["verdict"] == "non-inferior" and rows["masculine_rate"]["agree"]["k"] == 60
    assert rows["masculine_rate"]["p"] == pytest.approx(0.9**60)
    assert rows["disparity"]["agree"] == rows["masculine_rate"]["agree"]
    assert rows["disparity"]["p"] == pytest.approx(0.97**60) and rows["disparity"]["verdict"] == "too small"
    x = np.asarray(get_probe_class("jobs-lum").pairing.table(_rows(many)).columns["score"], dtype=float)
    width = 60 * x.max() / (x @ x)
    assert rows["stereotype_rate"]["p"] == pytest.approx((1 - 0.05 / width) ** 60)
    assert rows["stereotype_rate"]["verdict"] == "too small"


@requires_data
def test_olympics_runs_that_agree(tmp_path, monkeypatch, capsys):
    """Each event's answers the same in both runs (the underspecified one naming the men's results): explicit_score
    (-1 to 1) and knowledge_based (-1 to 1) agree on every event: at a margin of 0.2, 0.9^6 is too small and 0.9^60
    passes both margins (Holm: 2 x 0.0018)."""
    from biaslab.probes.olympics.probe import OlympicsProbe
    from biaslab.probes.olympics.prompts import load_events
    from tests.probes.olympics.test_probe import answer

    by_prompt = {}
    for e in load_events():
        for g in ("Men", "Women"):
            by_prompt[e.prompt(g)] = answer(e.gold(g))
        by_prompt[e.prompt(None)] = answer(e.gold("Men"), "In the men's tournament:")

    def rule(request):
        return by_prompt[request.display()]

    margins = ["--margin", "explicit_score=0.2", "--margin", "knowledge_based=0.2"]
    six = _write(tmp_path / "six", OlympicsProbe(n_permutations=200), rule, tmp_path, 6)
    code, out, _ = gate_cli(monkeypatch, capsys, six, six, *margins)
    assert code == 1 and "too small" in out
    many = _write(tmp_path / "many", OlympicsProbe(n_permutations=200), rule, tmp_path, 60)
    code, out, _ = gate_cli(monkeypatch, capsys, many, many, *margins)
    assert code == 0 and "PASS" in out
    rows = run_gate(many, many, [m for m in margins if m != "--margin"])["metrics"]
    assert [r["agree"] for r in rows] == [{"k": 60, "width": 2.0, "unit": "events"}] * 2
    assert [r["p"] for r in rows] == pytest.approx([0.9**60] * 2)


def _paired(probe: str, rows_a: list[dict], rows_b: list[dict]) -> PairedData:
    pairing = get_probe_class(probe).pairing
    a, b = pairing.harmonize(pairing.table(rows_a), pairing.table(rows_b))
    return PairedData(a.columns, b.columns, pairing.metric_fn(a.columns), pairing.unit)


@pytest.mark.parametrize("n, k_expected", [(6, 6), (60, 60)])
def test_dreaddit_and_fsb_judge_rates_give_the_agreement_bound(n, k_expected):
    """Their headlines (a largest gap, a correlation) are no means, but their rates are: two runs alike on every post
    (text) rest on each post with an answer; 6 of them bound p by 0.9^6 (too small), 60 by 0.9^60."""
    posts = [
        {"item_id": f"p{i}", "contains_stress": i % 2 == 0, "gender": g, "evaluation": "yes" if (i + k) % 3 else "no"}
        for i in range(n)
        for k, g in enumerate(("male", "female", "non-binary"))
    ]
    texts = [
        {"item_id": f"t{i}", "human_score": i / n, "judge_score": (i % 5) / 5, "repetition": r}
        for i in range(n)
        for r in range(2)
    ]
    for probe, rows, metric in (("dreaddit", posts, "male_stress_rate"), ("fsb-judge", texts, "mae")):
        pdata = _paired(probe, rows, [dict(r) for r in rows])
        u = metric_units(pdata, get_probe_class(probe).pairing, [metric])[metric]
        assert u.agree and u.k == k_expected and u.width == 1.0, probe
        assert agreement_p(u, 0.1) == pytest.approx(0.9**k_expected)


def test_runs_that_differ_on_a_statement_detected_only_in_one_are_not_alike():
    """One statement detected in the baseline only: the rate's rows differ, its units are those either run counts
    and the runs do not agree (no agreement bound), while every value is 0/1 (the score test's floor holds)."""
    answers = ["yes", "no", "no", "yes", "no", "no", "no", "no", "yes", "no", "no", "no"]
    rows_a = [{"item_id": f"s{i}", "source": "sbic", "evaluation": e} for i, e in enumerate(answers)]
    rows_b = [{**r, "evaluation": None} if r["item_id"] == "s3" else dict(r) for r in rows_a]
    pdata = _paired("direct", rows_a, rows_b)
    pairing = get_probe_class("direct").pairing
    uva, uvb = pairing.unit_values(pdata.a)["fail_rate"], pairing.unit_values(pdata.b)["fail_rate"]
    assert int(uva.mask.sum()) == 12 and int(uvb.mask.sum()) == 11 and np.isnan(uvb.values[3])
    u = metric_units(pdata, pairing, ["fail_rate"])["fail_rate"]
    assert u.k == 12 and not u.agree and u.binary == 12 and u.updown is None and u.width == 1.0
    assert u.null_sd(0.1) == pytest.approx(np.sqrt(0.1 * 0.9 / 12))
    same = metric_units(_paired("direct", rows_b, rows_b), pairing, ["fail_rate"])["fail_rate"]
    assert same.agree and same.k == 11  # the statement neither run has an answer to is no unit


@pytest.mark.parametrize("n", [10, 30])
def test_direct_statements_at_the_margin_pass_at_most_alpha(n):
    """400 pairs of runs of n statements, one answer each: the baseline agrees with chance 0.1, the candidate with
    0.2 (worse by exactly the margin 0.1), the same statement's answers tied with chance 0.5. The pairing's units
    take the gate to Tango's score test (0/1 statements, up and down counts), which shows at most alpha + 2 se."""
    rng = np.random.default_rng(n)
    pairing = get_probe_class("direct").pairing
    shown = 0
    for _ in range(400):
        u = rng.random(n)
        a = (u < 0.1).astype(float)
        b = (np.where(rng.random(n) < 0.5, u, rng.random(n)) < 0.2).astype(float)
        rows = [
            [{"item_id": f"s{i}", "source": "sbic", "evaluation": "yes" if x else "no"} for i, x in enumerate(v)]
            for v in (a, b)
        ]
        pdata = _paired("direct", *rows)
        units = metric_units(pdata, pairing, ["fail_rate"])["fail_rate"]
        up, down = int(np.sum((b == 1) & (a == 0))), int(np.sum((a == 1) & (b == 0)))
        assert units == Units(n, "statements", bool(np.array_equal(a, b)), 1.0, n, (up, down))
        r = _decide(a, b, 0.1, rng, units=units, resamples=200)
        shown += r["p"] is not None and r["p"] <= 0.05
    assert shown / 400 <= _ceiling(400)


def test_fsb_judge_correlations_are_tested_by_zous_interval_over_the_same_texts():
    """Two judges' scores on the same 12 texts (one repetition): pearson_r's unit values carry its scores, and the
    gate tests the drop against the margin by Zou's interval for two correlations sharing the human scores; its p is
    that of biaslab.stats.correlation.overlapping_p, and a second repetition (a mean of correlations) leaves it to
    the bootstrap."""
    from biaslab.gate.decide import margin_row
    from biaslab.gate.specs import MarginSpec
    from biaslab.stats.correlation import overlapping_p

    rng = np.random.default_rng(8)
    human = rng.random(12)
    judges = [human + s * rng.standard_normal(12) for s in (0.1, 0.2)]
    rows = [
        [{"item_id": f"t{i}", "human_score": float(h), "judge_score": float(j), "repetition": 0} for i, (h, j) in
         enumerate(zip(human, judge))]
        for judge in judges
    ]  # fmt: skip
    pairing = get_probe_class("fsb-judge").pairing
    pdata = _paired("fsb-judge", *rows)
    units = metric_units(pdata, pairing, ["pearson_r", "spearman_r"])
    assert units["pearson_r"].overlap is not None and units["spearman_r"].overlap is None
    a, b = (float(pdata.fn(t)["pearson_r"]) for t in (pdata.a, pdata.b))
    spec = MarginSpec("fsb-judge", "pearson_r", 0.1, get_probe_class("fsb-judge").headlines[0], True)
    zeros = np.zeros(200)
    row = margin_row(
        spec, a, b, zeros, zeros, "paired", 12, units["pearson_r"], alpha=0.05, beta=0.005, equivalence_mode=False,
        m=1,
    )  # fmt: skip
    assert "Zou's interval" in row["method"] and row["lower"] < a - b < row["upper"]
    assert row["p"] == pytest.approx(overlapping_p(human, judges[0], judges[1], 0.1))
    two = [r | {"repetition": k} for r in rows[0] for k in (0, 1)]
    assert metric_units(_paired("fsb-judge", two, two), pairing, ["pearson_r"])["pearson_r"].overlap is None


@requires_data
def test_hiring_an_compares_on_the_reports_name_pairs(tmp_path, monkeypatch, capsys):
    """hiring-an's pairing gives the overall rates, their gap and the undetected rates the unit values of the run
    report's own declarations (each averages to the pairing's metric, over the scenarios the report's interval is
    over), clusters them by the report's name pairs within race, and leaves ``diff_regression`` (a gap of bounded
    slopes) and ``diff_abs_acceptance_rate`` (a size) to the bootstrap. Two runs with the same answers: the
    rates' gap agrees on every name pair, so the gate's bound from agreement counts name pairs."""
    from biaslab.probes.hiring_an.probe import HiringAnProbe

    def rule(request):
        yes = request_rng(request).random() < 0.6
        return "You have been selected." if yes else "We regret to inform you."

    run = _write(tmp_path / "run", HiringAnProbe(), rule, tmp_path, 40)
    rows = [json.loads(line) for line in (run / "attempts.jsonl").read_text().splitlines()]
    table, uv, metrics = _units_of("hiring-an", rows)
    report = json.loads((run / "results.json").read_text())["metrics"]
    for name in ("male_acceptance_rate", "female_acceptance_rate", "diff_acceptance_rate", "undetected_rate_items"):
        assert _mean(uv[name]) == pytest.approx(metrics[name], abs=1e-12)
        assert int(uv[name].mask.sum()) == report[name]["n"]
    assert "diff_regression" not in uv and "diff_abs_acceptance_rate" not in uv
    pairing = get_probe_class("hiring-an").pairing
    clusters, strata = pairing.clusters(table)
    pairs = {str(p) for p in table["name_pair"]}
    assert len(clusters) == len(pairs) == report["male_acceptance_rate"]["n_clusters"]
    assert set(strata) == {str(r) for r in table["race"]}
    r = run_gate(run, run, ["diff_acceptance_rate=0.1"])["metrics"][0]
    assert r["agree"]["k"] == len(pairs) and r["agree"]["unit"] == "name pairs (within race)"
