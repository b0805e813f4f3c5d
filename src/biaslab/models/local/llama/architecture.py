"""What differs between the decoder architectures the engine runs: Llama, Mistral, Qwen2, Qwen3, Phi-3 and
Gemma 3 (text).

The engine (:mod:`.engine`), its generation loop (:mod:`.batching`) and its scoring loop
(:mod:`.scoring`) share one decoder layer; what varies from one architecture to the other is
described here, from the checkpoint's config, by an :class:`Architecture`:

=================  ==================  =====================  ==========================  =============================
                   Llama (``llama``)   Mistral (``mistral``)  Qwen2 / Qwen3               Gemma 3 (``gemma3_text``)
=================  ==================  =====================  ==========================  =============================
embeddings         as stored           as Llama               as Llama                    times sqrt(hidden_size),
                                                                                          in the model dtype
RMSNorm scale      ``weight`` (in the  as Llama               as Llama                    ``1 + weight``, applied in
                   model dtype)                                                           float32
q/k/v projections  no bias             no bias                Qwen2: with biases          no bias
                                                              (fused as the weights)
q/k norm           none                none                   Qwen3: RMSNorm of each      RMSNorm of each head's
                                                              head's queries and keys     queries and keys
norms per layer    before attention,   as Llama               as Llama                    also after attention and
                   before the MLP                                                         after the MLP
MLP activation     SiLU (gated)        SiLU (gated)           SiLU (gated)                GELU, tanh approx. (gated)
query scaling      head_dim ** -0.5    head_dim ** -0.5       head_dim ** -0.5            query_pre_attn_scalar ** -0.5
RoPE               one theta (linear   as Llama               as Llama                    per layer type (sliding /
                   scaling allowed)                                                       full attention)
attention          causal              causal; every layer    causal; with                causal; sliding layers see
                                       sliding if             ``use_sliding_window``,     the last ``sliding_window``
                                       ``sliding_window``     the layers from             positions only
                                       is set                 ``max_window_layers`` on
                                                              (or ``layer_types``) slide
final logits       as computed         as computed            as computed                 tanh-softcapped if the
                                                                                          config says so
=================  ==================  =====================  ==========================  =============================

Phi-3 (``phi3``) is Llama with its q/k/v and gate/up projections stored fused (``qkv_proj``,
``gate_up_proj``, in the order the engine fuses them) and Mistral's window on every layer if
``sliding_window`` is set; its long-context RoPE (``longrope``, the 128k models) is left to transformers.

A sliding layer's query at position p sees the keys at positions p - window < k <= p, as transformers'
sliding-window masks. :func:`describe` returns None for a config the engine cannot run exactly as
transformers does (another rope type, biases other than Qwen2's, bidirectional attention, ...): such a
model keeps the transformers path. It reads transformers config objects and the light loader's plain
config.json alike (for the latter it applies what transformers' config classes derive, e.g. Qwen2's
``use_sliding_window``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F

MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma3_text", "phi3")

_FULL, _SLIDING = "full_attention", "sliding_attention"
_GEMMA3_THETA = {_FULL: 1_000_000.0, _SLIDING: 10_000.0}  # transformers' defaults (Gemma3TextConfig)


@dataclass(frozen=True)
class Rope:
    """Rotary embedding of one kind of layer: ``theta`` and a linear scaling ``factor`` of the positions."""

    theta: float
    factor: float = 1.0

    def inv_freq(self, head_dim: int, device: torch.device | None = None) -> torch.Tensor:
        inv = 1.0 / (self.theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim))
        return inv / self.factor if self.factor != 1.0 else inv


@dataclass(frozen=True)
class Architecture:
    """How a decoder computes (see the module's table); one entry per layer in ``layer_rope`` and ``layer_window``."""

    name: str
    activation: Callable[[torch.Tensor], torch.Tensor]  # of the gate, in the gated MLP
    gemma_norm: bool  # RMSNorm scale 1 + weight applied in float32 (else: weight, in the model dtype)
    qk_norm: bool  # RMSNorm of each head's queries and keys, before RoPE
    sandwich_norms: bool  # also a norm of the attention output and of the MLP output
    embed_scale: float | None  # embeddings multiplied by this (in the model dtype)
    attn_scale: float | None  # scaling of q.k (None: head_dim ** -0.5, SDPA's default)
    final_softcap: float | None  # logits -> tanh(logits / c) * c
    layer_rope: tuple[Rope, ...]
    layer_window: tuple[int | None, ...]  # a sliding layer's query at p sees keys at p - window < q <= p
    qkv_bias: bool = False  # the q/k/v projections have biases (Qwen2)
    fused_projections: bool = False  # stored as one qkv_proj and one gate_up_proj (Phi-3)

    @property
    def layer_weights(self) -> tuple[str, ...]:
        """The weights of each decoder layer (names within ``model.layers.<i>.``, without ``.weight``)."""
        if self.fused_projections:
            return (
                "input_layernorm",
                "self_attn.qkv_proj",
                "self_attn.o_proj",
                "post_attention_layernorm",
                "mlp.gate_up_proj",
                "mlp.down_proj",
            )
        names: tuple[str, ...] = (
            "input_layernorm",
            "self_attn.q_proj",
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.o_proj",
            "post_attention_layernorm",
            "mlp.gate_proj",
            "mlp.up_proj",
            "mlp.down_proj",
        )
        if self.qk_norm:
            names += ("self_attn.q_norm", "self_attn.k_norm")
        if self.sandwich_norms:
            names += ("pre_feedforward_layernorm", "post_feedforward_layernorm")
        return names

    @property
    def layer_biases(self) -> tuple[str, ...]:
        """The biases of each decoder layer (names within ``model.layers.<i>.``, without ``.bias``)."""
        return ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj") if self.qkv_bias else ()

    @property
    def ropes(self) -> tuple[Rope, ...]:
        """The distinct rotary embeddings, in order of first use."""
        return tuple(dict.fromkeys(self.layer_rope))

    @property
    def windows(self) -> tuple[int | None, ...]:
        """The distinct attention windows (None: full causal attention), in order of first use."""
        return tuple(dict.fromkeys(self.layer_window))


def describe(cfg: Any) -> Architecture | None:
    """The architecture of a model config (transformers' or config.json's values as attributes), or None
    when the engine cannot run it exactly."""
    model_type = getattr(cfg, "model_type", None)
    n_layers = getattr(cfg, "num_hidden_layers", None)
    if model_type not in MODEL_TYPES or not isinstance(n_layers, int) or n_layers < 1:
        return None
    # Qwen2's q/k/v biases are part of its architecture (transformers ignores attention_bias there): any
    # other bias, or a config asking for bidirectional attention, is left to transformers
    if getattr(cfg, "attention_bias", False) or getattr(cfg, "mlp_bias", False):
        return None
    if not getattr(cfg, "is_causal", True):
        return None
    if model_type == "gemma3_text":
        return _gemma3(cfg, n_layers)
    return _llama_like(cfg, model_type, n_layers)


def supports(model: Any) -> bool:
    """Whether the engine can run ``model`` (anything with a ``config``) exactly."""
    return describe(getattr(model, "config", None)) is not None


def _llama_like(cfg: Any, model_type: str, n_layers: int) -> Architecture | None:
    """Llama and the architectures transformers writes as Llama plus one change: Mistral (a sliding window on
    every layer), Qwen2 (q/k/v biases; sliding layers on request), Qwen3 (q/k norms; sliding layers on request),
    Phi-3 (fused q/k/v and gate/up weights, gate first as the engine fuses them; Mistral's window)."""
    if getattr(cfg, "hidden_act", "silu") != "silu" or getattr(cfg, "pretraining_tp", 1) != 1:
        return None
    rope = _rope(
        getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {},
        getattr(cfg, "rope_theta", None) or 10000.0,
        allow_linear=True,
    )  # transformers' default theta
    if rope is None:
        return None
    if model_type == "llama":
        windows: tuple[int | None, ...] | None = (None,) * n_layers
    elif model_type in ("mistral", "phi3"):  # transformers ignores their layer_types: one mask for every layer
        window = getattr(cfg, "sliding_window", None)
        windows = (window,) * n_layers if window is None or _window_ok(window) else None
    else:
        windows = _qwen_windows(cfg, n_layers)
    # Qwen3's head_dim is its own (128 by default), never hidden_size / heads: it must be in the config
    if windows is None or (model_type == "qwen3" and not isinstance(getattr(cfg, "head_dim", None), int)):
        return None
    return Architecture(
        model_type,
        F.silu,
        gemma_norm=False,
        qk_norm=model_type == "qwen3",
        sandwich_norms=False,
        embed_scale=None,
        attn_scale=None,
        final_softcap=None,
        layer_rope=(rope,) * n_layers,
        layer_window=windows,
        qkv_bias=model_type == "qwen2",
        fused_projections=model_type == "phi3",
    )


def _qwen_windows(cfg: Any, n_layers: int) -> tuple[int | None, ...] | None:
    """Qwen2/Qwen3's attention window per layer, as their config classes derive it: ``sliding_window`` counts only
    with ``use_sliding_window``; ``layer_types`` if given, else the layers from ``max_window_layers`` on slide."""
    window = getattr(cfg, "sliding_window", None) if getattr(cfg, "use_sliding_window", False) else None
    types = getattr(cfg, "layer_types", None)
    if types is None:
        first = getattr(cfg, "max_window_layers", 28)
        types = [_SLIDING if window is not None and i >= first else _FULL for i in range(n_layers)]
    types = list(types)[:n_layers]
    if len(types) != n_layers or not set(types) <= {_FULL, _SLIDING}:
        return None
    if _SLIDING in types and not _window_ok(window):  # transformers cannot build that mask either
        return None
    return tuple(window if t == _SLIDING else None for t in types)


def _window_ok(window: Any) -> bool:
    return isinstance(window, int) and not isinstance(window, bool) and window >= 1


def _gemma3(cfg: Any, n_layers: int) -> Architecture | None:
    if getattr(cfg, "hidden_activation", None) != "gelu_pytorch_tanh":
        return None
    if getattr(cfg, "use_bidirectional_attention", False):
        return None
    # transformers' Gemma 3 attention does not apply attn_logit_softcapping (Gemma 2's does): leave such a
    # config to transformers rather than guess
    if getattr(cfg, "attn_logit_softcapping", None) is not None:
        return None
    types = getattr(cfg, "layer_types", None)
    if types is None:
        every = int(getattr(cfg, "sliding_window_pattern", 0) or getattr(cfg, "_sliding_window_pattern", 6))
        types = [_SLIDING if (i + 1) % every else _FULL for i in range(n_layers)]
    types = list(types)[:n_layers]
    if len(types) != n_layers or not set(types) <= {_FULL, _SLIDING}:
        return None
    ropes = _gemma3_ropes(cfg)
    if ropes is None:
        return None
    window = getattr(cfg, "sliding_window", None)
    if window is not None and not _window_ok(window):
        return None
    hidden = int(cfg.hidden_size)
    scalar = getattr(cfg, "query_pre_attn_scalar", 256)
    softcap = getattr(cfg, "final_logit_softcapping", None)
    return Architecture(
        "gemma3_text",
        partial(F.gelu, approximate="tanh"),
        gemma_norm=True,
        qk_norm=True,
        sandwich_norms=True,
        embed_scale=hidden**0.5,
        attn_scale=float(scalar) ** -0.5,
        final_softcap=float(softcap) if softcap is not None else None,
        layer_rope=tuple(ropes[t] for t in types),
        layer_window=tuple(window if t == _SLIDING else None for t in types),
    )


def _gemma3_ropes(cfg: Any) -> dict[str, Rope] | None:
    """Gemma 3's RoPE per layer type: ``rope_parameters`` nested by layer type (transformers 5), or the older
    ``rope_theta`` (full attention, with ``rope_scaling``) and ``rope_local_base_freq`` (sliding)."""
    params = getattr(cfg, "rope_parameters", None)
    out: dict[str, Rope | None] = {}
    if isinstance(params, dict) and (_FULL in params or _SLIDING in params):
        for kind in (_FULL, _SLIDING):
            out[kind] = _rope(params.get(kind) or {}, _GEMMA3_THETA[kind], allow_linear=True)
    else:
        scaling = getattr(cfg, "rope_scaling", None) or (params if isinstance(params, dict) else {})
        out[_FULL] = _rope(scaling, getattr(cfg, "rope_theta", None) or _GEMMA3_THETA[_FULL], allow_linear=True)
        out[_SLIDING] = _rope(
            {}, getattr(cfg, "rope_local_base_freq", None) or _GEMMA3_THETA[_SLIDING], allow_linear=False
        )
    if any(r is None for r in out.values()):
        return None
    return {k: r for k, r in out.items() if r is not None}


def _rope(params: Any, default_theta: Any, *, allow_linear: bool) -> Rope | None:
    """The Rope of a rope parameter dict (``rope_type`` default, or linear where allowed), or None."""
    if not isinstance(params, dict):
        return None
    kind = params.get("rope_type", params.get("type", "default")) or "default"
    if params.get("partial_rotary_factor", 1.0) != 1.0:
        return None
    theta = float(params.get("rope_theta", default_theta))
    if kind == "default":
        return Rope(theta)
    if kind == "linear" and allow_linear:
        factor = float(params.get("factor", 1.0))
        return Rope(theta, factor) if factor > 0 and math.isfinite(factor) else None
    return None
