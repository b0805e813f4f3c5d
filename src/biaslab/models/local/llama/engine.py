"""Continuous-batching generation for Llama-architecture checkpoints (SmolLM2, Llama, ...).

``transformers``' ``generate`` runs static batches: every row waits for the longest one, and
a batch pays Python overhead on every layer for every step. For the small models biaslab
ships, generation is dominated by that waste, so this engine runs the decoder itself on the
weights of the already loaded ``LlamaForCausalLM``:

* a fixed number of *slots*, each with its own row of a preallocated KV cache (sized from
  ``kv_budget_bytes`` and the longest prompt + max_tokens of the call);
* every step decodes one token for all busy slots together (one matrix product per weight);
* a finished request frees its slot, and waiting requests are prefilled into free slots,
  so the batch stays full until the queue is empty (continuous batching);
* the prompt prefix that all requests of a call share (chat template, system prompt, the
  probe's fixed wording) is prefilled once and copied into each new slot;
* on CPU the slots are split between ``workers`` decoding loops (one per core), each in its
  own Python thread running single-threaded torch ops: a 2-thread torch synchronises its
  threads on every small operation and slows down 5-10x whenever another process takes a
  core, independent loops do not;
* q/k/v and gate/up projections are fused into single matrix products (the model's own
  Linear layers are re-pointed at views of the fused weights, so memory is not doubled and
  the transformers model keeps working, e.g. for log-likelihood scoring).

Reproducibility: sampling is per request (:mod:`..sampling`), and matrix products
always get whole blocks of rows (:data:`ROW_MULTIPLE`), so a row's numbers are bit-identical
whatever else shares the batch. The attention over a longer padded cache or a differently
grouped prefill can still move the last bits (~1e-7 relative); a sampled token changes only
if its uniform number falls that close to a boundary between two tokens, which we have not
observed. The engine is checked against the transformers forward pass in the tests.

This module holds :class:`LlamaEngine`: the weights (fused, :class:`LayerWeights`), the math
the decoding and scoring paths share (RMSNorm, RoPE, the projections, the LM head, the timing
counters) and the decoder over the KV cache (:meth:`LlamaEngine.forward`). The engine is
composed with the two loops that use it, each given the engine: :class:`.batching.ContinuousBatcher`
(slots, queue, workers, prefill and decode steps: :meth:`LlamaEngine.generate`) and
:class:`.scoring.PackedScorer` (teacher-forced scoring of whole texts in packed prefix trees, the
log-likelihood path: :meth:`LlamaEngine.score`). The KV cache is :class:`.kv_cache.KVCache`; worker
threads, heap settings and :data:`.runtime.ROW_MULTIPLE` are in :mod:`.runtime`.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from biaslab.models.local.llama.batching import KV_BUDGET_BYTES, MAX_SLOTS, ContinuousBatcher, OnFinish
from biaslab.models.local.llama.kv_cache import KVCache
from biaslab.models.local.llama.runtime import ROW_MULTIPLE
from biaslab.models.local.llama.scoring import BATCH_TOKENS, PACK_TOKENS, OnScored, PackedScorer
from biaslab.models.local.sampling import Decoding

SUPPORTED_MODEL_TYPES = ("llama",)
_FUSED_RMS_NORM = hasattr(F, "rms_norm")

Linear = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def supports(model: torch.nn.Module) -> bool:
    """Whether :class:`LlamaEngine` can run ``model`` exactly."""
    cfg = getattr(model, "config", None)
    if cfg is None or getattr(cfg, "model_type", None) not in SUPPORTED_MODEL_TYPES:
        return False
    rope = getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {}
    rope_type = rope.get("rope_type", rope.get("type", "default")) if isinstance(rope, dict) else "default"
    if rope_type not in (None, "default"):
        return False
    if getattr(cfg, "attention_bias", False) or getattr(cfg, "mlp_bias", False):
        return False
    if getattr(cfg, "hidden_act", "silu") != "silu" or getattr(cfg, "pretraining_tp", 1) != 1:
        return False
    return True


@dataclass
class LayerWeights:
    """The weights of one decoder layer, q/k/v and gate/up fused."""

    ln1: torch.Tensor
    wqkv: torch.Tensor
    wo: torch.Tensor
    ln2: torch.Tensor
    wgu: torch.Tensor
    wdown: torch.Tensor


class LlamaEngine:
    """Runs a loaded ``LlamaForCausalLM`` on its own weights: generation and scoring (see the module)."""

    def __init__(self, model: torch.nn.Module, matmul_dtype: torch.dtype | None = None) -> None:
        cfg: Any = model.config
        self.cfg = cfg
        self.n_heads: int = cfg.num_attention_heads
        self.n_kv: int = getattr(cfg, "num_key_value_heads", None) or self.n_heads
        self.head_dim: int = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads
        self.group = self.n_heads // self.n_kv
        self.eps = float(cfg.rms_norm_eps)
        self.max_positions = int(getattr(cfg, "max_position_embeddings", 2048))
        inner: Any = model.model
        lm_head: Any = model.lm_head
        self.embed: torch.Tensor = inner.embed_tokens.weight
        self.norm: torch.Tensor = inner.norm.weight
        self.lm_head: torch.Tensor = lm_head.weight
        self.device = self.embed.device
        self.dtype = self.embed.dtype
        self.layers = [self._fuse(layer) for layer in inner.layers]
        # reduced precision (opt-in): the layers' matrix products in matmul_dtype (see _mixed)
        self.matmul_dtype = matmul_dtype if matmul_dtype not in (None, self.dtype) else None
        if self.matmul_dtype is not None:
            self.layers = [_cast_layer(layer, self.matmul_dtype) for layer in self.layers]
        self.linear: Linear = _mixed(_pick_linear(self.device, self.dtype))
        self.score_linear: Linear = _mixed(F.linear)  # F.linear (MKL): faster than oneDNN at hundreds of rows
        self.stats: dict[str, float] = defaultdict(float)  # cumulative timings, for benchmarks
        self._stats_lock = threading.Lock()
        d = self.head_dim
        self.inv_freq = 1.0 / (_rope_theta(cfg) ** (torch.arange(0, d, 2, dtype=torch.float32, device=self.device) / d))
        self.batcher = ContinuousBatcher(self)
        self.scorer = PackedScorer(self)

    # -- generation and scoring (the loops that use the engine) ------------------------------
    def generate(self, prompts: Sequence[list[int]], decodings: Sequence[Decoding], stop_ids: set[int],
                 on_finish: OnFinish, *, max_slots: int = MAX_SLOTS, kv_budget_bytes: int = KV_BUDGET_BYTES,
                 workers: int | None = None) -> None:
        """Generate for all prompts by continuous batching (:meth:`.batching.ContinuousBatcher.generate`)."""
        self.batcher.generate(prompts, decodings, stop_ids, on_finish, max_slots=max_slots,
                              kv_budget_bytes=kv_budget_bytes, workers=workers)

    def score(self, texts: Sequence[list[int]], on_scored: OnScored, *, batch_tokens: int = BATCH_TOKENS,
              workers: int | None = None, pack_tokens: int = PACK_TOKENS) -> None:
        """Score every token of every text in packed prefix trees (:meth:`.scoring.PackedScorer.score`)."""
        self.scorer.score(texts, on_scored, batch_tokens=batch_tokens, workers=workers, pack_tokens=pack_tokens)

    def record(self, **values: float) -> None:
        """Add to the cumulative timings in :attr:`stats` (thread-safe)."""
        with self._stats_lock:
            for k, v in values.items():
                self.stats[k] += v

    # -- weights ---------------------------------------------------------------------------
    @staticmethod
    def _fuse(layer: Any) -> LayerWeights:
        a, m = layer.self_attn, layer.mlp
        wqkv = _fuse_linears([a.q_proj, a.k_proj, a.v_proj])
        wgu = _fuse_linears([m.gate_proj, m.up_proj])
        return LayerWeights(layer.input_layernorm.weight.detach(), wqkv, a.o_proj.weight.detach(),
                            layer.post_attention_layernorm.weight.detach(), wgu, m.down_proj.weight.detach())

    # -- the shared math -------------------------------------------------------------------
    def rms(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """RMSNorm of ``x`` with weight ``w``."""
        if x.dtype == torch.float32 and _FUSED_RMS_NORM:  # one kernel, the same numbers
            return F.rms_norm(x, (x.shape[-1],), w, self.eps)
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return w * xf.to(x.dtype)

    def rope(self, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin [B, T, d] of the rotary embedding at positions ``pos`` [B, T]."""
        freqs = pos.float()[..., None] * self.inv_freq  # [B, T, d/2]
        emb = torch.cat([freqs, freqs], dim=-1)
        return emb.cos().to(self.dtype), emb.sin().to(self.dtype)

    @staticmethod
    def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        # x: [B, T, heads, d]; cos/sin: [B, T, d]
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos[:, :, None, :] + rot * sin[:, :, None, :]

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Logits (float32) of the rows ``h``; on CPU through numpy's BLAS, about 15 % faster than
        torch's for a vocabulary-sized product (one thread per worker: see :meth:`.scoring.PackedScorer.score`)."""
        w = self.lm_head
        if h.device.type == "cpu" and h.dtype == torch.float32 and w.dtype == torch.float32:
            return torch.from_numpy(h.numpy() @ w.detach().numpy().T)
        return self.linear(h, w).float()

    # -- the decoder ------------------------------------------------------------------------
    def forward(self, tokens: torch.Tensor, pos: torch.Tensor, slots: torch.Tensor, cache: KVCache,
                attn_len: int, last: torch.Tensor | None = None) -> torch.Tensor:
        """Run ``tokens`` [B, T] at positions ``pos`` [B, T] for cache rows ``slots`` [B].

        Keys/values are written into the cache first; each query then attends to the cache
        positions ``<=`` its own among the first ``attn_len``. Returns logits [B, vocab] of
        the token at index ``last`` [B] of each row (default: the last one).
        """
        B, T = tokens.shape
        H, KV, D, G = self.n_heads, self.n_kv, self.head_dim, self.group
        x = F.embedding(tokens, self.embed)
        cos, sin = self.rope(pos)
        key_pos = torch.arange(attn_len, device=self.device)
        mask = (key_pos[None, None, :] <= pos[:, :, None])  # [B, T, L]
        # query layout [B, KV, G*T, D] (GQA without copying keys): row (g, t) uses mask[t]
        mask = mask[:, None, None, :, :].expand(B, 1, G, T, attn_len).reshape(B, 1, G * T, attn_len)
        contiguous = bool(T == 1 and slots.numel() == cache.k[0].shape[0])
        rows_b = slots[:, None].expand(B, T)
        for li, layer in enumerate(self.layers):
            h = self.rms(x, layer.ln1)
            qkv = self.linear(h, layer.wqkv)
            q, k, v = qkv.split([H * D, KV * D, KV * D], dim=-1)
            q = self.apply_rope(q.view(B, T, H, D), cos, sin)
            k = self.apply_rope(k.view(B, T, KV, D), cos, sin)
            v = v.view(B, T, KV, D)
            kc, vc = cache.k[li], cache.v[li]
            kc[rows_b, :, pos] = k.to(kc.dtype)
            vc[rows_b, :, pos] = v.to(vc.dtype)
            if contiguous:
                keys, vals = kc[:, :, :attn_len], vc[:, :, :attn_len]
            else:
                keys, vals = kc[slots, :, :attn_len], vc[slots, :, :attn_len]
            if keys.dtype != q.dtype:
                keys, vals = keys.to(q.dtype), vals.to(q.dtype)
            qg = q.view(B, T, KV, G, D).permute(0, 2, 3, 1, 4).reshape(B, KV, G * T, D)
            att = F.scaled_dot_product_attention(qg, keys, vals, attn_mask=mask)
            att = att.view(B, KV, G, T, D).permute(0, 3, 1, 2, 4).reshape(B, T, H * D)
            x = x + self.linear(att, layer.wo)
            h = self.rms(x, layer.ln2)
            gate, up = self.linear(h, layer.wgu).chunk(2, dim=-1)
            x = x + self.linear(F.silu(gate) * up, layer.wdown)
        if last is None:
            x = x[:, -1]
        else:
            x = x[torch.arange(B, device=self.device), last]
        pad = -B % ROW_MULTIPLE
        if pad:  # see ROW_MULTIPLE
            x = torch.cat([x, x.new_zeros(pad, x.shape[-1])])
        return self.linear(self.rms(x, self.norm), self.lm_head)[:B]


