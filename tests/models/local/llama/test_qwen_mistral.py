"""The engine on tiny random Qwen2, Qwen3, Mistral and Phi-3 models against transformers' own classes: the decoder
over the KV cache, packed scoring and greedy generation (past the sliding windows); each architecture's own step
shown to matter; the light checkpoint without transformers."""

from __future__ import annotations

import dataclasses
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

MODELS = ["tiny_qwen2", "tiny_qwen3", "tiny_mistral", "tiny_phi3"]
A = [1, 5, 9, 22, 13, 40, 7, 7, 81, 3, 60, 2, 33, 4]  # 14 tokens: well past the window of 5
B = [1, 5, 9, 30, 64, 11]


@pytest.fixture(scope="module", params=MODELS)
def pair(request):
    """(transformers model, engine on it)."""
    from biaslab.models.local.llama.engine import LlamaEngine

    model = request.getfixturevalue(request.param)
    return model, LlamaEngine(model)


def _last_logits(engine, ids=A):
    from biaslab.models.local.llama.kv_cache import KVCache

    with torch.inference_mode():
        return engine.forward(
            torch.tensor([ids]),
            torch.arange(len(ids))[None],
            torch.tensor([0]),
            KVCache(engine, 8, 16, torch.float32),
            len(ids),
        )[0]


def test_architectures_read_from_the_models(tiny_qwen2, tiny_qwen3, tiny_mistral):
    from biaslab.models.local.llama.architecture import Rope, describe

    qwen2, qwen3, mistral = (describe(m.config) for m in (tiny_qwen2, tiny_qwen3, tiny_mistral))
    assert qwen2 is not None and qwen3 is not None and mistral is not None
    assert qwen2.qkv_bias and not qwen2.qk_norm and qwen2.layer_window == (None, 5, 5)
    assert qwen2.layer_biases == ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")
    assert qwen3.qk_norm and not qwen3.qkv_bias and qwen3.layer_window == (None, None) and not qwen3.layer_biases
    assert {"self_attn.q_norm", "self_attn.k_norm"} <= set(qwen3.layer_weights)
    assert mistral.layer_window == (5, 5) and mistral.ropes == (Rope(50000.0, 2.0),)
    for arch in (qwen2, qwen3, mistral):
        assert not (arch.gemma_norm or arch.sandwich_norms) and arch.embed_scale is None and arch.attn_scale is None
        assert not arch.fused_projections


def test_phi3_is_read_as_llama_with_fused_weights_and_a_window(tiny_phi3):
    from biaslab.models.local.llama.architecture import Rope, describe

    arch = describe(tiny_phi3.config)
    assert arch is not None and arch.fused_projections and arch.layer_window == (5, 5)
    assert arch.ropes == (Rope(5000.0),) and not (arch.qkv_bias or arch.qk_norm or arch.gemma_norm)
    assert {"self_attn.qkv_proj", "mlp.gate_up_proj"} <= set(arch.layer_weights)
    long_context = tiny_phi3.config.to_dict()  # the 128k models' RoPE: left to transformers
    long_context["rope_parameters"] = {
        "rope_type": "longrope",
        "rope_theta": 5000.0,
        "short_factor": [1.0] * 8,
        "long_factor": [2.0] * 8,
    }
    assert describe(type("Cfg", (), long_context)) is None


def test_forward_matches_transformers_past_the_window(pair):
    from biaslab.models.local.llama.kv_cache import KVCache

    model, engine = pair
    ref = hf_logits(model, A)
    with torch.inference_mode():
        cache = KVCache(engine, 8, 32, torch.float32)
        for n in range(2, len(A) + 1):  # each prefix in one pass (prefill)
            got = engine.forward(torch.tensor([A[:n]]), torch.arange(n)[None], torch.tensor([3]), cache, n)
            assert torch.allclose(got[0], ref[n - 1], atol=1e-4), n
        cache = KVCache(engine, 8, 32, torch.float32)  # token by token over the cache (decoding)
        for p, t in enumerate(A):
            got = engine.forward(torch.tensor([[t]]), torch.tensor([[p]]), torch.tensor([0]), cache, p + 1)
            assert torch.allclose(got[0], ref[p], atol=1e-4), p
        tokens = torch.tensor([A, B + [0] * (len(A) - len(B))])  # two rows of different lengths in one call
        both = engine.forward(
            tokens,
            torch.arange(len(A))[None].expand(2, len(A)),
            torch.tensor([0, 1]),
            KVCache(engine, 2, 16, torch.float32),
            len(A),
            last=torch.tensor([len(A) - 1, len(B) - 1]),
        )
    assert torch.allclose(both[0], ref[-1], atol=1e-4)
    assert torch.allclose(both[1], hf_logits(model, B)[-1], atol=1e-4)


def _variant(engine, *, arch=None, layers=None, rope=None):
    """A copy of ``engine`` with another architecture, other layer weights or another RoPE."""
    from biaslab.models.local.llama.engine import LlamaEngine

    e = object.__new__(LlamaEngine)
    e.__dict__.update(engine.__dict__)
    if arch is not None:
        e.arch = dataclasses.replace(engine.arch, **arch)
    if layers is not None:
        e.layers = [dataclasses.replace(layer, **layers) for layer in engine.layers]
    if rope is not None:
        e.inv_freqs = [rope.inv_freq(engine.head_dim)]
    return e


