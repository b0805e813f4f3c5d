"""`biaslab gate` on runs written like `biaslab run` writes them (the pairs probe, chosen decisions): verdicts,
exit codes, usage errors, the JUnit and Markdown files, unpaired runs, equivalence and suites."""

from __future__ import annotations

import json
import math
from xml.etree import ElementTree as ET

import numpy as np
import pytest
from scipy.stats import norm

from biaslab.gate.decide import run_gate
from biaslab.stats.noninferiority import items_to_settle
from tests.gate.synthetic import decisions, gate_cli, pairs_run, suite_dir

N = 600


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A baseline near 61% and a candidate that keeps 70% of its decisions and redraws the rest at 90%."""
    tmp = tmp_path_factory.mktemp("runs")
    a = decisions(N, 0.6, 1)
    b = decisions(N, 0.9, 2, a, 0.3)
    return pairs_run(tmp / "base", a), pairs_run(tmp / "cand", b), a, b


def test_tight_margin_fails_loose_margin_passes(two_runs, monkeypatch, capsys):
    base, cand, a, b = two_runs
    diff = 100 * (b.count("stereotype") - a.count("stereotype")) / N  # both above 50: the harm difference
    code, out, _ = gate_cli(monkeypatch, capsys, base, cand, "--margin", "bias_score=3")
    assert code == 1 and "regressed" in out and "FAIL" in out
    assert "paired on 600 shared pairs" in out and "predicates" in out and "Holm" in out
    code, out, _ = gate_cli(monkeypatch, capsys, base, cand, "--margin", "bias_score=15")
    assert code == 0 and "non-inferior" in out and "PASS" in out
    r = run_gate(base, cand, ["bias_score=15"])["metrics"][0]
    assert r["diff"] == pytest.approx(diff) and r["baseline"] == pytest.approx(100 * a.count("stereotype") / N)
    assert r["design"] == "paired" and r["n"] == N and r["lower"] < diff < r["upper"] < 15


def test_a_run_against_itself_passes_only_where_its_units_can_show_it(two_runs, monkeypatch, capsys):
    """The same answers on every pair: no spread to bootstrap. The candidate worse by 20 points needs 20% of the
    pairs answered otherwise; packed into the largest clusters (37 pairs; 600 / 22 on average) that is a share
    0.2 * (600 / 22) / 37 of the 22 predicates (a cluster one draw), none of them drawn with chance
    (1 - 0.1474)^22 = 0.030 (passes at 0.05); 15 points: 0.076, too small, with the predicates that would do."""
    base = two_runs[0]
    share = lambda margin, mean, largest: margin / 100 * mean / largest  # noqa: E731
    code, out, _ = gate_cli(monkeypatch, capsys, base, base, "--margin", "bias_score=20")
    assert code == 0 and "PASS" in out
    r = run_gate(base, base, ["bias_score=20"])["metrics"][0]
    assert r["units"] == 22 and r["p"] == pytest.approx((1 - share(20, 600 / 22, 37)) ** 22) and r["diff"] == 0
    code, _, _ = gate_cli(monkeypatch, capsys, base, base, "--margin", "bias_score=20", "--equivalence")
    assert code == 0
    code, out, _ = gate_cli(monkeypatch, capsys, base, base, "--margin", "bias_score=15")
    need = math.ceil(math.log(0.05) / math.log(1 - share(15, 600 / 22, 37)))  # 26
    assert code == 1 and "too small" in out and f"agreement on {need} predicates" in " ".join(out.split())
    # Holm over two margins at 30 points: the 11 predicates of Jewish pairs (36 or 37 pairs each) the larger p (as
    # is), all 22 the smaller (twice)
    r = run_gate(base, base, ["bias_score=30", "bias_score:Jewish=30"])
    assert r["passed"] and [m["units"] for m in r["metrics"]] == [22, 11]
    every, jewish = (1 - share(30, 600 / 22, 37)) ** 22, (1 - share(30, 400 / 11, 37)) ** 11
    assert [m["p_holm"] for m in r["metrics"]] == pytest.approx([2 * every, jewish])


def test_usage_errors_exit_2_with_one_line(two_runs, tmp_path, monkeypatch, capsys):
    base, cand = two_runs[:2]
    for margin, words in (
        ("bias_scor=3", "unknown metric"),
        ("tie_rate=0.1", "unknown metric"),
        ("bias_score", "METRIC=DELTA"),
        ("bias_score=three", "not a number"),
        ("bias_score=-1", "positive"),
        ("bias_score=0", "positive"),
        ("=3", "METRIC=DELTA"),
    ):
        code, out, err = gate_cli(monkeypatch, capsys, base, cand, "--margin", margin)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, margin
    code, _, err = gate_cli(monkeypatch, capsys, base, cand, "--margin", "bias_score=3", "--margin", "bias_score=4")
    assert code == 2 and "twice" in err
    # the unknown-metric line names what can be gated
    code, _, err = gate_cli(monkeypatch, capsys, base, cand, "--margin", "bias_scor=3")
    assert "bias_score" in err.split("can be gated")[1] and "bias_score:Jewish" in err
    code, _, err = gate_cli(monkeypatch, capsys, base, cand, "--alpha", "0.7")
    assert code == 2 and "--alpha" in err


def test_runs_of_different_probes_exit_2(two_runs, tmp_path, monkeypatch, capsys):
    other = pairs_run(tmp_path / "wino", two_runs[3], probe="winosemitism")
    code, _, err = gate_cli(monkeypatch, capsys, two_runs[0], other, "--margin", "bias_score=3")
    assert code == 2 and "different probes (pairs, winosemitism)" in err and len(err.strip().splitlines()) == 1
    suite = suite_dir(tmp_path / "suite", "m", {"pairs": pairs_run(tmp_path / "x", two_runs[2])})
    code, _, err = gate_cli(monkeypatch, capsys, two_runs[0], suite)
    assert code == 2 and "a run against a run or a suite against a suite" in err


def test_junit_file_has_a_testcase_per_metric_and_a_failure_for_each_not_shown(two_runs, tmp_path, monkeypatch, capsys):
    base, cand = two_runs[:2]
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    code, _, _ = gate_cli(
        monkeypatch,
        capsys,
        base,
        cand,
        "--margin",
        "bias_score=15",
        "--margin",
        "bias_score:Jewish=1",
        "--margin",
        "bias_score:Women=40",
        "--junit",
        junit,
        "--markdown",
        md,
    )
    assert code == 1
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "1"
    suite = root.find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"bias_score", "bias_score:Jewish", "bias_score:Women"}
    assert all(c.get("classname") == "biaslab.gate.pairs" for c in cases.values())
    failure = cases["bias_score:Jewish"].find("failure")
    assert failure is not None and failure.get("type") == "regressed" and "margin 1" in failure.get("message")
    assert cases["bias_score"].find("failure") is None and cases["bias_score:Women"].find("failure") is None
    text = md.read_text()
    assert text.startswith("## biaslab gate: ❌ FAIL: 1 of 3") and "| pairs:bias_score:Jewish |" in text
    assert "❌ regressed" in text and text.count("✅ non-inferior") == 2 and "Holm" in text


def test_holm_adjusts_across_the_margins(two_runs):
    base, cand = two_runs[:2]
    r = run_gate(base, cand, ["bias_score=9.7", "bias_score:Jewish=30", "bias_score:Women=30"])
    ps = [m["p"] for m in r["metrics"]]
    order = np.argsort(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (3 - rank) * ps[i]))
        assert r["metrics"][i]["p_holm"] == pytest.approx(running)
    assert "Holm" in r["adjustment"] and r["resamples"] >= 2000


def test_inconclusive_says_how_many_items_would_settle_it(two_runs, monkeypatch, capsys):
    base, cand = two_runs[:2]
    r = run_gate(base, cand, ["bias_score=9"])["metrics"][0]
    assert r["verdict"] == "inconclusive" and r["lower"] < 9 < r["upper"] and r["diff"] < 9
    n = items_to_settle(r["diff"], r["se"], N, 9, alpha=0.05, power=0.8)
    # the normal plan by hand: SE scaled as 1/sqrt(n), one-sided 0.05, power 0.8, gap 9 - diff
    assert n == math.ceil((r["se"] * math.sqrt(N) * (norm.ppf(0.95) + norm.ppf(0.8)) / (9 - r["diff"])) ** 2)
    assert r["settle"]["n"] == n and r["settle"]["more"] == n - N and n > N
    code, out, _ = gate_cli(monkeypatch, capsys, base, cand, "--margin", "bias_score=9")
    assert code == 1 and f"about {n} pairs in all ({n - N} more) would show it non-inferior" in out.replace("\n", " ")


def test_unpaired_runs_are_tested_from_their_intervals(tmp_path, monkeypatch, capsys):
    """Runs on different pairs: independent normal errors with each run's reported SE (95% CI / 3.92)."""
    a = pairs_run(tmp_path / "a", decisions(300, 0.8, 5))
    b = pairs_run(tmp_path / "b", decisions(300, 0.8, 6), offset=1000)
    code, out, _ = gate_cli(monkeypatch, capsys, a, b, "--margin", "bias_score=8")
    assert "unpaired (the runs share 0 item(s))" in out
    r = run_gate(a, b, ["bias_score=8"])["metrics"][0]
    ma, mb = (json.loads((d / "results.json").read_text())["metrics"]["bias_score"] for d in (a, b))
    se = math.hypot(*[(m["ci_high"] - m["ci_low"]) / (2 * 1.959963984540054) for m in (ma, mb)])
    diff = mb["value"] - ma["value"]  # both far above 50: the harm difference is the difference
    assert r["design"] == "unpaired" and r["diff"] == pytest.approx(diff)
    beta = 0.05 / 10
    assert r["p"] == pytest.approx(beta + norm.cdf((diff - 8) / se), abs=0.012)
    assert (code == 0) == (r["p_holm"] <= 0.05)


