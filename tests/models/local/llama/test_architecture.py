"""What the engine reads from a config: Llama and Gemma 3 (text) architectures, and the configs it leaves to
transformers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytestmark = [pytest.mark.real_model]

pytest.importorskip("torch")


def _gemma3_json(**over):
    """config.json of a Gemma 3 text checkpoint as transformers 5 writes it (the 270M model's values)."""
    cfg = dict(
        model_type="gemma3_text",
        num_hidden_layers=6,
        hidden_size=640,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=256,
        hidden_activation="gelu_pytorch_tanh",
        query_pre_attn_scalar=256,
        sliding_window=512,
        attn_logit_softcapping=None,
        final_logit_softcapping=None,
        use_bidirectional_attention=False,
        attention_bias=False,
        layer_types=["sliding_attention"] * 5 + ["full_attention"],
        rope_parameters={
            "full_attention": {"rope_theta": 1000000.0, "rope_type": "default"},
            "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"},
        },
    )
    cfg.update(over)
    return SimpleNamespace(**cfg)


def test_llama_is_one_rope_full_attention_and_plain_norms(tiny_llama):
    from biaslab.models.local.llama.architecture import Rope, describe

    arch = describe(tiny_llama.config)
    assert arch is not None and arch.name == "llama"
    assert arch.ropes == (Rope(10000.0),) and arch.windows == (None,) and len(arch.layer_rope) == 2
    assert not (arch.gemma_norm or arch.qk_norm or arch.sandwich_norms)
    assert arch.embed_scale is None and arch.attn_scale is None and arch.final_softcap is None
    assert "self_attn.q_norm" not in arch.layer_weights and "post_attention_layernorm" in arch.layer_weights


def test_gemma3_from_transformers_config(tiny_gemma3):
    from biaslab.models.local.llama.architecture import Rope, describe

    arch = describe(tiny_gemma3.config)
    assert arch is not None and arch.name == "gemma3_text"
    assert arch.layer_window == (5, None, 5, None)
    assert arch.layer_rope == (Rope(100.0), Rope(50000.0, 2.0)) * 2 and arch.ropes == (Rope(100.0), Rope(50000.0, 2.0))
    assert arch.embed_scale == 8.0 and arch.attn_scale == 24**-0.5 and arch.final_softcap == 7.0
    assert arch.gemma_norm and arch.qk_norm and arch.sandwich_norms
    assert {"self_attn.q_norm", "self_attn.k_norm", "pre_feedforward_layernorm", "post_feedforward_layernorm"} <= set(
        arch.layer_weights
    )


def test_gemma3_from_config_json_new_and_old_rope_formats():
    from biaslab.models.local.llama.architecture import Rope, describe

    arch = describe(_gemma3_json())
    assert arch is not None
    assert arch.layer_rope == (Rope(10000.0),) * 5 + (Rope(1000000.0),)
    assert arch.layer_window == (512,) * 5 + (None,) and arch.attn_scale == 1 / 16
    # transformers 4's config.json: rope_theta (full layers, with rope_scaling), rope_local_base_freq (sliding),
    # the layer pattern as a number
    old = _gemma3_json(
        rope_parameters=None,
        layer_types=None,
        sliding_window_pattern=3,
        rope_theta=500000.0,
        rope_local_base_freq=20000.0,
        rope_scaling={"rope_type": "linear", "factor": 8.0},
    )
    arch = describe(old)
    assert arch is not None
    assert arch.layer_window == (512, 512, None) * 2
    assert arch.layer_rope == (Rope(20000.0), Rope(20000.0), Rope(500000.0, 8.0)) * 2


@pytest.mark.parametrize(
    "change",
    [
        dict(attn_logit_softcapping=50.0),  # transformers' Gemma 3 ignores it: not guessed
        dict(use_bidirectional_attention=True),
        dict(hidden_activation="gelu"),
        dict(attention_bias=True),
        dict(model_type="gemma2"),
        dict(layer_types=["sliding_attention", "chunked_attention"] * 3),
        dict(
            rope_parameters={
                "full_attention": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 1e6},
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            }
        ),
        dict(sliding_window=0),
    ],
)
def test_configs_the_engine_leaves_to_transformers(change):
    from biaslab.models.local.llama.architecture import describe, supports

    assert describe(_gemma3_json()) is not None
    assert describe(_gemma3_json(**change)) is None
    assert not supports(SimpleNamespace(config=_gemma3_json(**change)))


