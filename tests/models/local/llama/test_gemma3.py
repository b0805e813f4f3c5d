"""The engine on a tiny random Gemma 3 model against transformers' Gemma3ForCausalLM: the decoder over the KV cache,
packed scoring and greedy generation, all past the sliding window; the light checkpoint without transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.models.local.llama.transformers_checks import (
    assert_greedy_is_the_model_argmax,
    assert_packed_scoring_matches,
    hf_logits,
)

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")

A = [1, 5, 9, 22, 13, 40, 7, 7, 81, 3, 60, 2, 33, 4]  # 14 tokens: well past the window of 5
B = [1, 5, 9, 30, 64, 11]


@pytest.fixture(scope="module")
def engine(tiny_gemma3):
    from biaslab.models.local.llama.engine import LlamaEngine

    return LlamaEngine(tiny_gemma3)


def test_forward_matches_transformers_past_the_window(tiny_gemma3, engine):
    from biaslab.models.local.llama.kv_cache import KVCache

    ref = hf_logits(tiny_gemma3, A)
    with torch.inference_mode():
        cache = KVCache(engine, 8, 32, torch.float32)
        for n in range(2, len(A) + 1):  # each prefix in one pass (prefill)
            got = engine.forward(torch.tensor([A[:n]]), torch.arange(n)[None], torch.tensor([3]), cache, n)
            assert torch.allclose(got[0], ref[n - 1], atol=1e-4), n
        # token by token over the cache (decoding): position p attends to the cached keys at p-4..p on sliding layers
        cache = KVCache(engine, 8, 32, torch.float32)
        for p, t in enumerate(A):
            got = engine.forward(torch.tensor([[t]]), torch.tensor([[p]]), torch.tensor([0]), cache, p + 1)
            assert torch.allclose(got[0], ref[p], atol=1e-4), p
        # two rows of different lengths in one call, each read at its own last token
        tokens = torch.tensor([A, B + [0] * (len(A) - len(B))])
        both = engine.forward(
            tokens,
            torch.arange(len(A))[None].expand(2, len(A)),
            torch.tensor([0, 1]),
            KVCache(engine, 2, 16, torch.float32),
            len(A),
            last=torch.tensor([len(A) - 1, len(B) - 1]),
        )
    assert torch.allclose(both[0], ref[-1], atol=1e-4)
    assert torch.allclose(both[1], hf_logits(tiny_gemma3, B)[-1], atol=1e-4)
    assert float(ref.abs().max()) <= 7.0  # the final softcap is in force (and reproduced)


def test_the_window_and_the_gemma_details_matter(tiny_gemma3, engine):
    """Each Gemma-specific step, left out, changes the numbers well beyond the tolerance above (so the
    comparison with transformers checks every one)."""
    import dataclasses

    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache

    ref = hf_logits(tiny_gemma3, A)[-1]
    arch = engine.arch
    variants = [dict(layer_window=(None,) * 4), dict(embed_scale=None), dict(attn_scale=None), dict(final_softcap=None)]
    for change in variants:
        e = object.__new__(LlamaEngine)
        e.__dict__.update(engine.__dict__)
        e.arch = dataclasses.replace(arch, **change)
        e.embed_scale = None if e.arch.embed_scale is None else engine.embed_scale
        with torch.inference_mode():
            got = e.forward(
                torch.tensor([A]),
                torch.arange(len(A))[None],
                torch.tensor([0]),
                KVCache(e, 8, 16, torch.float32),
                len(A),
            )
        assert (got[0] - ref).abs().max() > 1e-2, change


def test_packed_scoring_matches_transformers(tiny_gemma3, engine):
    texts = [A, A[:9] + [50, 51, 52, 53, 54], B, B[:4], [3], A[:12], list(range(1, 25))]  # shared prefixes, long
    assert_packed_scoring_matches(tiny_gemma3, engine, texts)


def test_greedy_generation_is_the_model_argmax(tiny_gemma3, engine):
    prefix = [1, 12, 40, 7, 7, 19, 3, 88, 51, 2, 64, 30, 30, 9, 71, 5, 44, 23]  # shared by most: prefilled once
    assert_greedy_is_the_model_argmax(tiny_gemma3, engine, prefix, 9)


def test_reduced_precision_keeps_the_gemma_norms(tiny_gemma3):
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache

    e = LlamaEngine(tiny_gemma3, matmul_dtype=torch.bfloat16)
    layer = e.layers[0]
    assert layer.wqkv.dtype == torch.bfloat16 and layer.q_norm is not None and layer.q_norm.dtype == torch.float32
    assert layer.post_mlp is not None
    with torch.inference_mode():
        got = e.forward(
            torch.tensor([A]), torch.arange(len(A))[None], torch.tensor([0]), KVCache(e, 8, 16, torch.float32), len(A)
        )
    assert torch.allclose(got[0], hf_logits(tiny_gemma3, A)[-1], atol=0.3)


def test_light_checkpoint_runs_the_same_bits_without_transformers(tiny_gemma3, tmp_path):
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache
    from biaslab.models.local.llama.light import LightCausalLM, light_supported
    from biaslab.models.local.loading import _LazyAuto

    tiny_gemma3.save_pretrained(tmp_path)
    assert light_supported(tmp_path)
    light = LightCausalLM(tmp_path, torch.float32, _LazyAuto("AutoModelForCausalLM"))
    assert type(light.model.layers[1].self_attn.k_norm.weight) is torch.Tensor
    ids, pos = torch.tensor([A]), torch.arange(len(A))[None]
    with torch.inference_mode():
        got = [
            e.forward(ids, pos, torch.tensor([0]), KVCache(e, 8, 16, torch.float32), len(A))
            for m in (tiny_gemma3, light)
            for e in [LlamaEngine(m)]
        ]
        assert torch.equal(light(ids).logits, hf_logits(tiny_gemma3, A)[None])  # transformers' model, on demand
    assert torch.equal(got[0], got[1])
    code = (
        "import sys, json, torch; from pathlib import Path; "
        "from biaslab.models.local.llama.light import LightCausalLM; "
        "from biaslab.models.local.llama.engine import LlamaEngine; "
        "from biaslab.models.local.llama.kv_cache import KVCache; "
        "m = LightCausalLM(Path(sys.argv[1]), torch.float32, None); e = LlamaEngine(m); "
        f"ids = {A}; n = len(ids); "
        "out = e.forward(torch.tensor([ids]), torch.arange(n)[None], torch.tensor([0]), KVCache(e, 8, 16, "
        "torch.float32), n); "
        "print(json.dumps([out[0].tolist(), sorted(k for k in sys.modules if k.split('.')[0] == 'transformers')]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True, env=os.environ
    )
    logits, imported = json.loads(run.stdout.strip().splitlines()[-1])
    assert imported == []
    assert torch.equal(torch.tensor(logits), got[0][0])
