"""A tiny randomly initialised Llama model (no download), for the engine's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def tiny_llama():
    """A 2-layer LlamaForCausalLM with grouped-query attention and peaked logits (clear argmaxes)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=96,
                                   initializer_range=0.3, tie_word_embeddings=False)
    return transformers.LlamaForCausalLM(cfg).eval().requires_grad_(False)
