"""The Llama engine's decoder and shared math against transformers, on a tiny random model."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")


def test_supports_plain_llama_only(tiny_llama):
    from biaslab.models.local.llama.engine import supports

    assert supports(tiny_llama)
    assert not supports(torch.nn.Linear(2, 2))  # no config


def test_forward_matches_transformers_and_keeps_the_model_working(tiny_llama):
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache

    a, b = [1, 5, 9, 22, 13, 40, 7, 7, 81, 3, 60], [1, 5, 9, 30]
    with torch.inference_mode():
        before = tiny_llama(torch.tensor([a])).logits[0]
        engine = LlamaEngine(tiny_llama)  # fuses q/k/v and gate/up: the model's Linears become views
        after = tiny_llama(torch.tensor([a])).logits[0]
        ref_b = tiny_llama(torch.tensor([b])).logits[0, -1]
        cache = KVCache(engine, 8, 32, torch.float32)
        got = engine.forward(torch.tensor([a]), torch.arange(len(a))[None], torch.tensor([3]), cache, len(a))
        # two rows of different lengths in one call: padded, each read at its own last token
        tokens = torch.tensor([a, b + [0] * (len(a) - len(b))])
        pos = torch.arange(len(a))[None].expand(2, len(a))
        both = engine.forward(
            tokens,
            pos,
            torch.tensor([0, 1]),
            KVCache(engine, 2, 16, torch.float32),
            len(a),
            last=torch.tensor([len(a) - 1, len(b) - 1]),
        )
    assert torch.allclose(before, after, atol=1e-5)
    assert torch.allclose(got[0], before[-1], atol=1e-4)
    assert torch.allclose(both[0], before[-1], atol=1e-4) and torch.allclose(both[1], ref_b, atol=1e-4)
    assert cache.k[0][3, :, : len(a)].any() and not cache.k[0][2].any()  # keys went to slot 3 only


def test_a_second_engine_on_the_same_model_reuses_the_fused_weights(tiny_llama):
    from biaslab.models.local.llama.engine import LlamaEngine

    first, second = LlamaEngine(tiny_llama), LlamaEngine(tiny_llama)
    for a, b in zip(first.plain_layers, second.plain_layers):  # the same memory, not a second copy
        assert a.wqkv.data_ptr() == b.wqkv.data_ptr() and a.wgu.data_ptr() == b.wgu.data_ptr()
        assert a.wqkv.shape == b.wqkv.shape and a.wgu.shape == b.wgu.shape
    layer = tiny_llama.model.layers[1]
    n_q, n_k = layer.self_attn.q_proj.weight.shape[0], layer.self_attn.k_proj.weight.shape[0]
    assert torch.equal(second.plain_layers[1].wqkv[n_q : n_q + n_k], layer.self_attn.k_proj.weight)
    assert torch.equal(second.plain_layers[1].wgu[layer.mlp.gate_proj.weight.shape[0] :], layer.mlp.up_proj.weight)


def test_the_lm_head_gives_the_same_logits_through_onednn_or_numpy(tiny_llama):
    from biaslab.models.local.llama.engine import LlamaEngine

    engine = LlamaEngine(tiny_llama)
    h = torch.randn(9, 64, generator=torch.Generator().manual_seed(2))
    want = h @ tiny_llama.lm_head.weight.T
    with torch.inference_mode():
        fast = engine.head(h)
        engine._head_linear = None  # a torch without oneDNN's linear: numpy's BLAS
        plain = engine.head(h)
    assert torch.allclose(fast, want, atol=1e-5) and torch.allclose(plain, want, atol=1e-5)


def test_shared_math(tiny_llama):
    from biaslab.models.local.llama.engine import LlamaEngine

    engine = LlamaEngine(tiny_llama)
    h = torch.randn(5, 64, generator=torch.Generator().manual_seed(1))
    assert torch.allclose(engine.head(h), F.linear(h, tiny_llama.lm_head.weight), atol=1e-5)
    w = torch.rand(64) + 0.5
    manual = w * h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + engine.eps)
    assert torch.allclose(engine.rms(h, w), manual, atol=1e-6)
    cos, sin = engine.rope(torch.arange(4)[None])
    assert cos.shape == sin.shape == (1, 4, engine.head_dim)
    x = torch.randn(1, 4, 2, engine.head_dim)
    rotated = engine.apply_rope(x, cos, sin)
    assert torch.allclose(rotated[:, 0], x[:, 0])  # position 0: no rotation
    assert torch.allclose(rotated.norm(dim=-1), x.norm(dim=-1), atol=1e-5)  # a rotation keeps lengths
    engine.record(a=1.0, b=2.0)
    engine.record(a=0.5)
    assert engine.stats["a"] == 1.5 and engine.stats["b"] == 2.0
