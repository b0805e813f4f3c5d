"""Continuous batching on a :class:`~.engine.LlamaEngine`: slots, the queue, prefill and decode steps.

:meth:`ContinuousBatcher.generate` sizes the slots from the KV budget, starts one decoding
loop per worker and hands each finished request to ``on_finish``; each loop refills free
slots from the shared queue, prefills them (copying the keys/values of the prompt prefix all
requests share) and decodes one token for all busy slots per step. The batcher is given the
engine and runs its decoder (:meth:`~.decoder.Decoder.forward`) over a :class:`.kv_cache.KVCache`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from biaslab.models.local.llama.kv_cache import KVCache
from biaslab.models.local.llama.runtime import (
    ROW_MULTIPLE,
    limit_heap_retention,
    round_up,
    run_workers,
    single_threaded,
)
from biaslab.models.local.sampling import Decoding, RowRandom, sample_rows

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from biaslab.models.local.llama.decoder import Decoder

MAX_SLOTS = 48  # concurrent requests at most
KV_BUDGET_BYTES = 720 << 20  # about this much memory for the KV cache (fewer slots for long requests)
# A decoding step of at most this many rows runs on one torch thread (laid-out weights only, whose rows are checked
# to give the same numbers on any thread count): reading the weights for so few rows is bound by memory, which a
# second thread woken for every product does not speed up. SmolLM2, 2 cores, 100 new tokens per request, one
# decoding loop: 1 request 14.0 tok/s on one thread against 13.1 on two; 4 requests 47.5 against 43.1; 8 requests
# 55.0 against 69.9.
FEW_ROWS = 4


@dataclass
class _Row:
    index: int  # request index
    decoding: Decoding
    rng: RowRandom
    pos: int  # prompt length: the first generated token sits at this position
    max_new: int
    tokens: list[int] = field(default_factory=list)


OnFinish = Callable[[int, list[int], str, int], None]  # (request index, new tokens, finish reason, n_prompt)


class ContinuousBatcher:
    """Generation on ``engine``'s weights: slots of a KV cache kept full from a queue of requests."""

    def __init__(self, engine: Decoder) -> None:
        self.engine = engine

    # -- scheduling -------------------------------------------------------------------------
    def generate(
        self,
        prompts: Sequence[list[int]],
        decodings: Sequence[Decoding],
        stop_ids: set[int],
        on_finish: OnFinish,
        *,
        max_slots: int = MAX_SLOTS,
        kv_budget_bytes: int = KV_BUDGET_BYTES,
        workers: int | None = None,
    ) -> None:
        """Generate for all prompts, calling ``on_finish`` (in this thread) as each request completes.

        ``workers`` (default: torch's CPU thread count, on CPU) independent decoding loops
        share the slots and the queue of waiting requests; each runs in its own Python thread
        with one torch thread. Independent single-threaded loops keep both cores busy without
        the per-operation thread synchronisation of a 2-thread torch, which collapses (5-10x
        slower) as soon as another process competes for a core.
        """
        engine = self.engine
        n = len(prompts)
        if n == 0:
            return
        max_new = []
        for p, dec in zip(prompts, decodings):
            if not p:
                raise ValueError("empty prompt")
            max_new.append(max(0, min(dec.max_tokens, engine.max_positions - len(p))))
        pending: deque[int] = deque()
        for i in range(n):
            if max_new[i] == 0:
                on_finish(i, [], "length", len(prompts[i]))
            else:
                pending.append(i)
        if not pending:
            return
        cap = round_up(max(len(prompts[i]) + max_new[i] for i in pending), ROW_MULTIPLE)
        per_slot = cap * KVCache.bytes_per_token(engine, engine.dtype)
        total = max(1, min(max_slots, len(pending), kv_budget_bytes // max(per_slot, 1)))
        if workers is None:
            workers = torch.get_num_threads() if engine.device.type == "cpu" else 1
        workers = max(1, min(workers, total // ROW_MULTIPLE))
        # slots per worker: the nearest multiple of ROW_MULTIPLE (so the budget is approximate)
        width = max(ROW_MULTIPLE, (total // workers + ROW_MULTIPLE // 2) // ROW_MULTIPLE * ROW_MULTIPLE)
        if width * workers > max_slots and width > ROW_MULTIPLE:
            width -= ROW_MULTIPLE
        # Requests of equal length finish in waves: size the slots so the last wave is not a
        # nearly empty batch (64 requests on 48 slots would run 48, then 16 at a third of the speed).
        waves = -(-len(pending) // (width * workers))
        width = min(width, round_up(-(-len(pending) // (workers * waves)), ROW_MULTIPLE))
        n_prefix = _shared_prefix(prompts, pending)
        job = _Job(prompts, decodings, max_new, stop_ids, pending, cap, width, list(prompts[pending[0]][:n_prefix]))
        limit_heap_retention()
        if workers == 1:
            self._run_slots(job, lambda *item: on_finish(*item))
            return
        run_workers(
            workers,
            lambda emit: self._run_slots(job, lambda *item: emit(item)),
            lambda item: on_finish(*item),
            job.stop,
            name="biaslab-decode",
        )

    def _run_slots(self, job: _Job, emit: OnFinish) -> None:
        """One decoding loop: ``job.width`` slots fed from the shared queue until it is empty."""
        cache = KVCache(self.engine, job.width, job.cap, self.engine.dtype)
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
            rm = self.engine.row_multiple  # a step computes whole blocks of this many rows (1: laid-out weights)
            if not job.pending and round_up(len(active), rm) < round_up(max(active) + 1, rm):
                self._compact(slots, cache)
                active = list(range(len(active)))
            self._decode_step(slots, round_up(max(active) + 1, rm), cache, job, emit)

    def _finish_or_keep(self, s: int, slots: list[_Row | None], token: int, job: _Job, emit: OnFinish) -> None:
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

    def _prefix_kv(self, job: _Job) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Keys/values of the prompt prefix that all requests share (computed once per loop)."""
        engine = self.engine
        n = len(job.prefix)
        scratch = KVCache(engine, 1, n, engine.dtype)
        ids = torch.tensor([job.prefix], dtype=torch.long)
        t0 = time.perf_counter()
        engine.forward(
            ids.to(engine.device),
            torch.arange(n, device=engine.device)[None],
            torch.zeros(1, dtype=torch.long, device=engine.device),
            scratch,
            n,
        )
        engine.record(prefill_s=time.perf_counter() - t0, prefill_tokens=n)
        return [k[0] for k in scratch.k], [v[0] for v in scratch.v]

    def _prefill(
        self,
        admitted: list[int],
        slots: list[_Row | None],
        job: _Job,
        cache: KVCache,
        emit: OnFinish,
        prefix: tuple[list[torch.Tensor], list[torch.Tensor]] | None = None,
    ) -> None:
        start = len(job.prefix) if prefix is not None else 0
        if prefix is not None:  # copy the shared prefix's keys/values into the new slots
            slot_t = torch.tensor(admitted, dtype=torch.long, device=self.engine.device)
            for layer_k, layer_v, pk, pv in zip(cache.k, cache.v, *prefix):
                layer_k[slot_t, :, :start] = pk
                layer_v[slot_t, :, :start] = pv
        for group in _length_groups(admitted, [len(job.prompts[r.index]) - start for r in _busy(slots, admitted)]):
            self._prefill_group(group, slots, job, cache, emit, start)

    def _prefill_group(
        self, admitted: list[int], slots: list[_Row | None], job: _Job, cache: KVCache, emit: OnFinish, start: int
    ) -> None:
        """Read the prompts of ``admitted`` (from token ``start`` on) in one forward pass, padded to the longest."""
        engine = self.engine
        rows = _busy(slots, admitted)
        slot_t = torch.tensor(admitted, dtype=torch.long, device=engine.device)
        lens = [len(job.prompts[r.index]) - start for r in rows]
        T = round_up(max(lens), ROW_MULTIPLE)  # rows * T: whole blocks (see ROW_MULTIPLE)
        tokens = torch.zeros(len(rows), T, dtype=torch.long)
        for j, r in enumerate(rows):
            tokens[j, : lens[j]] = torch.tensor(job.prompts[r.index][start:], dtype=torch.long)
        pos = start + torch.arange(T)[None, :].expand(len(rows), T)
        last = torch.tensor([n - 1 for n in lens])
        t0 = time.perf_counter()
        logits = engine.forward(
            tokens.to(engine.device), pos.to(engine.device), slot_t, cache, start + T, last=last.to(engine.device)
        )
        t1 = time.perf_counter()
        toks = self._sample(logits, rows)
        engine.record(prefill_s=t1 - t0, prefill_tokens=sum(lens), sample_s=time.perf_counter() - t1)
        for s, t in zip(admitted, toks):
            self._finish_or_keep(s, slots, t, job, emit)

    def _decode_step(self, slots: list[_Row | None], width: int, cache: KVCache, job: _Job, emit: OnFinish) -> None:
        engine = self.engine
        tokens = torch.zeros(width, 1, dtype=torch.long)
        pos = torch.zeros(width, 1, dtype=torch.long)
        live = [s for s in range(width) if slots[s] is not None]
        rows = _busy(slots, live)
        for s, r in zip(live, rows):
            tokens[s, 0] = r.tokens[-1]
            pos[s, 0] = r.pos + len(r.tokens) - 1
        attn_len = int(pos.max()) + 1
        t0 = time.perf_counter()
        with single_threaded(engine.row_multiple == 1 and width <= FEW_ROWS and engine.device.type == "cpu"):
            logits = engine.forward(
                tokens.to(engine.device),
                pos.to(engine.device),
                torch.arange(width, device=engine.device),
                cache.narrow(width),
                attn_len,
            )
        t1 = time.perf_counter()
        if len(live) < width:
            logits = logits[torch.tensor(live, device=logits.device)]
        toks = self._sample(logits, rows)
        engine.record(decode_s=t1 - t0, decode_steps=1, decode_rows=len(live), sample_s=time.perf_counter() - t1)
        for s, t in zip(live, toks):
            self._finish_or_keep(s, slots, t, job, emit)

    @staticmethod
    def _compact(slots: list[_Row | None], cache: KVCache) -> None:
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


def _busy(slots: list[_Row | None], indices: list[int]) -> list[_Row]:
    """The rows in ``slots[indices]``, which are all busy."""
    rows = []
    for s in indices:
        row = slots[s]
        assert row is not None
        rows.append(row)
    return rows


_MIN_PREFIX = 16
_PAD_SLACK = 32  # tokens of padding a prompt may carry in a group before it is read apart from longer ones


def _length_groups(slots: list[int], lengths: list[int]) -> list[list[int]]:
    """``slots`` split into groups of prompts of similar length (``lengths``, the tokens each has to read), to be
    read one group per forward pass: a pass pads every prompt to its longest, so a 4-token prompt read beside a
    600-token one would cost 600 tokens. A group's longest is at most twice its shortest plus ``_PAD_SLACK``."""
    order = sorted(range(len(slots)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    shortest = 0
    for i in order:
        if not groups or lengths[i] > 2 * shortest + _PAD_SLACK:
            groups.append([])
            shortest = lengths[i]
        groups[-1].append(slots[i])
    return groups


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
