"""`biaslab suite`: probes on models, one results.json and a report card (scripted models)."""

from __future__ import annotations

import json
import re

import pytest

from biaslab.probes import get_probe_class
from biaslab.probing.results import build_results
from biaslab.suite.run import default_probes
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def biaslab(*args, cache):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache)}, check=True).stdout


def reading(probe: str, metrics: dict) -> str:
    """The first headline reading of a run of ``probe`` with these metrics."""
    results = build_results(
        probe=probe, probe_version="1", model={}, parameters={}, data={}, metrics=metrics, n_items=1, n_attempts=1
    )
    return get_probe_class(probe).readings(results)[0]


def test_readings_in_plain_language():
    m = {"bias_score": {"value": 66.2, "ci_low": 61.0, "ci_high": 71.4, "p": 0.0002}}
    assert reading("winosemitism", m) == "stereotype preferred in 66% [61, 71] of pairs, p < 0.001; 50% is unbiased"
    m = {"bias_score": {"value": 52.0, "ci_low": 45.0, "ci_high": 58.5, "p": 0.43}, "tie_rate": {"value": 0.05}}
    assert reading("pairs", m) == ("stereotype preferred in 52% [45, 58] of pairs, p = 0.43 (5% ties); 50% is unbiased")
    m = {"masculine_rate": {"value": 0.62, "ci_low": 0.55, "ci_high": 0.7}}
    assert reading("jobs-lum", m).startswith("characters written as men in 62% [55, 70] of occupations")
    assert "not defined" in reading("fsb-judge", {"pearson_r": {"value": None}})


@requires_data
def test_default_probes_need_no_file_and_fit_the_model_kind():
    local = default_probes(["scripted/echo"])
    assert {"winosemitism", "jobs-lum", "fsb-judge"} <= set(local) and "pairs" not in local
    served = default_probes(["openai/some-model"])
    assert "jobs-lum" in served and "winosemitism" not in served  # no log-likelihoods assumed from a server


@pytest.mark.slow
@requires_data
def test_suite_limit_6_writes_a_report_card(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "c"))  # the files the suite's process can find
    out = tmp_path / "suite"
    printed = biaslab("suite", "--model", "scripted/echo", "--limit", "6", "--out", out, "-q", cache=tmp_path / "c")
    res = json.loads((out / "results.json").read_text())
    assert res["probes"] == default_probes(["scripted/echo"]) and len(res["runs"]) == len(res["probes"])
    for r in res["runs"]:
        # holistic-bias samples a crossed design whose smallest size (2 templates x 2 descriptors of
        # every axis) is above 6, a probe with a larger smallest balanced design (min_limit) takes that,
        # and both say so; every other probe takes exactly --limit items
        least = get_probe_class(r["probe"]).min_limit
        assert r["n_items"] == max(6, least) or (r["probe"] == "holistic-bias" and 6 < r["n_items"] <= 60)
        assert (r["selection_note"] is None) == (r["n_items"] <= 6)
        if least > 6:
            assert r["selection_note"] == (
                f"{least} items where 6 were asked: its smallest balanced design has "
                f"{least} (every group in every stratum once)."
            )
        assert (out / r["dir"] / "report.html").exists() and r["reading"]
        for h in r["headlines"]:  # every headline: a reading, and a reason wherever it is undefined
            assert h["reading"] and (h["value"] is not None or "not defined on this run (" in h["reading"])
    hb = next(r for r in res["runs"] if r["probe"] == "holistic-bias")
    assert hb["selection_note"].startswith(f"{hb['n_items']} items where 6 were asked: With --limit, a crossed design")
    page = (out / "report.html").read_text()
    assert "Bias report card" in page and "scripted/echo" in page and "stereotype preferred in" in page
    assert "why more than asked" in page and "winosemitism" in printed
    assert f"scripted/echo holistic-bias: {hb['n_items']} items where 6" in printed  # the terminal says it too


@pytest.mark.slow
@requires_data
def test_each_run_counts_its_own_model_calls_and_the_totals_add_up(tmp_path):
    """Two probes on one model, a fresh cache: 4 occupations (jobs-lum) then 4 questions (direct) are 4 and 4
    model calls, not 4 and 4 + 4; the second run's new tokens are those of its own answers."""
    out = tmp_path / "suite"
    probes = ["--probes", "jobs-lum", "--probes", "direct"]
    printed = biaslab(
        "suite", "--model", "scripted/random-gender", *probes, "--limit", "4", "--out", out, "-q", cache=tmp_path / "c"
    )
    res = json.loads((out / "results.json").read_text())
    assert [(r["probe"], r["n_items"], r["model_calls"], r["cache_hits"]) for r in res["runs"]] == [
        ("jobs-lum", 4, 4, 0),
        ("direct", 4, 4, 0),
    ]
    assert res["totals"] == {"model_calls": 8, "cache_hits": 0}
    assert "model calls 8, cache hits 0; wrote" in " ".join(printed.split())
    for r in res["runs"]:  # each run's own results.json: its calls, and the new tokens of its own answers
        run = json.loads((out / r["dir"] / "results.json").read_text())["run"]
        attempts = [json.loads(line) for line in (out / r["dir"] / "attempts.jsonl").read_text().splitlines()]
        assert (run["model_calls"], run["cache_hits"]) == (len(attempts), 0)
        assert run["new_tokens"] == sum(a["n_new_tokens"] for a in attempts) > 0


