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
"""

from __future__ import annotations

import queue
import sys
import threading
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


def _pick_linear(device: torch.device, dtype: torch.dtype) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
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
    pos: int  # prompt length: the first generated token sits at this position
    max_new: int
    tokens: list[int] = field(default_factory=list)


OnFinish = Callable[[int, list[int], str, int], None]  # (request index, new tokens, finish reason, n_prompt)


class LlamaEngine:
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

    # -- scheduling -------------------------------------------------------------------------
    def generate(self, prompts: Sequence[list[int]], decodings: Sequence[Decoding], stop_ids: set[int],
                 on_finish: OnFinish, *, max_slots: int = 48, kv_budget_bytes: int = 720 << 20,
                 workers: int | None = None) -> None:
        """Generate for all prompts, calling ``on_finish`` (in this thread) as each request completes.

        ``workers`` (default: torch's CPU thread count, on CPU) independent decoding loops
        share the slots and the queue of waiting requests; each runs in its own Python thread
        with one torch thread. Independent single-threaded loops keep both cores busy without
        the per-operation thread synchronisation of a 2-thread torch, which collapses (5-10x
        slower) as soon as another process competes for a core.
        """
        n = len(prompts)
        if n == 0:
            return
        max_new = []
        for p, dec in zip(prompts, decodings):
            if not p:
                raise ValueError("empty prompt")
            max_new.append(max(0, min(dec.max_tokens, self.max_positions - len(p))))
        pending: deque[int] = deque()
        for i in range(n):
            if max_new[i] == 0:
                on_finish(i, [], "length", len(prompts[i]))
            else:
                pending.append(i)
        if not pending:
            return
        cap = _round_up(max(len(prompts[i]) + max_new[i] for i in pending), ROW_MULTIPLE)
        per_slot = cap * KVCache.bytes_per_token(self, self.dtype)
        total = max(1, min(max_slots, len(pending), kv_budget_bytes // max(per_slot, 1)))
        if workers is None:
            workers = torch.get_num_threads() if self.device.type == "cpu" else 1
        workers = max(1, min(workers, total // ROW_MULTIPLE))
        # slots per worker: the nearest multiple of ROW_MULTIPLE (so the budget is approximate)
        width = max(ROW_MULTIPLE, (total // workers + ROW_MULTIPLE // 2) // ROW_MULTIPLE * ROW_MULTIPLE)
        if width * workers > max_slots and width > ROW_MULTIPLE:
            width -= ROW_MULTIPLE
        # Requests of equal length finish in waves: size the slots so the last wave is not a
        # nearly empty batch (64 requests on 48 slots would run 48, then 16 at a third of the speed).
        waves = -(-len(pending) // (width * workers))
        width = min(width, _round_up(-(-len(pending) // (workers * waves)), ROW_MULTIPLE))
        n_prefix = _shared_prefix(prompts, pending)
        job = _Job(prompts, decodings, max_new, stop_ids, pending, cap, width, list(prompts[pending[0]][:n_prefix]))
        limit_heap_retention()
        if workers == 1:
            self._run_slots(job, lambda *item: on_finish(*item))
            return
        done: queue.Queue = queue.Queue()
        threads_before = torch.get_num_threads()

        def work() -> None:
            try:
                torch.set_num_threads(1)
                with torch.inference_mode():
                    self._run_slots(job, lambda *item: done.put(item))
            except BaseException as exc:  # reported to the caller's thread
                job.stop.set()
                done.put(exc)
            finally:
                done.put(None)

        pool = [threading.Thread(target=work, name=f"biaslab-decode-{k}", daemon=True) for k in range(workers)]
        try:
            for t in pool:
                t.start()
            running, error = workers, None
            while running:
                item = done.get()
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    error = error or item
                elif not job.stop.is_set():
                    on_finish(*item)
            if error is not None:
                raise error
        finally:
            job.stop.set()
            for t in pool:
                t.join()
            torch.set_num_threads(threads_before)

    def _run_slots(self, job: "_Job", emit: OnFinish) -> None:
        """One decoding loop: ``job.width`` slots fed from the shared queue until it is empty."""
        cache = KVCache(self, job.width, job.cap, self.dtype)
        prefix = self._prefix_kv(job) if job.prefix else None
        slots: list[_Row | None] = [None] * job.width
        refill_at = max(1, job.width // 8)
        while not job.stop.is_set():
            free = [s for s in range(job.width) if slots[s] is None]
            busy = job.width - len(free)
            if job.pending and free and (len(free) >= refill_at or busy == 0 or len(job.pending) <= len(free)):
                admitted = []
                for s in free:
                    try:
                        i = job.pending.popleft()
                    except IndexError:
                        break
                    dec = job.decodings[i]
                    slots[s] = _Row(i, dec, RowRandom(dec.seed), len(job.prompts[i]), job.max_new[i])
                    admitted.append(s)
                if admitted:
                    self._prefill(admitted, slots, job, cache, emit, prefix)
            active = [s for s in range(job.width) if slots[s] is not None]
            if not active:
                if not job.pending:
                    return
                continue
            if not job.pending and _round_up(len(active), ROW_MULTIPLE) < _round_up(max(active) + 1, ROW_MULTIPLE):
                self._compact(slots, cache)
                active = list(range(len(active)))
            self._decode_step(slots, _round_up(max(active) + 1, ROW_MULTIPLE), cache, job, emit)

    def _record(self, **values: float) -> None:
        with self._stats_lock:
            for k, v in values.items():
                self.stats[k] += v

    def _finish_or_keep(self, s: int, slots: list[_Row | None], token: int, job: "_Job", emit: OnFinish) -> None:
        row = slots[s]
        assert row is not None
        row.tokens.append(token)
        if token in job.stop_ids:
            emit(row.index, row.tokens, "stop", len(job.prompts[row.index]))
            slots[s] = None
        elif len(row.tokens) >= row.max_new:
            emit(row.index, row.tokens, "length", len(job.prompts[row.index]))
            slots[s] = None

    @staticmethod
    def _sample(logits: torch.Tensor, rows: list[_Row]) -> list[int]:
        temps = [r.decoding.temperature for r in rows]
        us = [r.rng.draw() for r in rows]
        return sample_rows(logits, temps, [r.decoding.top_p for r in rows], us)

    def _prefix_kv(self, job: "_Job") -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Keys/values of the prompt prefix that all requests share (computed once per loop)."""
        n = len(job.prefix)
        scratch = KVCache(self, 1, n, self.dtype)
        ids = torch.tensor([job.prefix], dtype=torch.long)
        t0 = time.perf_counter()
        self.forward(ids.to(self.device), torch.arange(n, device=self.device)[None], torch.zeros(1, dtype=torch.long,
                     device=self.device), scratch, n)
        self._record(prefill_s=time.perf_counter() - t0, prefill_tokens=n)
        return [k[0] for k in scratch.k], [v[0] for v in scratch.v]

    def _prefill(self, admitted: list[int], slots: list[_Row | None], job: "_Job", cache: "KVCache",
                 emit: OnFinish, prefix: tuple[list[torch.Tensor], list[torch.Tensor]] | None = None) -> None:
        rows: list[_Row] = [slots[s] for s in admitted]  # type: ignore[misc]
        start = len(job.prefix) if prefix is not None else 0
        slot_t = torch.tensor(admitted, dtype=torch.long, device=self.device)
        if prefix is not None:  # copy the shared prefix's keys/values into the new slots
            for layer_k, layer_v, pk, pv in zip(cache.k, cache.v, *prefix):
                layer_k[slot_t, :, :start] = pk
                layer_v[slot_t, :, :start] = pv
        lens = [len(job.prompts[r.index]) - start for r in rows]
        T = _round_up(max(lens), ROW_MULTIPLE)  # rows * T: whole blocks (see ROW_MULTIPLE)
        tokens = torch.zeros(len(rows), T, dtype=torch.long)
        for j, r in enumerate(rows):
            tokens[j, : lens[j]] = torch.tensor(job.prompts[r.index][start:], dtype=torch.long)
        pos = start + torch.arange(T)[None, :].expand(len(rows), T)
        last = torch.tensor([n - 1 for n in lens])
        t0 = time.perf_counter()
        logits = self.forward(tokens.to(self.device), pos.to(self.device), slot_t, cache, start + T,
                              last=last.to(self.device))
        t1 = time.perf_counter()
        toks = self._sample(logits, rows)
        self._record(prefill_s=t1 - t0, prefill_tokens=sum(lens), sample_s=time.perf_counter() - t1)
        for s, t in zip(admitted, toks):
            self._finish_or_keep(s, slots, t, job, emit)

    def _decode_step(self, slots: list[_Row | None], width: int, cache: "KVCache", job: "_Job",
                     emit: OnFinish) -> None:
        tokens = torch.zeros(width, 1, dtype=torch.long)
        pos = torch.zeros(width, 1, dtype=torch.long)
        live = [s for s in range(width) if slots[s] is not None]
        rows: list[_Row] = [slots[s] for s in live]  # type: ignore[misc]
        for s, r in zip(live, rows):
            tokens[s, 0] = r.tokens[-1]
            pos[s, 0] = r.pos + len(r.tokens) - 1
        attn_len = int(pos.max()) + 1
        t0 = time.perf_counter()
        logits = self.forward(tokens.to(self.device), pos.to(self.device), torch.arange(width, device=self.device),
                              cache.narrow(width), attn_len)
        t1 = time.perf_counter()
        if len(live) < width:
            logits = logits[torch.tensor(live, device=logits.device)]
        toks = self._sample(logits, rows)
        self._record(decode_s=t1 - t0, decode_steps=1, decode_rows=len(live), sample_s=time.perf_counter() - t1)
        for s, t in zip(live, toks):
            self._finish_or_keep(s, slots, t, job, emit)

    @staticmethod
    def _compact(slots: list[_Row | None], cache: "KVCache") -> None:
        live = [s for s in range(len(slots)) if slots[s] is not None]
        for dst, src in enumerate(live):
            if dst != src:
                cache.copy_row(src, dst)
                slots[dst], slots[src] = slots[src], None


@dataclass
class _Job:
    prompts: Sequence[list[int]]
    decodings: Sequence[Decoding]
    max_new: list[int]
    stop_ids: set[int]
    pending: deque
    cap: int
    width: int
    prefix: list[int] = field(default_factory=list)  # leading tokens all prompts share (prefilled once)
    stop: threading.Event = field(default_factory=threading.Event)


_MIN_PREFIX = 16


def _shared_prefix(prompts: Sequence[list[int]], indices: Sequence[int]) -> int:
    """Length of the prompt prefix all ``indices`` share (a multiple of ROW_MULTIPLE, or 0).

    Every prompt keeps at least one token of its own, whose logits start its generation.
    """
    idx = list(indices)
    if len(idx) < 2:
        return 0
    first = prompts[idx[0]]
    n = min(len(prompts[i]) for i in idx) - 1
    for i in idx[1:]:
        p = prompts[i]
        k = 0
        while k < n and p[k] == first[k]:
            k += 1
        n = k
        if n < _MIN_PREFIX:
            return 0
    n = n // ROW_MULTIPLE * ROW_MULTIPLE
    return n if n >= _MIN_PREFIX else 0


_MMAP_THRESHOLD_SET = False


def limit_heap_retention() -> None:
    """Make glibc return large freed blocks (>= 1 MiB) to the OS at once.

    glibc raises its mmap threshold each time a large block is freed, after which blocks of
    up to 32 MiB come from per-thread heaps that fragment: with two decoding threads the
    process keeps 300-600 MB of freed temporaries (loading the model leaves the heap fragmented
    too, so call this before loading). A fixed threshold keeps peak RSS near weights + KV
    cache + 100 MB. Process-wide and harmless; a no-op off glibc.
    """
    global _MMAP_THRESHOLD_SET
    if _MMAP_THRESHOLD_SET or not sys.platform.startswith("linux"):
        return
    _MMAP_THRESHOLD_SET = True
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


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
