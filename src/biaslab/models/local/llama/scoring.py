"""Teacher-forced scoring on a :class:`~.engine.LlamaEngine`: log P(token | preceding) of every token
of many short texts, the log-likelihood path of the models the engine runs (:mod:`.architecture`).

A token's log-probability comes from the hidden state of the token before it, so a text's last
token is never run through the model, and texts that start alike share the hidden states of
their common beginning. The distinct texts of a call are sorted and packed into *forests* of at
most ``pack_tokens`` tokens: a pack is the prefix tree (trie) of its texts' input tokens (all
but the last), each tree token at its position in its texts, attending to its ancestors and
itself only (a tree-shaped causal mask). A forward pass takes a batch of packs, about
``batch_tokens`` tree tokens: the matrix products run on those tokens alone, one after another
(no padding, no key/value store, one pass per batch); only attention lays them out pack by pack,
padded to the batch's widest pack. Templated benchmarks share a lot: the 800 sentences of 400
WinoSemitism pairs ("I don’t like him because he is a Jew and he ...") have 12,874 input tokens
and 7,150 tree tokens in packs of 128. The LM head is applied to tree tokens only, in chunks of at
most :data:`HEAD_ROWS` rows (fewer for a large vocabulary: :data:`HEAD_LOGITS_BYTES`)
(:meth:`~.decoder.Decoder.head`). On CPU every product goes through oneDNN's linear
(:func:`~.decoder._pick_linear`).

The attention within a pack costs ``pack_tokens`` squared, partly wasted on other texts' tokens;
at 128 it is about 5 % of the time with SmolLM2. A text longer than ``pack_tokens`` gets a pack
of its own length.

On CPU, ``workers`` loops, each in its own Python thread with one torch thread (and one BLAS
thread), take batches from a queue (as for generation: a 2-thread torch slows down several-fold
as soon as another process competes for a core; independent loops do not). While scoring,
freed temporaries stay in the process heap (:func:`.runtime.reuse_heap_blocks`): fresh
pages for every intermediate cost about 20 % of the time. Values match the transformers
forward pass up to float32 noise (checked in the tests); which texts share a pack or a batch can
move a value's last bits.

:class:`PackedScorer` is given the engine and runs its weights and shared math (the decoder layer's
projections and norms, RoPE, the LM head) in its own forward pass over the packs
(:meth:`PackedScorer._forest_forward`); a sliding-window layer's mask also hides the ancestors that
are ``sliding_window`` or more positions back.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from biaslab.models.local.llama.runtime import ROW_MULTIPLE, reuse_heap_blocks, run_workers

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from biaslab.models.local.llama.decoder import Decoder

OnScored = Callable[[int, list[float], list[bool]], None]  # (text index, logprobs and is-argmax of tokens 1..n-1)
PACK_TOKENS = 128  # tree tokens per pack (a longer text gets a pack of its own length)
BATCH_TOKENS = 512  # tree tokens per forward pass (or one pack)
MIN_BATCH_TOKENS = 32  # the smallest a batch shrinks to at the end of a call (see _batches)
HEAD_ROWS = 256  # rows per LM-head product at most (256 x vocab logits: 50 MB for SmolLM2)
HEAD_LOGITS_BYTES = 64 << 20  # and at most this many bytes of logits (Gemma 3's 262,144 tokens: 64 rows)
_Scored = list[tuple[int, list[float], list[bool]]]


@dataclass(eq=False)
class _Pack:
    """The prefix tree of some texts' input tokens; tree tokens are numbered in insertion order
    (a parent always before its children)."""

    tokens: list[int] = field(default_factory=list)
    pos: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)  # -1 for a root
    texts: list[tuple[int, list[int]]] = field(default_factory=list)  # (text, tree token of each input position)
    _child: dict[tuple[int, int], int] = field(default_factory=dict)  # (parent, token id) -> tree token

    def __len__(self) -> int:
        return len(self.tokens)

    def new_tokens(self, ids: Sequence[int]) -> int:
        """How many tree tokens adding ``ids`` would create."""
        node = -1
        for p, t in enumerate(ids):
            node = self._child.get((node, t), -2)
            if node == -2:
                return len(ids) - p
        return 0

    def add(self, text: int, ids: Sequence[int]) -> None:
        node, path = -1, []
        for p, t in enumerate(ids):
            nxt = self._child.get((node, t))
            if nxt is None:
                nxt = self._child[(node, t)] = len(self.tokens)
                self.tokens.append(t)
                self.pos.append(p)
                self.parent.append(node)
            node = nxt
            path.append(nxt)
        self.texts.append((text, path))

    def mask(self, width: int) -> np.ndarray:
        """[width, width] booleans: row j is True at j's ancestors and j (padding rows: at themselves)."""
        m = np.zeros((width, width), dtype=bool)
        for j, par in enumerate(self.parent):
            if par >= 0:
                m[j] = m[par]
            m[j, j] = True
        idx = np.arange(len(self), width)
        m[idx, idx] = True
        return m


