"""A tiny randomly initialised Llama model (no download), for the engine's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def tiny_llama():
    """A 2-layer LlamaForCausalLM with grouped-query attention and peaked logits (clear argmaxes)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=96,
        initializer_range=0.3,
        tie_word_embeddings=False,
    )
    return transformers.LlamaForCausalLM(cfg).eval().requires_grad_(False)


@pytest.fixture(scope="module")
def tiny_gemma3():
    """A 4-layer Gemma3ForCausalLM: sliding (window 5) and full layers with their own RoPE (the full ones
    linearly scaled), grouped-query attention, a final logit softcap; random norm weights (they start at
    zero, which would hide the 1 + weight scale)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.Gemma3TextConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=128,
        sliding_window=5,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        query_pre_attn_scalar=24,
        final_logit_softcapping=7.0,
        initializer_range=0.3,
        rope_parameters={
            "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 50000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
        },
    )
    model = transformers.Gemma3ForCausalLM(cfg).eval().requires_grad_(False)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(torch.randn_like(p) * 0.5)
    return model


def _randomize(model, *, names=("norm",)):
    """Random values for the parameters whose name has one of ``names`` (norm weights start at one and biases at
    zero, which would hide them)."""
    import torch

    with torch.no_grad():
        for name, p in model.named_parameters():
            if any(n in name for n in names):
                p.copy_(torch.randn_like(p) * 0.5 + (1.0 if "norm" in name else 0.0))
    return model


@pytest.fixture(scope="module")
def tiny_qwen2():
    """A 3-layer Qwen2ForCausalLM with q/k/v biases, tied embeddings and, with ``use_sliding_window``, layers 1-2
    sliding (window 5; ``max_window_layers=1``)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(1)
    cfg = transformers.Qwen2Config(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        initializer_range=0.3,
        tie_word_embeddings=True,
        use_sliding_window=True,
        sliding_window=5,
        max_window_layers=1,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    )
    return _randomize(transformers.Qwen2ForCausalLM(cfg).eval().requires_grad_(False), names=("norm", "bias"))


@pytest.fixture(scope="module")
def tiny_qwen3():
    """A 2-layer Qwen3ForCausalLM: q/k norms, a head_dim (24) other than hidden_size / heads (16), untied."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(2)
    cfg = transformers.Qwen3Config(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=24,
        max_position_embeddings=128,
        initializer_range=0.3,
        tie_word_embeddings=False,
    )
    return _randomize(transformers.Qwen3ForCausalLM(cfg).eval().requires_grad_(False))


@pytest.fixture(scope="module")
def tiny_mistral():
    """A 2-layer MistralForCausalLM: every layer sliding (window 5), linearly scaled RoPE, untied."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(3)
    cfg = transformers.MistralConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        initializer_range=0.3,
        tie_word_embeddings=False,
        sliding_window=5,
        rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 50000.0},
    )
    return _randomize(transformers.MistralForCausalLM(cfg).eval().requires_grad_(False))


@pytest.fixture(scope="module")
def tiny_phi3():
    """A 2-layer Phi3ForCausalLM: q/k/v and gate/up stored fused, every layer sliding (window 5), untied."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(4)
    cfg = transformers.Phi3Config(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        original_max_position_embeddings=128,
        initializer_range=0.3,
        tie_word_embeddings=False,
        sliding_window=5,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 5000.0},
    )
    return _randomize(transformers.Phi3ForCausalLM(cfg).eval().requires_grad_(False))
