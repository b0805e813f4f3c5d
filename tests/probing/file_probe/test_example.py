"""The worked example of docs/file_probes.md, run end to end through ``biaslab`` (in process) on scripted answers:
its numbers equal a count by hand of those answers; an edited file is another probe (new model calls); runs of it
compare, gate, plan and report like any probe's, also once the file is gone."""

from __future__ import annotations

import json

import pytest

from biaslab.stats import binomial_central_p, clopper_pearson, two_group_inference
from tests.probing.file_probe.example import EXAMPLE, SAYS, canned, copy_example, rows


def run(cli, probe, model, out, cache, *more):
    res = cli("run", f"file:{probe}", "-m", model, "--out", out, "-q", *more, env={"BIASLAB_CACHE_DIR": str(cache)})
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads((out / "results.json").read_text())


def test_the_example_s_numbers_are_the_hand_count_of_its_answers(cli, tmp_path):
    results = run(cli, EXAMPLE, canned(tmp_path / "mixed.json", SAYS), tmp_path / "run", tmp_path / "cache")
    field = {r["occupation"]: r["field"] for r in rows()}
    detected = [o for o, says in SAYS.items() if says in ("he", "she")]
    he = [o for o in detected if SAYS[o] == "he"]
    share = {g: [float(SAYS[o] == "he") for o in detected if field[o] == g] for g in ("technical", "care")}
    m = results["metrics"]

    assert results["probe"].startswith("file:occupation-pronouns@") and results["n_items"] == len(SAYS) == 12
    rate = m["masculine_rate"]
    assert rate["value"] == pytest.approx(len(he) / len(detected))
    assert (rate["ci_low"], rate["ci_high"]) == pytest.approx(clopper_pearson(len(he), len(detected)))
    assert rate["p"] == pytest.approx(binomial_central_p(len(he), len(detected), 0.5)) and rate["n"] == len(detected)
    for g, values in share.items():
        assert m[f"masculine_rate:{g}"]["value"] == pytest.approx(sum(values) / len(values))
    diff = m["masculine_rate_difference"]
    by_hand = sum(share["technical"]) / len(share["technical"]) - sum(share["care"]) / len(share["care"])
    expected = two_group_inference(share["technical"], share["care"], null=0.0, scale=(0.0, 1.0))
    assert diff["value"] == pytest.approx(by_hand) and diff["range"] == [-1.0, 1.0]
    assert (diff["ci_low"], diff["ci_high"], diff["p"]) == pytest.approx(
        (expected["ci_low"], expected["ci_high"], expected["p"])
    )
    assert m["undetected_rate"]["value"] == pytest.approx(1 - len(detected) / len(SAYS))

    attempts = [json.loads(line) for line in (tmp_path / "run" / "attempts.jsonl").read_text().splitlines()]
    read = {a["item_id"]: a["evaluation"] for a in attempts}
    assert read == {o: {"he": "masculine", "she": "feminine"}.get(says) for o, says in SAYS.items()}
    assert {a["field"] for a in attempts} == {"technical", "care"}
    assert "Occupation pronouns" in (tmp_path / "run" / "report.html").read_text()


def test_an_edited_file_is_another_probe_whose_answers_are_asked_anew(cli, tmp_path):
    cache = tmp_path / "cache"
    probe = copy_example(tmp_path / "probe")
    model = canned(tmp_path / "answers.json", SAYS)
    first = run(cli, probe, model, tmp_path / "a", cache)
    again = run(cli, probe, model, tmp_path / "a", cache)
    assert first["run"]["model_calls"] == 12 and again["run"]["model_calls"] == 0 and again["run"]["cache_hits"] == 12

    probe.write_text(probe.read_text().replace("max_tokens: 80", "max_tokens: 60"), encoding="utf-8")
    refused = cli(
        "run", f"file:{probe}", "-m", model, "--out", tmp_path / "a", "-q", env={"BIASLAB_CACHE_DIR": str(cache)}
    )
    assert refused.returncode == 2 and "already holds a finished run" in refused.stderr
    edited = run(cli, probe, model, tmp_path / "b", cache)
    assert edited["probe"] != first["probe"] and edited["probe"].startswith("file:occupation-pronouns@")
    assert edited["run"]["model_calls"] == 12 and edited["run"]["cache_hits"] == 0
    assert edited["parameters"]["file_sha256"] != first["parameters"]["file_sha256"]

    (tmp_path / "probe" / "occupations.csv").write_text(
        (tmp_path / "probe" / "occupations.csv").read_text() + "roofer,technical\n", encoding="utf-8"
    )
    grown = run(cli, probe, model, tmp_path / "c", cache)  # the table is part of the probe too
    assert grown["probe"] != edited["probe"] and grown["n_items"] == 13 and grown["run"]["cache_hits"] == 0


def test_runs_compare_gate_and_report_after_the_file_is_gone(cli, tmp_path):
    from biaslab.probing.file_probe import registry

    cache = tmp_path / "cache"
    probe = copy_example(tmp_path / "probe")
    a = run(cli, probe, canned(tmp_path / "mixed.json", SAYS, probe), tmp_path / "a", cache)
    b = run(cli, probe, canned(tmp_path / "all_he.json", dict.fromkeys(SAYS, "he"), probe), tmp_path / "b", cache)
    assert a["probe"] == b["probe"] and b["metrics"]["masculine_rate"]["value"] == 1.0

    for f in (probe, probe.parent / "occupations.csv"):
        f.unlink()
    registry._CLASSES.clear()  # a fresh process: the probe is known only from the runs
    res = cli("compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "cmp.json")
    assert res.returncode == 0, res.stdout + res.stderr
    row = next(
        c for c in json.loads((tmp_path / "cmp.json").read_text())["comparisons"] if c["metric"] == "masculine_rate"
    )
    assert row["design"] == "paired" and row["n_shared"] == 12
    assert row["a"] == a["metrics"]["masculine_rate"]["value"] and row["b"] == 1.0

    gate = cli("gate", tmp_path / "a", tmp_path / "b", "--json", tmp_path / "gate.json")
    assert gate.returncode in (0, 1), gate.stdout + gate.stderr
    gated = json.loads((tmp_path / "gate.json").read_text())
    assert "masculine_rate" in json.dumps(gated)  # its declared margin (0.1) gates the headline

    (tmp_path / "a" / "report.html").unlink()
    assert cli("report", tmp_path / "a").returncode == 0 and (tmp_path / "a" / "report.html").is_file()


def test_the_example_plans_and_joins_a_suite(cli, tmp_path):
    res = cli("plan", f"file:{EXAMPLE}", "--effect", "0.1", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    plan = json.loads(res.stdout)
    assert plan["metric"] == "masculine_rate" and plan["counts"] == "occupations" and plan["n_items"] > 12

    res = cli(
        "suite",
        "-m",
        "scripted/he",
        "--probes",
        f"file:{EXAMPLE}",
        "--out",
        tmp_path / "suite",
        "-q",
        env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    card = json.loads((tmp_path / "suite" / "results.json").read_text())
    entry = card["runs"][0]
    assert (
        entry["probe"].startswith("file:occupation-pronouns@") and entry["headlines"][0]["metric"] == "masculine_rate"
    )
    assert entry["headlines"][0]["mark"] == "D"  # every worker called he: the whole interval far from 0.5