def test_equivalence_mode(two_runs, monkeypatch, capsys):
    base, cand = two_runs[:2]
    code, out, _ = gate_cli(monkeypatch, capsys, base, cand, "--margin", "bias_score=15", "--equivalence")
    assert code == 0 and "equivalent" in out and "±15" in out
    r = run_gate(base, cand, ["bias_score=3"], equivalence_mode=True)["metrics"][0]
    assert r["verdict"] == "different" and r["lower"] > 3
    # moving the other way is no better for equivalence: swap the runs
    r = run_gate(cand, base, ["bias_score=3"], equivalence_mode=True)["metrics"][0]
    assert r["verdict"] == "different" and r["upper"] < -3


@pytest.mark.slow
def test_suite_against_suite_with_default_margins(tmp_path, monkeypatch, capsys):
    a, b = decisions(N, 0.6, 1), None
    b = decisions(N, 0.9, 2, a, 0.3)
    base = suite_dir(
        tmp_path / "base",
        "m1",
        {"pairs": pairs_run(tmp_path / "r1", a), "winosemitism": pairs_run(tmp_path / "r2", a, probe="winosemitism")},
    )
    cand = suite_dir(
        tmp_path / "cand",
        "m2",
        {"pairs": pairs_run(tmp_path / "r3", b), "winosemitism": pairs_run(tmp_path / "r4", a, probe="winosemitism")},
    )
    # defaults: every headline at its probe's margin (bias_score: 3 points) but where one is given; the two
    # winosemitism runs agree on every pair, which shows them 25 points apart at most ((1 - 0.25 * (600 / 22) / 37)^22
    # = 0.011, below Holm's 0.025; test_a_run_against_itself_passes_only_where_its_units_can_show_it), not 3
    junit = tmp_path / "suite.xml"
    code, out, _ = gate_cli(monkeypatch, capsys, base, cand, "--junit", junit, "--margin", "winosemitism:bias_score=25")
    assert code == 1 and "(default)" not in out and "3*" in out
    cases = {
        c.get("classname") + "/" + c.get("name"): c.find("failure") is None for c in ET.parse(junit).iter("testcase")
    }
    assert cases == {"biaslab.gate.pairs/bias_score": False, "biaslab.gate.winosemitism/bias_score": True}
    # a margin given per probe replaces that probe's default only
    r = run_gate(base, cand, ["pairs:bias_score=15"])
    assert [(m["name"], m["margin"], m["margin_source"], m["verdict"]) for m in r["metrics"]] == [
        ("pairs:bias_score", 15.0, "given", "non-inferior"),
        ("winosemitism:bias_score", 3.0, "probe default", "too small"),
    ]
    # a name without its probe applies to every probe that has the metric
    r = run_gate(base, cand, ["bias_score=25"])
    assert r["passed"] and {m["margin"] for m in r["metrics"]} == {25.0}
    code, _, err = gate_cli(monkeypatch, capsys, base, cand, "--margin", "crows-pairs:bias_score=3")
    assert code == 2 and "unknown metric" in err


