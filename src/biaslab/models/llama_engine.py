"""Continuous-batching generation for Llama-architecture checkpoints (SmolLM2, Llama, ...).

``transformers``' ``generate`` runs static batches: every row waits for the longest one, and
a batch pays Python overhead on every layer for every step. For the small models biaslab
ships, generation is dominated by that waste, so this engine runs the decoder itself on the
weights of the already loaded ``LlamaForCausalLM``:

* a fixed number of *slots*, each with its own region of one preallocated KV cache;
* every step decodes one token for all busy slots together (one matrix product per weight);
* a finished request frees its slot, and waiting requests are prefilled into free slots,
  so the batch stays full until the queue is empty (continuous batching);
* q/k/v and gate/up projections are fused into single matrix products (the model's own
  Linear layers are re-pointed at views of the fused weights, so memory is not doubled and
  the transformers model keeps working, e.g. for log-likelihood scoring).

Sampling is per request (:mod:`.local_sampling`), so a request's text does not depend on
the other requests running beside it. The engine is checked against the transformers
forward pass in the tests.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch
import torch.nn.functional as F

from .local_sampling import Decoding, RowRandom, sample_rows

SUPPORTED_MODEL_TYPES = ("llama",)

# Matrix products get a multiple of this many rows (padding rows are discarded): BLAS kernels
# treat a trailing partial block of rows with different code, which changes a row's last bits
# depending on how many rows share the product. With whole blocks, a row's result is
# bit-identical whatever else is in the batch.
ROW_MULTIPLE = 8


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


def _rope_theta(cfg: object) -> float:
    rope = getattr(cfg, "rope_parameters", None)
    if isinstance(rope, dict) and "rope_theta" in rope:
        return float(rope["rope_theta"])
    return float(getattr(cfg, "rope_theta", 10000.0))


@dataclass
class _Layer:
    ln1: torch.Tensor
    wqkv: torch.Tensor
    wo: torch.Tensor
    ln2: torch.Tensor
    wgu: torch.Tensor
    wdown: torch.Tensor


@dataclass
class _Row:
    index: int  # request index
    decoding: Decoding
    rng: RowRandom
    pos: int  # position of the next token to feed
    max_new: int
    tokens: list[int] = field(default_factory=list)


OnFinish = Callable[[int, list[int], str, int], None]  # (request index, new tokens, finish reason, n_prompt)


class LlamaEngine:
    def __init__(self, model: torch.nn.Module, compute_dtype: torch.dtype | None = None) -> None:
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
        self.dtype = self.embed.dtype  # activations / residual stream
        self.mm_dtype = compute_dtype or self.dtype  # matrix products
        self.layers = [self._fuse(layer) for layer in inner.layers]
        if self.mm_dtype != self.dtype:
            c = self.mm_dtype
            self.layers = [_Layer(l.ln1, l.wqkv.to(c), l.wo.to(c), l.ln2, l.wgu.to(c), l.wdown.to(c)) for l in self.layers]
            self.lm_head_mm = self.lm_head.to(c)
        else:
            self.lm_head_mm = self.lm_head
        self.stats: dict[str, float] = defaultdict(float)  # cumulative timings, for benchmarks
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
    def _mm(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        if w.dtype == x.dtype:
            return F.linear(x, w)
        return F.linear(x.to(w.dtype), w).to(x.dtype)

    def _rms(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
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
            qkv = self._mm(h, layer.wqkv)
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
            x = x + self._mm(att, layer.wo)
            h = self._rms(x, layer.ln2)
            gate, up = self._mm(h, layer.wgu).chunk(2, dim=-1)
            x = x + self._mm(F.silu(gate) * up, layer.wdown)
        if last is None:
            x = x[:, -1]
        else:
            x = x[torch.arange(B, device=self.device), last]
        pad = -B % ROW_MULTIPLE
        if pad:  # see ROW_MULTIPLE
            x = torch.cat([x, x.new_zeros(pad, x.shape[-1])])
        return self._mm(self._rms(x, self.norm), self.lm_head_mm)[:B]

    # -- scheduling -------------------------------------------------------------------------
    def generate(self, prompts: Sequence[list[int]], decodings: Sequence[Decoding], stop_ids: set[int],
                 on_finish: OnFinish, *, max_slots: int = 64, kv_budget_bytes: int = 768 << 20,
                 kv_dtype: torch.dtype | None = None, refill_fraction: float = 0.125) -> None:
        """Generate for all prompts, calling ``on_finish`` as each request completes."""
        n = len(prompts)
        if n == 0:
            return
        kv_dtype = kv_dtype or self.dtype
        max_new = []
        for p, dec in zip(prompts, decodings):
            if not p:
                raise ValueError("empty prompt")
            max_new.append(max(0, min(dec.max_tokens, self.max_positions - len(p))))
        cap = max(len(p) + max(m, 1) for p, m in zip(prompts, max_new))
        cap = -(-cap // ROW_MULTIPLE) * ROW_MULTIPLE
        per_slot = cap * KVCache.bytes_per_token(self, kv_dtype)
        width = max(1, min(max_slots, n, kv_budget_bytes // max(per_slot, 1)))
        width = -(-width // ROW_MULTIPLE) * ROW_MULTIPLE
        cache = KVCache(self, width, cap, kv_dtype)
        pending = deque()
        for i in range(n):
            if max_new[i] == 0:
                on_finish(i, [], "length", len(prompts[i]))
            else:
                pending.append(i)
        slots: list[_Row | None] = [None] * width
        refill_at = max(1, int(width * refill_fraction))
        while True:
            free = [s for s in range(width) if slots[s] is None]
            busy = width - len(free)
            if pending and free and (len(free) >= refill_at or busy == 0 or len(pending) <= len(free)):
                admitted = []
                for s in free[: len(pending)]:
                    i = pending.popleft()
                    dec = decodings[i]
                    slots[s] = _Row(i, dec, RowRandom(dec.seed), len(prompts[i]) - 1, max_new[i])
                    admitted.append(s)
                self._prefill(admitted, slots, prompts, cache, stop_ids, on_finish)
            active = [s for s in range(width) if slots[s] is not None]
            if not active:
                if not pending:
                    break
                continue
            if not pending and len(active) <= (max(active) + 1) // 2:
                self._compact(slots, cache)
                active = list(range(len(active)))
            step_width = min(width, -(-(max(active) + 1) // ROW_MULTIPLE) * ROW_MULTIPLE)
            self._decode_step(slots, step_width, cache, stop_ids, prompts, on_finish)

    def _finish_or_keep(self, s: int, slots: list[_Row | None], token: int, stop_ids: set[int],
                        prompts: Sequence[list[int]], on_finish: OnFinish) -> None:
        row = slots[s]
        assert row is not None
        row.tokens.append(token)
        if token in stop_ids:
            on_finish(row.index, row.tokens, "stop", len(prompts[row.index]))
            slots[s] = None
        elif len(row.tokens) >= row.max_new:
            on_finish(row.index, row.tokens, "length", len(prompts[row.index]))
            slots[s] = None

    def _sample(self, logits: torch.Tensor, rows: list[_Row]) -> list[int]:
        t0 = time.perf_counter()
        temps = [r.decoding.temperature for r in rows]
        us = [r.rng.draw() for r in rows]
        out = sample_rows(logits, temps, [r.decoding.top_p for r in rows], us)
        self.stats["sample_s"] += time.perf_counter() - t0
        return out

    def _prefill(self, admitted: list[int], slots: list[_Row | None], prompts: Sequence[list[int]],
                 cache: "KVCache", stop_ids: set[int], on_finish: OnFinish) -> None:
        rows = [slots[s] for s in admitted]
        lens = [len(prompts[r.index]) for r in rows]  # type: ignore[union-attr]
        T = -(-max(lens) // ROW_MULTIPLE) * ROW_MULTIPLE  # rows * T: a multiple of ROW_MULTIPLE
        T = min(T, cache.k[0].shape[2])
        tokens = torch.zeros(len(rows), T, dtype=torch.long)
        for j, r in enumerate(rows):
            p = prompts[r.index]  # type: ignore[union-attr]
            tokens[j, : len(p)] = torch.tensor(p, dtype=torch.long)
        pos = torch.arange(T)[None, :].expand(len(rows), T)
        last = torch.tensor([n - 1 for n in lens])
        slot_t = torch.tensor(admitted, dtype=torch.long)
        t0 = time.perf_counter()
        logits = self.forward(tokens.to(self.device), pos.to(self.device), slot_t.to(self.device), cache, T,
                              last=last.to(self.device))
        self.stats["prefill_s"] += time.perf_counter() - t0
        self.stats["prefill_tokens"] += sum(lens)
        toks = self._sample(logits, rows)  # type: ignore[arg-type]
        for s, r, t in zip(admitted, rows, toks):
            r.pos = len(prompts[r.index])  # type: ignore[union-attr]
            self._finish_or_keep(s, slots, t, stop_ids, prompts, on_finish)

    def _decode_step(self, slots: list[_Row | None], width: int, cache: "KVCache", stop_ids: set[int],
                     prompts: Sequence[list[int]], on_finish: OnFinish) -> None:
        tokens = torch.zeros(width, 1, dtype=torch.long)
        pos = torch.zeros(width, 1, dtype=torch.long)
        live = []
        for s in range(width):
            r = slots[s]
            if r is not None:
                tokens[s, 0] = r.tokens[-1]
                pos[s, 0] = r.pos
                live.append(s)
        attn_len = int(pos.max()) + 1
        slot_t = torch.arange(width)
        t0 = time.perf_counter()
        logits = self.forward(tokens.to(self.device), pos.to(self.device), slot_t.to(self.device),
                              cache.narrow(width), attn_len)
        self.stats["decode_s"] += time.perf_counter() - t0
        self.stats["decode_steps"] += 1
        self.stats["decode_rows"] += len(live)
        live_rows = [slots[s] for s in live]
        toks = self._sample(logits[torch.tensor(live, device=logits.device)], live_rows)  # type: ignore[arg-type]
        for s, r, t in zip(live, live_rows, toks):
            r.pos += 1  # type: ignore[union-attr]
            self._finish_or_keep(s, slots, t, stop_ids, prompts, on_finish)

    @staticmethod
    def _compact(slots: list[_Row | None], cache: "KVCache") -> None:
        live = [s for s in range(len(slots)) if slots[s] is not None]
        for dst, src in enumerate(live):
            if dst != src:
                cache.copy_row(src, dst)
                slots[dst], slots[src] = slots[src], None


class KVCache:
    """Per-layer key/value tensors [slots, kv_heads, capacity, head_dim]."""

    def __init__(self, engine: LlamaEngine, width: int, capacity: int, dtype: torch.dtype) -> None:
        shape = (width, engine.n_kv, capacity, engine.head_dim)
        self.k = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]
        self.v = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]

    @staticmethod
    def bytes_per_token(engine: LlamaEngine, dtype: torch.dtype) -> int:
        return 2 * len(engine.layers) * engine.n_kv * engine.head_dim * torch.empty((), dtype=dtype).element_size()

    def narrow(self, width: int) -> "KVCache":
        view = object.__new__(KVCache)
        view.k = [t[:width] for t in self.k]
        view.v = [t[:width] for t in self.v]
        return view

    def copy_row(self, src: int, dst: int) -> None:
        for t in self.k + self.v:
            t[dst].copy_(t[src])


def _fuse_linears(linears: list[torch.nn.Linear]) -> torch.Tensor:
    """Concatenate Linear weights and re-point each layer at its slice (no second copy)."""
    fused = torch.cat([lin.weight.detach() for lin in linears], dim=0).contiguous()
    start = 0
    for lin in linears:
        n = lin.weight.shape[0]
        lin.weight = torch.nn.Parameter(fused[start:start + n], requires_grad=False)
        start += n
    return fused
