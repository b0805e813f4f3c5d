"""The result files' schema: results.json and attempts.jsonl validated on write and read, their JSON Schema
printed by `biaslab schema`, and result folders written before schema version 2 still load.

``tests/fixtures/schema_v1/`` holds two runs written by biaslab at schema version 1 (a scripted jobs-lum run
and a SmolLM2 pairs run on five hand-written pairs): they load, re-report, compare and pilot a plan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from biaslab.errors import DataError
from biaslab.probing.core import Attempt
from biaslab.probing.results import build_results, read_attempts, read_results, write_results
from biaslab.probing.schema import AttemptRecord, RunResults, json_schema, upgrade, validate_results
from tests.cli.test_run import biaslab

V1 = Path(__file__).resolve().parents[1] / "fixtures" / "schema_v1"


def minimal(**changes):
    raw = {
        "schema_version": 2,
        "probe": "pairs",
        "probe_version": "1",
        "model": {"model": "m"},
        "parameters": {},
        "data": {},
        "biaslab_version": "0",
        "metrics": {"bias_score": {"value": 60.0, "ci_low": 50.0, "ci_high": 70.0, "n": 10}},
        "n_items": 10,
        "n_attempts": 10,
    }
    raw.update(changes)
    return raw


def test_a_version_1_folder_loads_with_its_extras_as_details():
    raw = json.loads((V1 / "pairs-smollm2" / "results.json").read_text())
    assert raw["schema_version"] == 1 and "groups" in raw
    results = read_results(V1 / "pairs-smollm2")
    assert results.schema_version == 2 and results.probe == "pairs"
    assert results.details["groups"] == raw["groups"] and results.details["ci_note"] == raw["ci_note"]
    assert results.metric_dicts() == raw["metrics"]  # every metric as written, key order included
    assert [list(m) for m in results.metric_dicts().values()] == [list(m) for m in raw["metrics"].values()]
    assert len(read_attempts(V1 / "pairs-smollm2")) == raw["n_attempts"]


def test_writing_keeps_every_metric_exactly(tmp_path):
    raw = json.loads((V1 / "jobs-lum-scripted" / "results.json").read_text())
    results = read_results(V1 / "jobs-lum-scripted")
    write_results(tmp_path, results)
    again = json.loads((tmp_path / "results.json").read_text())
    assert again["schema_version"] == 2 and again["metrics"] == raw["metrics"]
    assert json.dumps(again["metrics"]) == json.dumps(raw["metrics"])  # byte for byte
    assert again["details"] == {k: v for k, v in raw.items() if k not in RunResults.model_fields}


def test_version_1_runs_re_report_compare_and_pilot_a_plan(tmp_path):
    run = tmp_path / "pairs"
    shutil.copytree(V1 / "pairs-smollm2", run)
    biaslab("report", run, cache=tmp_path / "c")
    assert "stereotype preferred in" in (run / "report.html").read_text()
    other = tmp_path / "jobs"
    shutil.copytree(V1 / "jobs-lum-scripted", other)
    out = tmp_path / "cmp.json"
    biaslab("compare", other, other, "--out", out, cache=tmp_path / "c")
    rows = json.loads(out.read_text())["comparisons"]
    assert {r["design"] for r in rows} == {"paired"} and all(r["diff"] in (0.0, None) for r in rows)
    plan = json.loads(
        biaslab("plan", "jobs-lum", "--effect", "0.2", "--pilot", other, "--json", cache=tmp_path / "c").stdout
    )
    assert plan["n_pilot"] == 30 and plan["n_items"] > 1


def test_unfit_results_are_one_line_errors(tmp_path):
    with pytest.raises(DataError, match="schema_version 7"):
        validate_results(minimal(schema_version=7))
    with pytest.raises(DataError, match="n_items"):
        validate_results(minimal(n_items="ten"))
    with pytest.raises(DataError, match="surprise"):
        validate_results(minimal(surprise=1))  # unknown top-level keys belong in details
    (tmp_path / "results.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="not a results object"):
        read_results(tmp_path)
    (tmp_path / "attempts.jsonl").write_text('{"prompt_index": 0, "text": "no item id"}\n')
    with pytest.raises(DataError, match="line 1 does not fit the attempts schema"):
        read_attempts(tmp_path)


def test_upgrade_moves_only_the_probe_s_own_keys():
    v1 = {**minimal(schema_version=1), "groups": [1], "counts": {"a": 1}}
    v2 = upgrade(v1)
    assert v2["schema_version"] == 2 and v2["details"] == {"groups": [1], "counts": {"a": 1}}
    assert upgrade(v2) is v2


def test_build_results_makes_values_json_safe_and_validates():
    import numpy as np

    results = build_results(
        probe="pairs",
        probe_version="1",
        model={},
        parameters={"x": np.int64(3)},
        data={},
        metrics={"m": {"value": float("nan"), "ci_low": np.float64(0.5)}},
        n_items=1,
        n_attempts=1,
        details={"t": (1, 2)},
    )
    assert results.parameters == {"x": 3} and results.metric("m") == {"value": None, "ci_low": 0.5}
    assert results.details == {"t": [1, 2]}


def test_attempts_round_trip_through_from_json():
    row = json.loads((V1 / "pairs-smollm2" / "attempts.jsonl").read_text().splitlines()[0])
    attempt = Attempt.from_json(row)
    assert attempt.item_id == row["item_id"] and attempt.evaluation == row["evaluation"]
    assert attempt.to_json() == row and list(attempt.to_json()) == list(row)
    AttemptRecord.model_validate(row)


def test_schema_command_prints_json_schemas(tmp_path):
    results = json.loads(biaslab("schema", "results", cache=tmp_path / "c").stdout)
    assert results == json_schema("results") and results["title"] == "RunResults"
    assert {"probe", "metrics", "details", "schema_version"} <= set(results["properties"])
    attempts = json.loads(biaslab("schema", "attempts", cache=tmp_path / "c").stdout)
    assert attempts["required"] == ["item_id"] and {"evaluation", "text", "seed"} <= set(attempts["properties"])


def test_every_written_run_fits_the_published_schema(tmp_path):
    import jsonschema

    out = tmp_path / "run"
    biaslab("run", "jobs-lum", "-m", "scripted/random-gender", "--limit", "5", "--out", out, "-q", cache=tmp_path / "c")
    jsonschema.validate(json.loads((out / "results.json").read_text()), json_schema("results"))
    for line in (out / "attempts.jsonl").read_text().splitlines():
        jsonschema.validate(json.loads(line), json_schema("attempts"))
