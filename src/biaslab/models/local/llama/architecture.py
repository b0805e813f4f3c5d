"""What differs between the decoder architectures the engine runs: Llama and Gemma 3 (text).

The engine (:mod:`.engine`), its generation loop (:mod:`.batching`) and its scoring loop
(:mod:`.scoring`) share one decoder layer; what varies from one architecture to the other is
described here, from the checkpoint's config, by an :class:`Architecture`:

=====================  ===============================  ===========================================
                       Llama (``llama``)                Gemma 3 (``gemma3_text``)
=====================  ===============================  ===========================================
embeddings             as stored                        times sqrt(hidden_size), in the model dtype
RMSNorm scale          ``weight`` (in the model dtype)  ``1 + weight``, applied in float32
q/k norm               none                             RMSNorm of each head's queries and keys
norms per layer        before attention, before MLP     also after attention and after the MLP
MLP activation         SiLU (gated)                     GELU, tanh approximation (gated)
query scaling          head_dim ** -0.5                 query_pre_attn_scalar ** -0.5
RoPE                   one theta                        per layer type (sliding / full attention)
attention              causal                           causal; sliding layers see the last
                                                        ``sliding_window`` positions only
final logits           as computed                      tanh-softcapped if the config says so
=====================  ===============================  ===========================================

:func:`describe` returns None for a config the engine cannot run exactly as transformers does
(another rope type, biases, bidirectional attention, ...): such a model keeps the transformers
path. It reads transformers config objects and the light loader's plain config.json alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F

MODEL_TYPES = ("llama", "gemma3_text")

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

    @property
    def layer_weights(self) -> tuple[str, ...]:
        """The weights of each decoder layer (names within ``model.layers.<i>.``, without ``.weight``)."""
        names = ("input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                 "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
        if self.qk_norm:
            names += ("self_attn.q_norm", "self_attn.k_norm")
        if self.sandwich_norms:
            names += ("pre_feedforward_layernorm", "post_feedforward_layernorm")
        return names

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
    if getattr(cfg, "attention_bias", False) or getattr(cfg, "mlp_bias", False):
        return None
    if model_type == "llama":
        return _llama(cfg, n_layers)
    return _gemma3(cfg, n_layers)


def supports(model: Any) -> bool:
    """Whether the engine can run ``model`` (anything with a ``config``) exactly."""
    return describe(getattr(model, "config", None)) is not None


def _llama(cfg: Any, n_layers: int) -> Architecture | None:
    if getattr(cfg, "hidden_act", "silu") != "silu" or getattr(cfg, "pretraining_tp", 1) != 1:
        return None
    rope = _rope(getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {},
                 getattr(cfg, "rope_theta", 10000.0), allow_linear=False)
    if rope is None:
        return None
    return Architecture("llama", F.silu, gemma_norm=False, qk_norm=False, sandwich_norms=False, embed_scale=None,
                        attn_scale=None, final_softcap=None, layer_rope=(rope,) * n_layers,
                        layer_window=(None,) * n_layers)


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
        every = int(getattr(cfg, "sliding_window_pattern", None) or getattr(cfg, "_sliding_window_pattern", 6))
        types = [_SLIDING if (i + 1) % every else _FULL for i in range(n_layers)]
    types = list(types)[:n_layers]
    if len(types) != n_layers or not set(types) <= {_FULL, _SLIDING}:
        return None
    ropes = _gemma3_ropes(cfg)
    if ropes is None:
        return None
    window = getattr(cfg, "sliding_window", None)
    if window is not None and (not isinstance(window, int) or window < 1):
        return None
    hidden = int(cfg.hidden_size)
    scalar = getattr(cfg, "query_pre_attn_scalar", 256)
    softcap = getattr(cfg, "final_logit_softcapping", None)
    return Architecture("gemma3_text", partial(F.gelu, approximate="tanh"), gemma_norm=True, qk_norm=True,
                        sandwich_norms=True, embed_scale=hidden ** 0.5, attn_scale=float(scalar) ** -0.5,
                        final_softcap=float(softcap) if softcap is not None else None,
                        layer_rope=tuple(ropes[t] for t in types),
                        layer_window=tuple(window if t == _SLIDING else None for t in types))


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
        out[_SLIDING] = _rope({}, getattr(cfg, "rope_local_base_freq", None) or _GEMMA3_THETA[_SLIDING],
                              allow_linear=False)
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
