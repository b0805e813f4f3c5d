"""Teacher-forced scoring for :class:`.llama_engine.LlamaEngine` (a mixin): log P(token | preceding) of
every token of many short texts, the log-likelihood path of Llama-architecture models.

Texts that start alike are computed once up to where they part. The texts of a call are sorted
and cut into chunks; each chunk becomes a compressed prefix tree (a node is a run of tokens
shared by all the texts below it). The tree is computed level by level, every node of a level
in one batched pass of the engine over its own tokens, attending to its ancestors' keys and
values (copied from the parent's cache row): a benchmark of templated sentences (WinoSemitism:
"I don’t like him because he is a Jew and he ...") has 1.8 times fewer distinct prefixes than
tokens on 400 pairs and 3.2 times fewer on all of H-WS. Within a level, nodes are batched by
similar length; the LM head is applied only at real positions, in chunks. A token's
log-probability comes from the hidden state before it: within a node from its own positions,
for a node's first token from its parent's last position.

On CPU the chunks are shared by ``workers`` loops, each in its own Python thread with one torch
thread (as for generation: a 2-thread torch slows down several-fold as soon as another process
competes for a core; independent loops do not). Values match the transformers forward pass up
to float32 noise (checked in the tests).
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from .llama_parts import KVCache, run_workers

OnScored = Callable[[int, list[float], list[bool]], None]  # (text index, logprobs and is-argmax of tokens 1..n-1)
HEAD_CHUNK = 256  # positions per LM-head product


@dataclass(eq=False)
class _Node:
    start: int  # position of the node's first token
    tokens: list[int]
    parent: "_Node | None"
    children: dict[int, "_Node"] = field(default_factory=dict)
    texts: list[int] = field(default_factory=list)  # the texts that end with this node
    own: list[tuple[float, bool]] = field(default_factory=list)  # tokens 2.. of the node
    next_lp: dict[int, tuple[float, bool]] = field(default_factory=dict)  # each child's first token

    @property
    def end(self) -> int:
        return self.start + len(self.tokens)


def _tree(texts: Sequence[list[int]]) -> tuple[_Node, dict[int, _Node]]:
    """Compressed prefix tree of distinct ``texts`` (all starting with the same BOS); text -> its end node."""
    root = _Node(0, list(texts[0][:1]), None)
    for i, ids in enumerate(texts):
        node, pos = root, len(root.tokens)
        while pos < len(ids):
            child = node.children.get(ids[pos])
            if child is None:
                child = node.children[ids[pos]] = _Node(pos, list(ids[pos:]), node)
                pos = len(ids)
                node = child
                break
            k = 0
            while k < len(child.tokens) and pos + k < len(ids) and child.tokens[k] == ids[pos + k]:
                k += 1
            if k < len(child.tokens):  # split the child where the text leaves it
                tail = _Node(child.start + k, child.tokens[k:], child, child.children, child.texts)
                for grand in tail.children.values():
                    grand.parent = tail
                child.tokens, child.children, child.texts = child.tokens[:k], {tail.tokens[0]: tail}, []
            node, pos = child, pos + k
        if pos < len(ids) or node.end != len(ids):  # pragma: no cover - tree invariant
            raise RuntimeError("prefix tree out of step with its text")
        node.texts.append(i)
    ends: dict[int, _Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        ends.update((i, node) for i in node.texts)
        stack += node.children.values()
    return root, ends


class _Scoring:
    """The scoring half of LlamaEngine; attributes are set by LlamaEngine.__init__."""

    def score(self, texts: Sequence[list[int]], on_scored: OnScored, *, batch_tokens: int = 1024,
              workers: int | None = None) -> None:
        """Score every text (token ids, the first one being BOS); ``on_scored`` is called in this thread."""
        live = []
        for i, ids in enumerate(texts):
            if len(ids) < 2:
                on_scored(i, [], [])
            else:
                live.append(i)
        if not live:
            return
        by_bos: dict[int, list[int]] = {}
        for i in sorted(live, key=lambda i: texts[i]):
            by_bos.setdefault(texts[i][0], []).append(i)
        chunks, budget = [], max(batch_tokens, 64) * 2  # texts x length per chunk: bounds the KV memory
        for idx in by_bos.values():
            cur: list[int] = []
            for i in idx:
                if cur and (len(cur) + 1) * max(len(texts[j]) for j in (*cur[-1:], i)) > budget:
                    chunks.append(cur)
                    cur = []
                cur.append(i)
            chunks.append(cur)
        if workers is None:
            workers = torch.get_num_threads() if self.device.type == "cpu" else 1  # type: ignore[attr-defined]
        workers = max(1, min(workers, len(chunks)))
        todo: queue.Queue = queue.Queue()
        for c in chunks:
            todo.put(c)

        def handle(item: list[tuple[int, list[float], list[bool]]]) -> None:
            for i, lp, greedy in item:
                on_scored(i, lp, greedy)

        if workers == 1:
            while not todo.empty():
                handle(self._score_chunk(texts, todo.get(), batch_tokens))
            return
        stop = threading.Event()

        def work(emit: Callable[[object], None]) -> None:
            while not stop.is_set():
                try:
                    chunk = todo.get_nowait()
                except queue.Empty:
                    return
                emit(self._score_chunk(texts, chunk, batch_tokens))

        run_workers(workers, work, handle, stop, name="biaslab-score")  # type: ignore[arg-type]

    def _score_chunk(self, texts: Sequence[list[int]], chunk: list[int],
                     batch_tokens: int) -> list[tuple[int, list[float], list[bool]]]:
        t0 = time.perf_counter()
        distinct = list(dict.fromkeys(tuple(texts[i]) for i in chunk))
        root, ends = _tree([list(t) for t in distinct])
        level, prev = [root], None
        computed = 0
        while level:
            cap = max(n.start for n in level) + max(len(n.tokens) for n in level)  # padded rows included
            cache = KVCache(self, len(level), cap, self.dtype)  # type: ignore[arg-type]
            slot = {id(n): k for k, n in enumerate(level)}
            if prev is not None:  # each node's slot starts with its parent's keys/values
                parents = torch.tensor([prev[1][id(n.parent)] for n in level], device=self.device)  # type: ignore[attr-defined]
                upto = max(n.start for n in level)
                for dst, src in zip(cache.k + cache.v, prev[0].k + prev[0].v):
                    dst[:, :, :upto] = src[parents, :, :upto]
            for batch in _batches(level, batch_tokens):
                self._run_nodes(batch, [slot[id(n)] for n in batch], cache)
                computed += sum(len(n.tokens) for n in batch)
            prev = (cache, slot)
            level = [c for n in level for c in n.children.values()]
        self._record(score_s=time.perf_counter() - t0, score_tokens=computed)  # type: ignore[attr-defined]
        by_text = {t: self._collect(ends[k]) for k, t in enumerate(distinct)}
        return [(i, *by_text[tuple(texts[i])]) for i in chunk]

    @staticmethod
    def _collect(node: _Node) -> tuple[list[float], list[bool]]:
        path = []
        while node is not None:
            path.append(node)
            node = node.parent  # type: ignore[assignment]
        values: list[tuple[float, bool]] = []
        for parent, child in zip(path[::-1], path[-2::-1]):
            values += parent.own
            values.append(parent.next_lp[child.tokens[0]])
        values += path[0].own
        return [v for v, _ in values], [g for _, g in values]

    def _run_nodes(self, nodes: list[_Node], slots: list[int], cache: KVCache) -> None:
        """One batched pass over ``nodes``' own tokens; fills their log-probabilities."""
        dev = self.device  # type: ignore[attr-defined]
        T = max(len(n.tokens) for n in nodes)
        tokens = torch.zeros(len(nodes), T, dtype=torch.long)
        pos = torch.zeros(len(nodes), T, dtype=torch.long)
        rows, cols, targets, owners = [], [], [], []
        for r, n in enumerate(nodes):
            tokens[r, : len(n.tokens)] = torch.tensor(n.tokens)
            pos[r] = n.start + torch.arange(T)
            for t in range(len(n.tokens) - 1):  # the node's own next tokens
                rows.append(r), cols.append(t), targets.append(n.tokens[t + 1]), owners.append((n, None))
            for first in n.children:  # each child's first token, predicted at the node's last position
                rows.append(r), cols.append(len(n.tokens) - 1), targets.append(first), owners.append((n, first))
        hidden = self.forward(tokens.to(dev), pos.to(dev), torch.tensor(slots, device=dev), cache,  # type: ignore[attr-defined]
                              int(pos.max()) + 1, all_positions=True)
        flat = hidden[torch.tensor(rows, device=dev), torch.tensor(cols, device=dev)] if rows else hidden[:0, 0]
        tgt = torch.tensor(targets, dtype=torch.long, device=dev)
        for s in range(0, len(rows), HEAD_CHUNK):
            logits = self._linear(flat[s:s + HEAD_CHUNK], self.lm_head).float()  # type: ignore[attr-defined]
            lp = torch.log_softmax(logits, dim=-1).gather(1, tgt[s:s + HEAD_CHUNK, None])[:, 0].tolist()
            top = (logits.argmax(-1) == tgt[s:s + HEAD_CHUNK]).tolist()
            for (n, first), v, g in zip(owners[s:s + HEAD_CHUNK], lp, top):
                if first is None:
                    n.own.append((v, g))
                else:
                    n.next_lp[first] = (v, g)


def _batches(nodes: list[_Node], batch_tokens: int) -> list[list[_Node]]:
    """Nodes of one level grouped by similar length, about ``batch_tokens`` padded tokens per batch."""
    out: list[list[_Node]] = []
    cur: list[_Node] = []
    for n in sorted(nodes, key=lambda n: -len(n.tokens)):
        if cur and (len(cur) + 1) * len(cur[0].tokens) > batch_tokens or (cur and len(n.tokens) * 2 < len(cur[0].tokens)):
            out.append(cur)
            cur = []
        cur.append(n)
    if cur:
        out.append(cur)
    return out