def test_llama_with_scaled_rope_or_other_activation_is_not_supported(tiny_llama):
    from biaslab.models.local.llama.architecture import Rope, describe

    cfg = tiny_llama.config.to_dict()
    assert describe(SimpleNamespace(**cfg)) is not None
    assert describe(SimpleNamespace(**{**cfg, "rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5}})) is None
    # linear scaling: transformers' same inverse frequencies divided by the factor (checked on Mistral's model)
    linear = describe(
        SimpleNamespace(**{**cfg, "rope_parameters": {"rope_type": "linear", "factor": 4.0, "rope_theta": 5e5}})
    )
    assert linear is not None and linear.ropes == (Rope(5e5, 4.0),)
    assert describe(SimpleNamespace(**{**cfg, "hidden_act": "gelu"})) is None
    assert describe(None) is None


def _qwen2_json(**over):
    """config.json of a Qwen2.5 checkpoint as transformers 4 wrote it (0.5B's values): ``sliding_window`` set, but
    ``use_sliding_window`` off; no ``layer_types``."""
    cfg = dict(
        model_type="qwen2",
        num_hidden_layers=24,
        hidden_size=896,
        num_attention_heads=14,
        num_key_value_heads=2,
        hidden_act="silu",
        rope_theta=1000000.0,
        rope_scaling=None,
        sliding_window=32768,
        use_sliding_window=False,
        max_window_layers=21,
        tie_word_embeddings=True,
    )
    cfg.update(over)
    return SimpleNamespace(**cfg)


def test_qwen2_windows_as_its_config_class_derives_them():
    from biaslab.models.local.llama.architecture import Rope, describe

    arch = describe(_qwen2_json())
    assert arch is not None and arch.name == "qwen2" and arch.qkv_bias and not arch.qk_norm
    assert arch.layer_window == (None,) * 24 and arch.ropes == (Rope(1000000.0),)
    arch = describe(_qwen2_json(use_sliding_window=True, sliding_window=4096))  # layers 21-23 slide
    assert arch is not None and arch.layer_window == (None,) * 21 + (4096,) * 3
    arch = describe(
        _qwen2_json(
            use_sliding_window=True,
            sliding_window=8,
            num_hidden_layers=3,
            layer_types=["sliding_attention", "full_attention", "sliding_attention"],
        )
    )
    assert arch is not None and arch.layer_window == (8, None, 8)
    # transformers 5's config.json: rope_parameters, layer_types written out, sliding_window cleared
    arch = describe(
        _qwen2_json(
            rope_theta=None,
            rope_scaling=None,
            sliding_window=None,
            layer_types=["full_attention"] * 24,
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
        )
    )
    assert arch is not None and arch.layer_window == (None,) * 24 and arch.ropes == (Rope(1000000.0),)


def test_qwen3_and_mistral_from_config_json():
    from biaslab.models.local.llama.architecture import Rope, describe

    qwen3 = dict(
        model_type="qwen3",
        num_hidden_layers=28,
        hidden_size=1024,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        hidden_act="silu",
        attention_bias=False,
        rope_theta=1000000.0,
        rope_scaling=None,
        sliding_window=None,
        use_sliding_window=False,
        max_window_layers=28,
    )
    arch = describe(SimpleNamespace(**qwen3))
    assert arch is not None and arch.qk_norm and not arch.qkv_bias and arch.layer_window == (None,) * 28
    # without head_dim transformers would take Qwen3Config's 128, not hidden_size / heads: not guessed
    assert describe(SimpleNamespace(**{k: v for k, v in qwen3.items() if k != "head_dim"})) is None
    mistral = dict(
        model_type="mistral",
        num_hidden_layers=4,
        hidden_size=4096,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        hidden_act="silu",
        rope_theta=1000000.0,
        sliding_window=None,
    )
    arch = describe(SimpleNamespace(**mistral))
    assert arch is not None and arch.layer_window == (None,) * 4 and arch.ropes == (Rope(1000000.0),)
    # a window on every layer; transformers' Mistral ignores layer_types
    arch = describe(SimpleNamespace(**{**mistral, "sliding_window": 4096, "layer_types": ["full_attention"] * 4}))
    assert arch is not None and arch.layer_window == (4096,) * 4 and not arch.qk_norm and not arch.qkv_bias


@pytest.mark.parametrize(
    "change",
    [
        dict(rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}),
        dict(rope_scaling={"type": "dynamic", "factor": 2.0}),
        dict(rope_parameters={"rope_type": "default", "rope_theta": 1e6, "partial_rotary_factor": 0.5}),
        dict(hidden_act="gelu"),
        dict(attention_bias=True),
        dict(mlp_bias=True),
        dict(is_causal=False),
        dict(layer_types=["sliding_attention"] * 24),  # sliding layers, but no window (use_sliding_window is off)
        dict(use_sliding_window=True, sliding_window=0),
        dict(layer_types=["full_attention"] * 23 + ["chunked_attention"]),
        dict(model_type="qwen2_moe"),
    ],
)
def test_qwen2_configs_the_engine_leaves_to_transformers(change):
    from biaslab.models.local.llama.architecture import describe

    assert describe(_qwen2_json()) is not None
    assert describe(_qwen2_json(**change)) is None