def test_each_architecture_specific_step_matters(tiny_qwen2, tiny_qwen3, tiny_mistral, tiny_phi3):
    """Each step, left out, changes the logits well beyond the tolerance above (so the comparisons with
    transformers check every one): Qwen2's biases and sliding layers, Qwen3's q/k norms, Mistral's window and
    scaled RoPE, Phi-3's window."""
    from biaslab.models.local.llama.architecture import Rope
    from biaslab.models.local.llama.engine import LlamaEngine

    cases = {
        "qwen2 biases": (tiny_qwen2, dict(layers=dict(bqkv=None))),
        "qwen2 window": (tiny_qwen2, dict(arch=dict(layer_window=(None,) * 3))),
        "qwen3 q/k norms": (tiny_qwen3, dict(layers=dict(q_norm=None, k_norm=None))),
        "mistral window": (tiny_mistral, dict(arch=dict(layer_window=(None,) * 2))),
        "mistral rope scaling": (tiny_mistral, dict(rope=Rope(50000.0))),
        "phi3 window": (tiny_phi3, dict(arch=dict(layer_window=(None,) * 2))),
    }
    for what, (model, change) in cases.items():
        engine = LlamaEngine(model)
        ref = hf_logits(model, A)[-1]
        assert torch.allclose(_last_logits(engine), ref, atol=1e-4), what
        assert (_last_logits(_variant(engine, **change)) - ref).abs().max() > 1e-2, what


def test_packed_scoring_matches_transformers(pair):
    model, engine = pair
    texts = [A, A[:9] + [50, 51, 52, 53, 54], B, B[:4], [3], A[:12], list(range(1, 25))]  # shared prefixes, long
    assert_packed_scoring_matches(model, engine, texts)


def test_greedy_generation_is_the_model_argmax(pair):
    model, engine = pair
    assert_greedy_is_the_model_argmax(model, engine, [1, 12, 40, 7, 7, 19, 3, 88, 51, 2, 64, 30], 6)


def test_reduced_precision_keeps_the_biases_and_norms(tiny_qwen2, tiny_qwen3):
    from biaslab.models.local.llama.engine import LlamaEngine

    for model, without in ((tiny_qwen2, dict(bqkv=None)), (tiny_qwen3, dict(q_norm=None, k_norm=None))):
        e = LlamaEngine(model, matmul_dtype=torch.bfloat16)
        layer = e.layers[0]
        assert layer.wqkv.dtype == torch.bfloat16
        assert all(t.dtype == torch.float32 for t in (layer.bqkv, layer.q_norm) if t is not None)
        ref = hf_logits(model, A)[-1]  # bfloat16 products move these random logits (up to ~10) by ~0.1-0.4
        assert (_last_logits(e) - ref).abs().max() < 1.0 < (_last_logits(_variant(e, layers=without)) - ref).abs().max()


def test_light_checkpoints_run_the_same_bits_without_transformers(
    tiny_qwen2, tiny_qwen3, tiny_mistral, tiny_phi3, tmp_path
):
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.light import LightCausalLM, light_supported
    from biaslab.models.local.loading import _LazyAuto

    dirs, want = [], []
    for name, model in (("qwen2", tiny_qwen2), ("qwen3", tiny_qwen3), ("mistral", tiny_mistral), ("phi3", tiny_phi3)):
        d = tmp_path / name
        model.save_pretrained(d)
        assert light_supported(d), name
        light = LightCausalLM(d, torch.float32, _LazyAuto("AutoModelForCausalLM"))
        assert type(light.model.layers[1].self_attn.o_proj.weight) is torch.Tensor  # plain tensors, no Module
        got = _last_logits(LlamaEngine(light))
        assert torch.equal(got, _last_logits(LlamaEngine(model))), name
        dirs.append(str(d))
        want.append(got)
    code = (
        "import sys, json, torch; from pathlib import Path; "
        "from biaslab.models.local.llama.light import LightCausalLM; "
        "from biaslab.models.local.llama.engine import LlamaEngine; "
        "from biaslab.models.local.llama.kv_cache import KVCache; "
        f"torch.set_num_threads({torch.get_num_threads()}); "  # the same reduction order as this process's
        f"ids = {A}; n = len(ids); outs = []\n"
        "for d in sys.argv[1:]:\n"
        "    e = LlamaEngine(LightCausalLM(Path(d), torch.float32, None))\n"
        "    outs.append(e.forward(torch.tensor([ids]), torch.arange(n)[None], torch.tensor([0]), "
        "KVCache(e, 8, 16, torch.float32), n)[0].tolist())\n"
        "print(json.dumps([outs, sorted(k for k in sys.modules if k.split('.')[0] == 'transformers')]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, *dirs], capture_output=True, text=True, check=True, env=os.environ
    )
    outs, imported = json.loads(run.stdout.strip().splitlines()[-1])
    assert imported == []
    for got, w in zip(outs, want):
        assert torch.equal(torch.tensor(got), w)