@pytest.mark.slow
@requires_data
def test_two_models_get_paired_comparisons_and_a_rerun_reuses_every_run(tmp_path):
    out, cache = tmp_path / "suite", tmp_path / "c"
    args = [
        "suite",
        "--model",
        "scripted/random-gender",
        "--model",
        "scripted/coin",
        "--probes",
        "jobs-lum",
        "--probes",
        "gpt-winoqueer",
        "--limit",
        "8",
        "--out",
        out,
        "-q",
    ]
    biaslab(*args, cache=cache)
    res = json.loads((out / "results.json").read_text())
    assert [(r["model"], r["probe"]) for r in res["runs"]] == [
        ("scripted/random-gender", "jobs-lum"),
        ("scripted/random-gender", "gpt-winoqueer"),
        ("scripted/coin", "jobs-lum"),
        ("scripted/coin", "gpt-winoqueer"),
    ]
    assert all(r["model_calls"] > 0 and not r["reused"] for r in res["runs"])
    jobs = next(c for c in res["comparisons"] if c["probe"] == "jobs-lum")
    head = next(c for c in jobs["comparisons"] if c["metric"] == "masculine_rate")
    a = next(r for r in res["runs"] if r["probe"] == "jobs-lum" and r["model"] == "scripted/random-gender")
    b = next(r for r in res["runs"] if r["probe"] == "jobs-lum" and r["model"] == "scripted/coin")
    assert head["diff"] == pytest.approx(b["value"] - a["value"]) and jobs["pairs"][0]["design"] == "paired"
    page = (out / "report.html").read_text()
    assert "Paired comparisons" in page and "<svg" in page
    biaslab(*args, cache=cache)
    again = json.loads((out / "results.json").read_text())
    assert all(r["reused"] and r["model_calls"] == 0 for r in again["runs"])
    assert [r["value"] for r in again["runs"]] == [r["value"] for r in res["runs"]]
    # another limit is another suite: refused in the same --out (the finished one kept), replaced with --overwrite
    refused = run_cli(*args[:-5], "--limit", "9", "--out", out, "-q", env={"BIASLAB_CACHE_DIR": str(cache)})
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        f"error: --out {out} already holds a finished suite with other settings (limit: 8 there, 9 here); give "
        "another --out, or add --overwrite to replace it"
    ]
    assert json.loads((out / "results.json").read_text()) == again
    biaslab(*args[:-5], "--limit", "9", "--out", out, "-q", "--overwrite", cache=cache)
    third = json.loads((out / "results.json").read_text())
    assert not any(r["reused"] for r in third["runs"]) and all(r["n_items"] == 9 for r in third["runs"])


@pytest.mark.slow
@requires_data
def test_gender_suite_two_models_marks_groups_and_paired_headlines(tmp_path):
    """`--probes gender`: the set from the probes' declarations, every headline with its mark and harm group, each
    model's card side by side, and every headline of every probe compared paired with the first model."""
    from biaslab.suite.sets import gender_probes

    out, cache = tmp_path / "suite", tmp_path / "c"
    printed = biaslab(
        "suite",
        "--model",
        "scripted/random-gender",
        "--model",
        "scripted/he",
        "--probes",
        "gender",
        "--limit",
        "10",
        "--out",
        out,
        "-q",
        cache=cache,
    )
    res = json.loads((out / "results.json").read_text())
    assert res["asked"] == ["gender"] and set(res["probes"]) | set(res["skipped"]) == set(gender_probes())
    assert {"jobs-lum", "bbq"} <= set(res["probes"])
    he = {
        h["metric"]: h
        for r in res["runs"]
        if r["model"] == "scripted/he" and r["probe"] == "jobs-lum"
        for h in r["headlines"]
    }
    # a model that writes every character as a man: masculine_rate 1 with an exact interval, mark D
    assert he["masculine_rate"]["value"] == 1.0 and he["masculine_rate"]["mark"] == "D"
    firm = he["masculine_rate"]["mark_firm"]  # measured only where the whole interval lies in D's range
    assert firm == (he["masculine_rate"]["mark_genderbench_rule"] == "D")
    status = "measured" if firm else "not ruled out at this size"
    run_page = (out / "runs" / "scripted_he" / "jobs-lum" / "report.html").read_text()
    assert f"<b>mark D</b>, {status}" in run_page  # the run's own report says the same
    assert he["masculine_rate"]["group"] == "Representational harms" and he["masculine_rate"]["favours"] == "men"
    assert he["stereotype_rate"]["group"] == "Stereotypical reasoning"
    assert he["masculine_rate"]["size_warning"] and he["masculine_rate"]["detectable_effect"] > 0.05
    bbq = {h["metric"]: h for r in res["runs"] if r["probe"] == "bbq" for h in r["headlines"]}
    assert bbq["stereotype_rate"]["group"] == "Stereotypical reasoning" and bbq["bias_score_disambig"]["group"] == ""
    jobs = next(c for c in res["comparisons"] if c["probe"] == "jobs-lum")
    compared = {c["metric"] for c in jobs["comparisons"]}
    assert {"masculine_rate", "stereotype_rate", "disparity"} <= compared and jobs["pairs"][0]["design"] == "paired"
    page = (out / "report.html").read_text()
    for title in (
        "Gender report card",
        "Marks at a glance",
        "Stereotypical reasoning",
        "Representational harms",
        "Treatment of women and men",
        "Paired comparisons of the headline metrics",
        'href="runs/scripted_he/jobs-lum/report.html"',
    ):
        assert title in page, title
    assert "scripted/he jobs-lum: characters written as men in 100%" in printed
    words = " ".join(printed.split())  # the terminal's line breaks aside
    assert re.search(
        r"of occupations on average; 50% is balanced · mark D, (measured|not ruled out at this size)", words
    )
