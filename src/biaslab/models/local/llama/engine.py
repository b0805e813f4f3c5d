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

Reproducibility: sampling is per request (:mod:`.local_sampling`), and matrix products
always get whole blocks of rows (:data:`ROW_MULTIPLE`), so a row's numbers are bit-identical
whatever else shares the batch. The attention over a longer padded cache or a differently
grouped prefill can still move the last bits (~1e-7 relative); a sampled token changes only
if its uniform number falls that close to a boundary between two tokens, which we have not
observed. The engine is checked against the transformers forward pass in the tests.

This module holds the decoder (:meth:`LlamaEngine.forward`: RMSNorm, RoPE, attention over
the KV cache, fused projections); the scheduling (slots, queue, workers, prefill and decode
steps, :meth:`LlamaEngine.generate`) is in :mod:`.llama_batching`, and the building blocks
(:class:`KVCache`, weight fusion, :data:`ROW_MULTIPLE`) in :mod:`.llama_parts`; teacher-forced
scoring of whole texts (the log-likelihood path) in :mod:`.llama_scoring`.
"""

from __future__ import annotations

import threading
from collections import defaultdict

import torch
import torch.nn.functional as F

from biaslab.models.local.llama.batching import OnFinish, _ContinuousBatching  # noqa: F401 (OnFinish re-exported)
from biaslab.models.local.llama.parts import ROW_MULTIPLE, KVCache, _fuse_linears, _Layer, _pick_linear, _rope_theta
from biaslab.models.local.llama.parts import limit_heap_retention  # noqa: F401 (re-exported)
from biaslab.models.local.llama.scoring import _Scoring

SUPPORTED_MODEL_TYPES = ("llama",)
_FUSED_RMS_NORM = hasattr(F, "rms_norm")


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


class LlamaEngine(_ContinuousBatching, _Scoring):
    def __init__(self, model: torch.nn.Module) -> None:
        cfg = model.config
        self.cfg = cfg
        self.n_heads = cfg.num_attention_heads
        self.n_kv = getattr(cfg, "num_key_value_heads", None) or self.n_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads
        self.group = self.n_heads // self.n_kv
        self.eps = float(cfg.rms_norm_eps)
        self.max_positions = int(getattr(cfg, "max_position_embeddings", 2048))
        inner = model.model
        self.embed = inner.embed_tokens.weight
        self.norm = inner.norm.weight
        self.lm_head = model.lm_head.weight
        self.device = self.embed.device
        self.dtype = self.embed.dtype
        self.layers = [self._fuse(layer) for layer in inner.layers]
        self._linear = _pick_linear(self.device, self.dtype)
        self.stats: dict[str, float] = defaultdict(float)  # cumulative timings, for benchmarks
        self._stats_lock = threading.Lock()
        d = self.head_dim
        self.inv_freq = 1.0 / (_rope_theta(cfg) ** (torch.arange(0, d, 2, dtype=torch.float32, device=self.device) / d))

    # -- weights ---------------------------------------------------------------------------
    @staticmethod
    def _fuse(layer: torch.nn.Module) -> _Layer:
        a, m = layer.self_attn, layer.mlp
        wqkv = _fuse_linears([a.q_proj, a.k_proj, a.v_proj])
        wgu = _fuse_linears([m.gate_proj, m.up_proj])
        return _Layer(layer.input_layernorm.weight.detach(), wqkv, a.o_proj.weight.detach(),
                      layer.post_attention_layernorm.weight.detach(), wgu, m.down_proj.weight.detach())

    # -- the decoder ------------------------------------------------------------------------
    def _rms(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32 and _FUSED_RMS_NORM:  # one kernel, the same numbers
            return F.rms_norm(x, (x.shape[-1],), w, self.eps)
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return w * xf.to(x.dtype)

    def _rope(self, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        freqs = pos.float()[..., None] * self.inv_freq  # [B, T, d/2]
        emb = torch.cat([freqs, freqs], dim=-1)
        return emb.cos().to(self.dtype), emb.sin().to(self.dtype)

    @staticmethod
    def _apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        # x: [B, T, heads, d]; cos/sin: [B, T, d]
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos[:, :, None, :] + rot * sin[:, :, None, :]

    def forward(self, tokens: torch.Tensor, pos: torch.Tensor, slots: torch.Tensor, cache: "KVCache",
                attn_len: int, last: torch.Tensor | None = None) -> torch.Tensor:
        """Run ``tokens`` [B, T] at positions ``pos`` [B, T] for cache rows ``slots`` [B].

        Keys/values are written into the cache first; each query then attends to the cache
        positions ``<=`` its own among the first ``attn_len``. Returns logits [B, vocab] of
        the token at index ``last`` [B] of each row (default: the last one).
        """
        B, T = tokens.shape
        H, KV, D, G = self.n_heads, self.n_kv, self.head_dim, self.group
        x = F.embedding(tokens, self.embed)
        cos, sin = self._rope(pos)
        key_pos = torch.arange(attn_len, device=self.device)
        mask = (key_pos[None, None, :] <= pos[:, :, None])  # [B, T, L]
        # query layout [B, KV, G*T, D] (GQA without copying keys): row (g, t) uses mask[t]
        mask = mask[:, None, None, :, :].expand(B, 1, G, T, attn_len).reshape(B, 1, G * T, attn_len)
        contiguous = bool(T == 1 and slots.numel() == cache.k[0].shape[0])
        rows_b = slots[:, None].expand(B, T)
        for li, layer in enumerate(self.layers):
            h = self._rms(x, layer.ln1)
            qkv = self._linear(h, layer.wqkv)
            q, k, v = qkv.split([H * D, KV * D, KV * D], dim=-1)
            q = self._apply_rope(q.view(B, T, H, D), cos, sin)
            k = self._apply_rope(k.view(B, T, KV, D), cos, sin)
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
            x = x + self._linear(att, layer.wo)
            h = self._rms(x, layer.ln2)
            gate, up = self._linear(h, layer.wgu).chunk(2, dim=-1)
            x = x + self._linear(F.silu(gate) * up, layer.wdown)
        if last is None:
            x = x[:, -1]
        else:
            x = x[torch.arange(B, device=self.device), last]
        pad = -B % ROW_MULTIPLE
        if pad:  # see ROW_MULTIPLE
            x = torch.cat([x, x.new_zeros(pad, x.shape[-1])])
        return self._linear(self._rms(x, self.norm), self.lm_head)[:B]