# -- loading the weights -------------------------------------------------------------------
def _rope_theta(cfg: object) -> float:
    rope = getattr(cfg, "rope_parameters", None)
    if isinstance(rope, dict) and "rope_theta" in rope:
        return float(rope["rope_theta"])
    return float(getattr(cfg, "rope_theta", 10000.0))


def _pick_linear(device: torch.device, dtype: torch.dtype) -> Linear:
    """``F.linear``, or oneDNN's linear on CPU (10-15 % faster than MKL for these small batches)."""
    op = getattr(getattr(torch.ops, "mkldnn", None), "_linear_pointwise", None)
    if device.type != "cpu" or dtype != torch.float32 or op is None or not torch.backends.mkldnn.is_available():
        return F.linear

    def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return op(x, w, None, "none", [], "")

    try:  # the op is internal to torch: use it only if it behaves
        probe_x, probe_w = torch.randn(8, 2, 16, generator=torch.Generator().manual_seed(0)), torch.eye(16)
        if not torch.allclose(linear(probe_x, probe_w), probe_x, atol=1e-6):
            return F.linear
    except Exception:
        return F.linear
    return linear


def _mixed(base: Linear) -> Linear:
    """``base``, except for a weight in another (reduced) dtype: the input is rounded to it, the product is
    taken in it and the result is converted back, so the residual stream, norms, attention and the LM head
    stay in the model's dtype."""

    def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        if w.dtype != x.dtype:
            return F.linear(x.to(w.dtype), w).to(x.dtype)
        return base(x, w)

    return linear


def _cast_layer(layer: LayerWeights, dtype: torch.dtype) -> LayerWeights:
    """The layer with its four weight matrices in ``dtype`` (its norm weights unchanged)."""
    return LayerWeights(layer.ln1, layer.wqkv.to(dtype), layer.wo.to(dtype), layer.ln2, layer.wgu.to(dtype),
                        layer.wdown.to(dtype))


def _fuse_linears(linears: list[torch.nn.Linear]) -> torch.Tensor:
    """Concatenate Linear weights and re-point each layer at its slice (no second copy)."""
    fused = torch.cat([lin.weight.detach() for lin in linears], dim=0).contiguous()
    start = 0
    for lin in linears:
        n = lin.weight.shape[0]
        lin.weight = torch.nn.Parameter(fused[start:start + n], requires_grad=False)
        start += n
    return fused
