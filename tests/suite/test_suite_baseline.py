"""`biaslab suite --baseline`: every model of the suite gated against a baseline suite (scripted models), in
results.json and the report card; and the same two suites through `biaslab gate`."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = requires_data


def biaslab(*args, cache, expect: int = 0) -> str:
    proc = run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache), "COLUMNS": "100"})
    assert proc.returncode == expect, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_suite_gated_against_a_baseline_suite(tmp_path):
    cache, base, cand = tmp_path / "c", tmp_path / "base", tmp_path / "cand"
    probes = ["--probes", "jobs-lum", "--probes", "winosemitism", "--limit", "40", "-q"]
    # the baseline writes he/she/they/none at random, the candidate always "he"; their log-likelihoods agree
    biaslab("suite", "--model", "scripted/random-gender", *probes, "--out", base, cache=cache)
    out = biaslab("suite", "--model", "scripted/he", *probes, "--baseline", base, "--out", cand, cache=cache)
    assert "scripted/he against the baseline: FAIL" in out
    res = json.loads((cand / "results.json").read_text())
    (gate,) = res["gates"]
    verdicts = {m["name"]: (m["verdict"], m["margin"], m["margin_source"]) for m in gate["metrics"]}
    assert verdicts["jobs-lum:masculine_rate"] == ("regressed", 0.03, "probe default")
    # the two runs score every pair alike: 40 pairs that agree cannot show a 3-point margin (0.97^k for its k
    # predicates is far above 0.05), so it is too small, not a pass (tests/gate/test_small_samples.py)
    assert verdicts["winosemitism:bias_score"] == ("too small", 3.0, "probe default")
    base_rate = json.loads((base / "runs/scripted_random-gender/jobs-lum/results.json").read_text())["metrics"][
        "masculine_rate"
    ]["value"]
    (mr,) = [m for m in gate["metrics"] if m["name"] == "jobs-lum:masculine_rate"]
    assert mr["candidate"] == 1.0 and mr["diff"] == pytest.approx(0.5 - abs(base_rate - 0.5))  # the harm difference
    assert all(d["design"] == "paired" for d in gate["probes"].values())
    html = (cand / "report.html").read_text()
    assert "Release gate against the baseline suite" in html and "regressed" in html

    junit = tmp_path / "gate.xml"
    out = biaslab("gate", base, cand, "--junit", junit, cache=cache, expect=1)
    assert "jobs-lum:masculine_rate" in out and "regressed" in out and "FAIL" in out
    cases = {(c.get("classname"), c.get("name")): c.find("failure") for c in ET.parse(junit).iter("testcase")}
    assert set(cases) == {
        ("biaslab.gate.jobs-lum", "masculine_rate"),
        ("biaslab.gate.jobs-lum", "stereotype_rate"),
        ("biaslab.gate.jobs-lum", "disparity"),  # every headline of the probe is gated
        ("biaslab.gate.winosemitism", "bias_score"),
    }
    assert cases[("biaslab.gate.jobs-lum", "masculine_rate")].get("type") == "regressed"
    assert cases[("biaslab.gate.winosemitism", "bias_score")].get("type") == "too small"
    # a suite against itself agrees on every item: too small at these 40 items for the default margins
    out = biaslab("gate", cand, cand, cache=cache, expect=1)
    assert "too small" in out and "the runs agree on all" in " ".join(out.split())


def test_a_baseline_that_is_not_a_suite_is_refused_before_any_model_runs(tmp_path):
    out = biaslab(
        "suite",
        "--model",
        "scripted/he",
        "--probes",
        "jobs-lum",
        "--limit",
        "2",
        "--baseline",
        tmp_path / "nothing",
        "--out",
        tmp_path / "s",
        cache=tmp_path / "c",
        expect=2,
    )
    assert "does not exist" in out and not (tmp_path / "s" / "results.json").exists()
