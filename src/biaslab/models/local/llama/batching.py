"""Continuous batching for :class:`.llama_engine.LlamaEngine` (a mixin): slots, the queue, prefill and decode steps.

:meth:`_ContinuousBatching.generate` sizes the slots from the KV budget, starts one decoding
loop per worker and hands each finished request to ``on_finish``; each loop refills free
slots from the shared queue, prefills them (copying the keys/values of the prompt prefix all
requests share) and decodes one token for all busy slots per step.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from biaslab.models.local.llama.parts import ROW_MULTIPLE, KVCache, _round_up, limit_heap_retention, run_workers
from biaslab.models.local.sampling import Decoding, RowRandom, sample_rows


@dataclass
class _Row:
    index: int  # request index
    decoding: Decoding
    rng: RowRandom
    pos: int  # prompt length: the first generated token sits at this position
    max_new: int
    tokens: list[int] = field(default_factory=list)


OnFinish = Callable[[int, list[int], str, int], None]  # (request index, new tokens, finish reason, n_prompt)


class _ContinuousBatching:
    """The scheduling half of LlamaEngine; the attributes below are set by LlamaEngine.__init__."""

    max_positions: int
    device: torch.device
    dtype: torch.dtype
    stats: dict[str, float]
    _stats_lock: threading.Lock
    forward: Callable[..., torch.Tensor]

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
        run_workers(workers, lambda emit: self._run_slots(job, lambda *item: emit(item)),
                    lambda item: on_finish(*item), job.stop, name="biaslab-decode")

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