def _packs(inputs: dict[int, list[int]], pack_tokens: int) -> list[_Pack]:
    """Texts (index -> input tokens), sorted by their tokens, filled into packs in that order."""
    packs: list[_Pack] = []
    cur = _Pack()
    for i in sorted(inputs, key=lambda i: inputs[i]):
        ids = inputs[i]
        if cur.texts and len(cur) + cur.new_tokens(ids) > max(pack_tokens, len(ids)):
            packs.append(cur)
            cur = _Pack()
        cur.add(i, ids)
    if cur.texts:
        packs.append(cur)
    return packs


def _batches(packs: list[_Pack], batch_tokens: int, workers: int = 1) -> list[list[_Pack]]:
    """Packs of similar size together (little padding for attention), at most ``batch_tokens``
    tree tokens per batch (or one pack), in the order the workers take them. The last batches
    shrink: a batch holds at most the tokens still to place divided by ``workers`` (down to
    :data:`MIN_BATCH_TOKENS`), so the workers finish close together instead of one of them
    running a whole batch alone at the end (and a small call is shared among all workers)."""
    out: list[list[_Pack]] = []
    cur: list[_Pack] = []
    size = cap = 0
    remaining = sum(len(p) for p in packs)
    for pack in sorted(packs, key=len, reverse=True):
        if cur and size + len(pack) > cap:
            out.append(cur)
            cur, size = [], 0
        if not cur:
            cap = min(batch_tokens, max(-(-remaining // max(1, workers)), MIN_BATCH_TOKENS))
        cur.append(pack)
        size += len(pack)
        remaining -= len(pack)
    if cur:
        out.append(cur)
    return out


@contextmanager
def _blas_threads(n: int | None) -> Iterator[None]:
    """numpy's BLAS (the LM head where oneDNN's linear is not available, :meth:`~.decoder.Decoder.head`)
    at ``n`` threads for the duration (None: as it is)."""
    if n is None:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - comes with scikit-learn
        yield
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield


class PackedScorer:
    """Scoring on ``engine``'s weights: the distinct texts of a call in packed prefix trees."""

    def __init__(self, engine: Decoder) -> None:
        self.engine = engine

    def score(
        self,
        texts: Sequence[list[int]],
        on_scored: OnScored,
        *,
        batch_tokens: int = BATCH_TOKENS,
        workers: int | None = None,
        pack_tokens: int = PACK_TOKENS,
        skip: Collection[int] = (),
    ) -> None:
        """Score every text (token ids, the first one being BOS); ``on_scored`` is called in this thread.

        ``skip``: texts whose scores are known (a resumed call). The packs, the batches and the number of workers
        are those of the whole call, and only the batches holding another text run, so that every text gets the
        bits an uninterrupted call gives it (which texts share a pack or a batch moves a value's last bits); the
        known texts in those batches are scored too."""
        firsts: dict[tuple[int, ...], int] = {}  # distinct texts: the first index of each
        same: dict[int, list[int]] = {}
        for i, ids in enumerate(texts):
            if len(ids) < 2:
                on_scored(i, [], [])
                continue
            k = firsts.setdefault(tuple(ids), i)
            same.setdefault(k, []).append(i)
        if not same:
            return
        packs = _packs({k: list(texts[k][:-1]) for k in same}, pack_tokens)
        if workers is None:
            workers = torch.get_num_threads() if self.engine.device.type == "cpu" else 1
        batches = _batches(packs, batch_tokens, workers)
        workers = max(1, min(workers, len(batches)))
        if skip:
            known = frozenset(skip)
            batches = [b for b in batches if any(not known.issuperset(same[k]) for p in b for k, _ in p.texts)]

        def handle(item: _Scored) -> None:
            for k, lp, greedy in item:
                for i in same[k]:
                    on_scored(i, lp, greedy)

        on_cpu = self.engine.device.type == "cpu"
        with reuse_heap_blocks(on_cpu), _blas_threads(1 if workers > 1 else None):
            if workers == 1:
                with torch.inference_mode():
                    for batch in batches:
                        handle(self._score_batch(texts, batch))
                return
            todo: queue.Queue = queue.Queue()
            for batch in batches:
                todo.put(batch)
            stop = threading.Event()

            def work(emit: Callable[[object], None]) -> None:
                while not stop.is_set():
                    try:
                        batch = todo.get_nowait()
                    except queue.Empty:
                        return
                    emit(self._score_batch(texts, batch))

            run_workers(workers, work, handle, stop, name="biaslab-score")

    def _score_batch(self, texts: Sequence[list[int]], packs: list[_Pack]) -> _Scored:
        """One forward pass over ``packs``; the log-probabilities of their texts' tokens 1..n-1."""
        engine = self.engine
        t0 = time.perf_counter()
        dev = engine.device
        width = max(len(p) for p in packs)
        offsets = np.cumsum([0] + [len(p) for p in packs]).tolist()  # each pack's first tree token
        tokens = torch.tensor([t for p in packs for t in p.tokens], dtype=torch.long)
        pos = torch.tensor([q for p in packs for q in p.pos], dtype=torch.long)
        slots = torch.tensor([b * width + j for b, p in enumerate(packs) for j in range(len(p))], dtype=torch.long)
        mask = torch.from_numpy(np.stack([p.mask(width) for p in packs]))
        hidden = self._forest_forward(tokens.to(dev), pos.to(dev), slots.to(dev), mask.to(dev))
        # every tree token is one head row; one (row, target) entry per distinct next token
        entries: dict[tuple[int, int], int] = {}
        owned: list[tuple[int, list[int]]] = []  # (text, its entry at each position)
        for b, pack in enumerate(packs):
            for k, path in pack.texts:
                ids = texts[k]
                owned.append(
                    (
                        k,
                        [
                            entries.setdefault((offsets[b] + node, ids[p + 1]), len(entries))
                            for p, node in enumerate(path)
                        ],
                    )
                )
        rows = head_rows(engine.lm_head.shape[0])
        ent_row = torch.tensor([r for r, _ in entries], dtype=torch.long)
        ent_tgt = torch.tensor([t for _, t in entries], dtype=torch.long)
        order = torch.argsort(ent_row)  # the entries of each chunk of rows, together
        bounds = torch.searchsorted(ent_row[order], torch.arange(0, len(tokens) + rows, rows)).tolist()
        lp = torch.empty(len(entries))
        top = torch.empty(len(entries), dtype=torch.bool)
        for c, s in enumerate(range(0, len(tokens), rows)):
            hn = engine.rms(hidden[s : s + rows], engine.norm)
            sel = order[bounds[c] : bounds[c + 1]]
            r = (ent_row[sel] - s).to(dev)
            t = ent_tgt[sel].to(dev)
            if engine.reduced_head is not None:  # precision=bf16 (.precision.ReducedHead)
                got, is_top = engine.reduced_head.logprobs(hn, r, t)
                lp[sel], top[sel] = got.cpu(), is_top.cpu()
                continue
            logits = engine.head(hn)
            picked = logits[r, t]
            most, best = logits.max(dim=-1)  # one pass for the argmax and the log-normaliser's shift
            lse = most + logits.sub_(most[:, None]).exp_().sum(dim=-1).log()
            lp[sel] = (picked - lse[r]).cpu()
            top[sel] = (best[r] == t).cpu()
        lps, tops = lp.tolist(), top.tolist()
        out: _Scored = [(k, [lps[e] for e in at], [tops[e] for e in at]) for k, at in owned]
        engine.record(score_s=time.perf_counter() - t0, score_tokens=len(tokens))
        return out

    def _forest_forward(
        self, tokens: torch.Tensor, pos: torch.Tensor, slots: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Hidden states [N, hidden] (before the final norm) of the tree tokens of P packs, one pack
        after another (``tokens`` and ``pos`` [N]). The matrix products take the N rows as they
        are; attention puts them in a padded [P, W] layout (``slots``: each token's place
        ``b * W + j``), where token j of pack b attends to the tokens that ``mask[b, j]`` marks."""
        engine = self.engine
        N = tokens.shape[0]
        P, W = mask.shape[0], mask.shape[1]
        H, KV, D, G = engine.n_heads, engine.n_kv, engine.head_dim, engine.group
        x = engine.embed_tokens(tokens)[None]  # [1, N, hidden]
        ropes = engine.rope_tables(pos[None])
        slot_pos = pos.new_zeros(P * W).index_copy_(0, slots, pos).view(P, W)  # padding: position 0, itself only
        # query layout [P, KV, G*W, D] (GQA without copying keys): row (g, j) uses mask[j]
        masks = {
            w: m[:, None, None].expand(P, 1, G, W, W).reshape(P, 1, G * W, W)
            for w, m in engine.attention_masks(mask, slot_pos, slot_pos, int(pos.max())).items()
        }
        linear = engine.linear
        for li in range(len(engine.layers)):
            q, k, v = engine.attention_inputs(li, x, linear, ropes)
            qp, kp, vp = (t.new_zeros(P * W, t.numel() // N).index_copy_(0, slots, t.reshape(N, -1)) for t in (q, k, v))
            qg = qp.view(P, W, KV, G, D).permute(0, 2, 3, 1, 4).reshape(P, KV, G * W, D)
            att = F.scaled_dot_product_attention(
                qg,
                kp.view(P, W, KV, D).transpose(1, 2),
                vp.view(P, W, KV, D).transpose(1, 2),
                attn_mask=masks[engine.arch.layer_window[li]],
                scale=engine.arch.attn_scale,
            )
            att = att.view(P, KV, G, W, D).permute(0, 3, 1, 2, 4).reshape(P * W, H * D)[slots][None]
            x = engine.attention_output(li, x, att, linear)
        return x[0]


def head_rows(vocab: int) -> int:
    """Rows per LM-head product: :data:`HEAD_ROWS`, fewer (whole blocks of ROW_MULTIPLE) for a large vocabulary."""
    fit = HEAD_LOGITS_BYTES // (4 * max(vocab, 1)) // ROW_MULTIPLE * ROW_MULTIPLE
    return max(ROW_MULTIPLE, min(HEAD_ROWS, fit))