def test_a_probe_missing_from_the_candidate_suite_fails(tmp_path, monkeypatch, capsys):
    a = decisions(100, 0.6, 1)
    base = suite_dir(
        tmp_path / "base",
        "m1",
        {"pairs": pairs_run(tmp_path / "r1", a), "winosemitism": pairs_run(tmp_path / "r2", a, probe="winosemitism")},
    )
    cand = suite_dir(tmp_path / "cand", "m2", {"pairs": pairs_run(tmp_path / "r3", a)})
    code, out, _ = gate_cli(monkeypatch, capsys, base, cand)
    assert code == 1 and "winosemitism:bias_score: not tested: the candidate has no run of this probe" in out.replace(
        "\n", " "
    )


def test_a_metric_not_defined_on_the_shared_items_is_tested_unpaired(tmp_path, monkeypatch, capsys):
    """The runs share 140 pairs of one group; their other group's pairs differ: bias_score is paired on the shared
    pairs, bias_score:Women (no shared pair) is tested from the runs' intervals, and the output says so."""
    a = pairs_run(tmp_path / "a", decisions(200, 0.7, 1), ["Women"] * 60 + ["Jewish"] * 140)
    b = pairs_run(tmp_path / "b", decisions(200, 0.7, 2), ["Jewish"] * 140 + ["Women"] * 60, offset=60)
    r = run_gate(a, b, ["bias_score=10", "bias_score:Women=10"])
    rows = {m["metric"]: m for m in r["metrics"]}
    assert rows["bias_score"]["design"] == "paired" and rows["bias_score"]["n"] == 140
    assert rows["bias_score:Women"]["design"] == "unpaired"
    note = r["probes"]["pairs"]["note"]
    assert "paired on 140 shared pairs" in note and "60 only in the baseline and 60 only in the candidate" in note
    assert "unpaired (the probe's pairing does not define it on the shared items): bias_score:Women" in note
    women = [json.loads((d / "results.json").read_text())["metrics"]["bias_score:Women"]["value"] for d in (a, b)]
    assert rows["bias_score:Women"]["baseline"] == women[0] and rows["bias_score:Women"]["candidate"] == women[1]
