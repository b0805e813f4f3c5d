"""The layer maths of :class:`~.engine.LlamaEngine`: the weights of a loaded causal LM (q/k/v and gate/up fused,
:class:`LayerWeights`), the math the decoding and scoring paths share (RMSNorm, RoPE, a decoder layer's projections
before and after attention, the sliding-window masks, the LM head, the timing counters) and the decoder over the KV
cache (:meth:`Decoder.forward`).

:class:`Decoder` is what the loops that run the model (:class:`.batching.ContinuousBatcher`,
:class:`.scoring.PackedScorer`) are given; :class:`~.engine.LlamaEngine` is a :class:`Decoder` composed with them.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch
import torch.nn.functional as F

from biaslab.models.local.llama import packing
from biaslab.models.local.llama.architecture import Architecture, describe
from biaslab.models.local.llama.kv_cache import KVCache
from biaslab.models.local.llama.precision import ReducedHead, pack_weight, reduced_linear
from biaslab.models.local.llama.runtime import ROW_MULTIPLE

_FUSED_RMS_NORM = hasattr(F, "rms_norm")

Linear = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass
class LayerWeights:
    """The weights of one decoder layer, q/k/v (and their biases) and gate/up fused; norm scales as
    :meth:`Decoder.rms` takes them. ``ln1``/``ln2`` are the norms before attention and before the MLP; the
    others are None unless the architecture has them: the q/k/v biases (Qwen2), the q/k norms (Qwen3,
    Gemma 3) and the norms of the attention and MLP outputs (Gemma 3)."""

    ln1: torch.Tensor
    wqkv: torch.Tensor
    wo: torch.Tensor
    ln2: torch.Tensor
    wgu: torch.Tensor
    wdown: torch.Tensor
    q_norm: torch.Tensor | None = None
    k_norm: torch.Tensor | None = None
    post_attn: torch.Tensor | None = None
    post_mlp: torch.Tensor | None = None
    bqkv: torch.Tensor | None = None


class Decoder:
    """The decoder of a loaded causal LM of an architecture in :data:`.architecture.MODEL_TYPES`, on its own
    (fused) weights: the layer maths that generation and scoring share, and the decoder over a KV cache."""

    def __init__(self, model: torch.nn.Module, matmul_dtype: torch.dtype | None = None, *, pack: bool = True) -> None:
        cfg: Any = model.config
        arch = describe(cfg)
        if arch is None:
            raise ValueError(f"the engine cannot run this {getattr(cfg, 'model_type', '?')} model exactly")
        self.cfg = cfg
        self.arch: Architecture = arch
        self.n_heads: int = cfg.num_attention_heads
        self.n_kv: int = getattr(cfg, "num_key_value_heads", None) or self.n_heads
        self.head_dim: int = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads
        self.group = self.n_heads // self.n_kv
        self.eps = float(cfg.rms_norm_eps)
        self.max_positions = int(getattr(cfg, "max_position_embeddings", 2048))
        inner: Any = model.model
        lm_head: Any = model.lm_head
        self.embed: torch.Tensor = inner.embed_tokens.weight
        self.lm_head: torch.Tensor = lm_head.weight
        self.device = self.embed.device
        self.dtype = self.embed.dtype
        # as transformers: the scale is a float32 scalar converted to the model dtype
        self.embed_scale = (
            None if arch.embed_scale is None else torch.tensor(arch.embed_scale, dtype=torch.float32).to(self.dtype)
        )
        self.norm: torch.Tensor = self._norm_scale(inner.norm.weight)
        self.plain_layers = [self._fuse(layer) for layer in inner.layers]  # sharing the model's memory
        self.layers = self.plain_layers  # the weights the products take (see _lay_out)
        # reduced precision (opt-in): the layers' matrix products in matmul_dtype (see _mixed)
        self.matmul_dtype = matmul_dtype if matmul_dtype not in (None, self.dtype) else None
        self.reduced_head: ReducedHead | None = None  # the scoring path's LM head at matmul_dtype
        if self.matmul_dtype is not None:
            self.layers = [_cast_layer(layer, self.matmul_dtype) for layer in self.layers]
            self.reduced_head = ReducedHead(self.lm_head, self.matmul_dtype, softcap=arch.final_softcap)
        base = _pick_linear(self.device, self.dtype)
        self._head_linear: Linear | None = None if base is F.linear else base  # oneDNN's, for the LM head
        self.linear: Linear = _mixed(base)
        self.head_weight: torch.Tensor = self.lm_head  # the LM head as the products take it
        self.row_multiple = ROW_MULTIPLE  # the blocks of rows a product needs for a row's numbers not to vary
        self.layout = "plain weights, blocks of rows" if pack else "plain weights (not laid out, by request)"
        if pack and self._head_linear is not None:
            self._lay_out()
        self.stats: dict[str, float] = defaultdict(float)  # cumulative timings, for benchmarks
        self._stats_lock = threading.Lock()
        self.inv_freqs = [r.inv_freq(self.head_dim, self.device) for r in arch.ropes]
        self.layer_rope = [arch.ropes.index(r) for r in arch.layer_rope]  # each layer's entry of rope_tables
        self.act = arch.activation

    def record(self, **values: float) -> None:
        """Add to the cumulative timings in :attr:`stats` (thread-safe)."""
        with self._stats_lock:
            for k, v in values.items():
                self.stats[k] += v

    # -- weights ---------------------------------------------------------------------------
    def _norm_scale(self, weight: torch.Tensor) -> torch.Tensor:
        """A norm's scale as :meth:`rms` takes it: Gemma's ``1 + weight`` in float32, Llama's weight as is."""
        return 1.0 + weight.detach().float() if self.arch.gemma_norm else weight.detach()

    def _fuse(self, layer: Any) -> LayerWeights:
        a, m, arch, norm = layer.self_attn, layer.mlp, self.arch, self._norm_scale
        if arch.fused_projections:  # stored fused already (Phi-3)
            bqkv, wqkv, wgu = None, a.qkv_proj.weight.detach(), m.gate_up_proj.weight.detach()
        else:
            qkv = [a.q_proj, a.k_proj, a.v_proj]
            bqkv = torch.cat([lin.bias.detach() for lin in qkv]) if arch.qkv_bias else None
            wqkv = _fuse_linears(qkv)
            wgu = _fuse_linears([m.gate_proj, m.up_proj])
        qk = dict(q_norm=norm(a.q_norm.weight), k_norm=norm(a.k_norm.weight)) if arch.qk_norm else {}
        if not arch.sandwich_norms:  # Llama: "post_attention_layernorm" is the norm before the MLP
            return LayerWeights(
                norm(layer.input_layernorm.weight),
                wqkv,
                a.o_proj.weight.detach(),
                norm(layer.post_attention_layernorm.weight),
                wgu,
                m.down_proj.weight.detach(),
                bqkv=bqkv,
                **qk,
            )
        return LayerWeights(
            norm(layer.input_layernorm.weight),
            wqkv,
            a.o_proj.weight.detach(),
            norm(layer.pre_feedforward_layernorm.weight),
            wgu,
            m.down_proj.weight.detach(),
            post_attn=norm(layer.post_attention_layernorm.weight),
            post_mlp=norm(layer.post_feedforward_layernorm.weight),
            bqkv=bqkv,
            **qk,
        )

    def _lay_out(self) -> None:
        """The float32 weights laid out for oneDNN (:mod:`.packing`): the layers' and the LM head's, or the head's
        alone under a reduced matmul dtype (whose layers are laid out already, and keep the blocks of rows)."""
        layers = [] if self.matmul_dtype is not None else self.layers
        flat = [w for lw in layers for w in (lw.wqkv, lw.wo, lw.wgu, lw.wdown)] + [self.lm_head.detach()]
        done = packing.pack(flat, ROW_MULTIPLE)
        if not done.packed:
            self.layout = f"plain weights, blocks of rows: {done.reason}"
            return
        *mats, self.head_weight = done.weights
        if self.matmul_dtype is not None:
            self.layout = "LM head laid out, blocks of rows"
            return
        self.layers = [
            replace(lw, wqkv=mats[4 * i], wo=mats[4 * i + 1], wgu=mats[4 * i + 2], wdown=mats[4 * i + 3])
            for i, lw in enumerate(layers)
        ]
        self.row_multiple = 1
        self.layout = "laid out"

    # -- the shared math -------------------------------------------------------------------
    def rms(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """RMSNorm of ``x`` (over its last dimension) with the scale ``w`` (see :meth:`_norm_scale`)."""
        if x.dtype == torch.float32 and _FUSED_RMS_NORM:  # one kernel, the same numbers
            return F.rms_norm(x, (x.shape[-1],), w, self.eps)
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.arch.gemma_norm:  # scaled in float32, then rounded
            return (xf * w).to(x.dtype)
        return w * xf.to(x.dtype)

    def rope(self, pos: torch.Tensor, which: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin [B, T, d] of the rotary embedding ``which`` (of ``arch.ropes``) at positions ``pos`` [B, T]."""
        freqs = pos.float()[..., None] * self.inv_freqs[which]  # [B, T, d/2]
        emb = torch.cat([freqs, freqs], dim=-1)
        return emb.cos().to(self.dtype), emb.sin().to(self.dtype)

    def rope_tables(self, pos: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """:meth:`rope` of every rotary embedding the layers use (layer i: entry ``layer_rope[i]``)."""
        return [self.rope(pos, i) for i in range(len(self.inv_freqs))]

    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        x = F.embedding(tokens, self.embed)
        return x if self.embed_scale is None else x * self.embed_scale

    def attention_inputs(
        self, li: int, x: torch.Tensor, linear: Linear, ropes: list[tuple[torch.Tensor, torch.Tensor]]
    ) -> tuple[torch.Tensor, ...]:
        """q [B, T, H, D], k and v [B, T, KV, D] of layer ``li`` for the residual stream ``x`` [B, T, hidden]."""
        layer = self.layers[li]
        B, T = x.shape[0], x.shape[1]
        H, KV, D = self.n_heads, self.n_kv, self.head_dim
        qkv = linear(self.rms(x, layer.ln1), layer.wqkv)
        if layer.bqkv is not None:
            qkv = qkv + layer.bqkv
        q, k, v = qkv.split([H * D, KV * D, KV * D], dim=-1)
        q, k = q.view(B, T, H, D), k.view(B, T, KV, D)
        if layer.q_norm is not None and layer.k_norm is not None:
            q, k = self.rms(q, layer.q_norm), self.rms(k, layer.k_norm)
        cos, sin = ropes[self.layer_rope[li]]
        return self.apply_rope(q, cos, sin), self.apply_rope(k, cos, sin), v.view(B, T, KV, D)

    def attention_output(self, li: int, x: torch.Tensor, att: torch.Tensor, linear: Linear) -> torch.Tensor:
        """The residual stream after layer ``li``, given ``x`` before it and its attention ``att`` [..., H*D]."""
        layer = self.layers[li]
        out = linear(att, layer.wo)
        if layer.post_attn is not None:
            out = self.rms(out, layer.post_attn)
        x = x + out
        gate, up = linear(self.rms(x, layer.ln2), layer.wgu).chunk(2, dim=-1)
        out = linear(self.act(gate) * up, layer.wdown)
        if layer.post_mlp is not None:
            out = self.rms(out, layer.post_mlp)
        return x + out

    def attention_masks(
        self, mask: torch.Tensor, q_pos: torch.Tensor, k_pos: torch.Tensor, span: int
    ) -> dict[int | None, torch.Tensor]:
        """The causal ``mask`` [..., Tq, Tk] for each window the layers use: a sliding layer's also hides keys
        ``window`` or more positions back (``q_pos`` [..., Tq], ``k_pos`` [..., Tk]; ``span``: the largest
        query-key distance there can be, under which a window changes nothing)."""
        out: dict[int | None, torch.Tensor] = {}
        for w in self.arch.windows:
            if w is None or span < w:
                out[w] = mask
            else:
                out[w] = mask & (q_pos[..., :, None] - k_pos[..., None, :] < w)
        return out

    def softcap(self, logits: torch.Tensor) -> torch.Tensor:
        c = self.arch.final_softcap
        return logits if c is None else torch.tanh(logits / c) * c

    @staticmethod
    def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        # x: [B, T, heads, d]; cos/sin: [B, T, d]
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos[:, :, None, :] + rot * sin[:, :, None, :]

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Logits (float32) of the rows ``h``. On CPU with oneDNN's linear (:func:`_pick_linear`): 15-45 %
        faster than numpy's BLAS for a vocabulary-sized product at 8-256 rows on one thread, which in turn
        beats torch's F.linear (MKL) by about 15 %; numpy's where oneDNN's is not available."""
        w = self.lm_head
        if self._head_linear is not None and h.dtype == w.dtype:
            return self.softcap(self._head_linear(h, self.head_weight))
        if h.device.type == "cpu" and h.dtype == torch.float32 and w.dtype == torch.float32:
            return self.softcap(torch.from_numpy(h.numpy() @ w.detach().numpy().T))
        return self.softcap(self.linear(h, w)).float()

    # -- the decoder ------------------------------------------------------------------------
    def forward(
        self,
        tokens: torch.Tensor,
        pos: torch.Tensor,
        slots: torch.Tensor,
        cache: KVCache,
        attn_len: int,
        last: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run ``tokens`` [B, T] at positions ``pos`` [B, T] for cache rows ``slots`` [B].

        Keys/values are written into the cache first; each query then attends to the cache
        positions ``<=`` its own among the first ``attn_len``. Returns logits [B, vocab] of
        the token at index ``last`` [B] of each row (default: the last one).
        """
        B, T = tokens.shape
        H, KV, D, G = self.n_heads, self.n_kv, self.head_dim, self.group
        x = self.embed_tokens(tokens)
        ropes = self.rope_tables(pos)
        key_pos = torch.arange(attn_len, device=self.device)
        causal = key_pos[None, None, :] <= pos[:, :, None]  # [B, T, L]
        # query layout [B, KV, G*T, D] (GQA without copying keys): row (g, t) uses mask[t]
        masks = {
            w: m[:, None, None, :, :].expand(B, 1, G, T, attn_len).reshape(B, 1, G * T, attn_len)
            for w, m in self.attention_masks(causal, pos, key_pos[None], attn_len - 1).items()
        }
        contiguous = bool(T == 1 and slots.numel() == cache.k[0].shape[0])
        rows_b = slots[:, None].expand(B, T)
        for li in range(len(self.layers)):
            q, k, v = self.attention_inputs(li, x, self.linear, ropes)
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
            att = F.scaled_dot_product_attention(
                qg, keys, vals, attn_mask=masks[self.arch.layer_window[li]], scale=self.arch.attn_scale
            )
            att = att.view(B, KV, G, T, D).permute(0, 3, 1, 2, 4).reshape(B, T, H * D)
            x = self.attention_output(li, x, att, self.linear)
        if last is None:
            x = x[:, -1]
        else:
            x = x[torch.arange(B, device=self.device), last]
        pad = -B % self.row_multiple
        if pad:  # see ROW_MULTIPLE
            x = torch.cat([x, x.new_zeros(pad, x.shape[-1])])
        return self.softcap(self.linear(self.rms(x, self.norm), self.head_weight)[:B])


# -- loading the weights -------------------------------------------------------------------
def _pick_linear(device: torch.device, dtype: torch.dtype) -> Linear:
    """``F.linear``, or oneDNN's linear on CPU: faster than F.linear (MKL) on one thread both for generation's
    small batches (10-15 %) and for scoring's hundreds of rows (about 18 % over a float32 scoring pass
    of 400 WinoSemitism sentences with SmolLM2; ``bench/bench_wino.py causal``)."""
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
            return reduced_linear(x.to(w.dtype), w).to(x.dtype)
        return base(x, w)

    return linear


def _cast_layer(layer: LayerWeights, dtype: torch.dtype) -> LayerWeights:
    """The layer with its four weight matrices in ``dtype``, laid out for oneDNN (its norm weights unchanged)."""
    return replace(
        layer,
        wqkv=pack_weight(layer.wqkv.to(dtype)),
        wo=pack_weight(layer.wo.to(dtype)),
        wgu=pack_weight(layer.wgu.to(dtype)),
        wdown=pack_weight(layer.wdown.to(dtype)),
    )


def _fuse_linears(linears: list[torch.nn.Linear]) -> torch.Tensor:
    """Concatenate Linear weights and re-point each layer at its slice (no second copy). Weights that an
    earlier engine on the same model fused already (consecutive rows of one tensor) are used as they are."""
    ws = [lin.weight.detach() for lin in linears]
    cols, first = ws[0].shape[1], ws[0]
    if all(
        w.is_contiguous()
        and w.shape[1] == cols
        and w.untyped_storage().data_ptr() == first.untyped_storage().data_ptr()
        for w in ws
    ):
        ends = [w.storage_offset() + w.shape[0] * cols for w in ws]
        if all(w.storage_offset() == end for w, end in zip(ws[1:], ends)):
            return first.as_strided((sum(w.shape[0] for w in ws), cols), (cols, 1))
    fused = torch.cat(ws, dim=0).contiguous()
    start = 0
    for lin in linears:
        n = lin.weight.shape[0]
        lin.weight = torch.nn.Parameter(fused[start : start + n], requires_grad=False)
        start += n
    return fused
