"""Teacher-forced scoring for :class:`.llama_engine.LlamaEngine` (a mixin): log P(token | preceding) of
every token of many short texts, the log-likelihood path of Llama-architecture models.

Texts that start alike are computed once up to where they part. The texts of a call are sorted
and cut into chunks; each chunk becomes a compressed prefix tree (a node is a run of tokens
shared by all the texts below it), computed level by level: all the nodes of a level in a few
batched passes (grouped by similar length), each node's tokens attending to its ancestors' keys
and values, which every pass writes to a per-chunk store (one row per tree token: about 46 KB
per token for SmolLM2, so a chunk of at most 8 x ``batch_tokens`` text tokens stays under ~400 MB).
A benchmark of templated sentences (WinoSemitism: "I don’t like him because he is a Jew and he
...") has 1.8 times fewer distinct prefixes than tokens on 400 pairs and 3.2 times fewer on all of
H-WS. The LM head is applied only at real positions, in chunks. A token's log-probability comes
from the hidden state before it: within a node from its own positions, for a node's first token
from its parent's last position.

On CPU, ``workers`` loops, each in its own Python thread with one torch thread, share the work:
whole trees when there are at least as many as workers, else the batches of each level of a tree
(as for generation: a 2-thread torch slows down several-fold as soon as another process competes
for a core; independent loops do not). Values match the transformers forward pass up
to float32 noise (checked in the tests).
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

import torch.nn.functional as F

from .llama_parts import run_workers

OnScored = Callable[[int, list[float], list[bool]], None]  # (text index, logprobs and is-argmax of tokens 1..n-1)
HEAD_CHUNK = 256  # positions per LM-head product
CHUNK_FACTOR = 8  # texts x length per prefix tree: 8 x batch_tokens (the key/value store: ~46 KB per tree token)


@dataclass(eq=False)
class _Node:
    start: int  # position of the node's first token
    tokens: list[int]
    parent: "_Node | None"
    children: dict[int, "_Node"] = field(default_factory=dict)
    texts: list[int] = field(default_factory=list)  # the texts that end with this node
    own: list[tuple[float, bool]] = field(default_factory=list)  # tokens 2.. of the node
    next_lp: dict[int, tuple[float, bool]] = field(default_factory=dict)  # each child's first token
    base: int = 0  # row of its first token in the key/value store
    context: list[int] = field(default_factory=list)  # store rows of its ancestors' tokens

    @property
    def end(self) -> int:
        return self.start + len(self.tokens)


def _tree(texts: Sequence[list[int]]) -> tuple[list[_Node], dict[int, _Node]]:
    """Compressed prefix tree of distinct ``texts`` (all starting with the same BOS), short nodes folded
    into their children: (top nodes, text -> its end node)."""
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
    tops = _collapse(root)
    ends: dict[int, _Node] = {}
    stack = list(tops)
    while stack:
        node = stack.pop()
        ends.update((i, node) for i in node.texts)
        stack += node.children.values()
    return tops, ends


def _collapse(root: _Node, max_extra: int = 2) -> list[_Node]:
    """Fold short nodes into their children when that costs at most ``max_extra`` repeated tokens;
    returns the top nodes (the root, or its children when it was folded).

    Every level of the tree is one more batched pass; a node of one or two tokens with few
    children ("<BOS>", " is") is cheaper computed again in each child than waited for. After
    folding, siblings may start with the same token (children are then keyed by identity).
    """
    def fold(node: _Node) -> bool:
        return not node.texts and bool(node.children) and len(node.tokens) * (len(node.children) - 1) <= max_extra

    tops = [root]
    stack = [root]
    while stack:
        node = stack.pop()
        kids = list(node.children.values())
        if fold(node):
            for kid in kids:
                kid.tokens, kid.start, kid.parent = node.tokens + kid.tokens, node.start, node.parent
            if node.parent is None:
                tops = [t for t in tops if t is not node] + kids
            else:
                node.parent.children = {k: v for k, v in node.parent.children.items() if v is not node}
                node.parent.children.update((id(kid), kid) for kid in kids)
        stack += kids
    return tops


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
        by_bos: dict[int, list[int]] = {}
        for i in sorted(live, key=lambda i: texts[i]):
            by_bos.setdefault(texts[i][0], []).append(i)
        budget = max(batch_tokens, 64) * CHUNK_FACTOR
        if workers is None:
            workers = torch.get_num_threads() if self.device.type == "cpu" else 1  # type: ignore[attr-defined]
        workers = max(1, workers)
        chunks: list[list[int]] = []
        for idx in by_bos.values():
            cur: list[int] = []
            for i in idx:
                if cur and (len(cur) + 1) * max(len(texts[cur[-1]]), len(texts[i])) > budget:
                    chunks.append(cur)
                    cur = []
                cur.append(i)
            if cur:
                chunks.append(cur)

        def handle(item: list[tuple[int, list[float], list[bool]]]) -> None:
            for j, lp, greedy in item:
                on_scored(j, lp, greedy)

        if workers == 1 or len(chunks) < workers:  # few trees: the workers share each level
            for chunk in chunks:
                handle(self._score_chunk(texts, chunk, batch_tokens, workers))
            return
        todo: queue.Queue = queue.Queue()  # many trees: one per worker at a time
        for chunk in chunks:
            todo.put(chunk)
        stop = threading.Event()

        def work(emit: Callable[[object], None]) -> None:
            while not stop.is_set():
                try:
                    chunk = todo.get_nowait()
                except queue.Empty:
                    return
                emit(self._score_chunk(texts, chunk, batch_tokens, 1))

        run_workers(workers, work, handle, stop, name="biaslab-score")  # type: ignore[arg-type]

    def _score_chunk(self, texts: Sequence[list[int]], chunk: list[int], batch_tokens: int,
                     workers: int) -> list[tuple[int, list[float], list[bool]]]:
        t0 = time.perf_counter()
        distinct = list(dict.fromkeys(tuple(texts[i]) for i in chunk))
        tops, ends = _tree([list(t) for t in distinct])
        levels, total = [tops], 0
        while levels[-1]:
            for n in levels[-1]:  # every tree token gets a row of the key/value store
                n.base, total = total, total + len(n.tokens)
                n.context = [] if n.parent is None else n.parent.context + list(
                    range(n.parent.base, n.parent.base + len(n.parent.tokens)))
            levels.append([c for n in levels[-1] for c in n.children.values()])
        shape = (total + 1, self.n_kv, self.head_dim)  # type: ignore[attr-defined]  # + a row for padding
        store = [(torch.zeros(shape, dtype=self.dtype, device=self.device),  # type: ignore[attr-defined]
                  torch.zeros(shape, dtype=self.dtype, device=self.device)) for _ in self.layers]  # type: ignore[attr-defined]
        for level in levels[:-1]:
            size = sum(len(n.tokens) for n in level)
            batches = _batches(level, max(64, min(batch_tokens, -(-size // workers))))
            self._run_level(batches, store, total, workers)
        self._record(score_s=time.perf_counter() - t0, score_tokens=total)  # type: ignore[attr-defined]
        by_text = {t: self._collect(ends[k]) for k, t in enumerate(distinct)}
        return [(i, *by_text[tuple(texts[i])]) for i in chunk]

    def _run_level(self, batches: list[list[_Node]], store: list[tuple[torch.Tensor, torch.Tensor]], pad_row: int,
                   workers: int) -> None:
        """The batches of one level, shared by ``workers`` single-threaded loops (they write disjoint rows)."""
        if workers == 1 or len(batches) == 1:
            with torch.inference_mode():
                for batch in batches:
                    self._run_nodes(batch, store, pad_row)
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
                self._run_nodes(batch, store, pad_row)

        run_workers(min(workers, len(batches)), work, lambda item: None, stop, name="biaslab-score")

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

    def _run_nodes(self, nodes: list[_Node], store: list[tuple[torch.Tensor, torch.Tensor]], pad_row: int) -> None:
        """One batched pass over ``nodes``' own tokens, attending to their ancestors' stored keys/values."""
        dev = self.device  # type: ignore[attr-defined]
        B, T = len(nodes), max(len(n.tokens) for n in nodes)
        C = max(len(n.context) for n in nodes)
        tokens = torch.zeros(B, T, dtype=torch.long)
        pos = torch.zeros(B, T, dtype=torch.long)
        rows_new = torch.full((B, T), pad_row, dtype=torch.long)
        ctx = torch.full((B, C), pad_row, dtype=torch.long)
        ctx_ok = torch.zeros(B, C, dtype=torch.bool)
        rows, cols, targets, owners = [], [], [], []
        for r, n in enumerate(nodes):
            k = len(n.tokens)
            tokens[r, :k] = torch.tensor(n.tokens)
            pos[r] = n.start + torch.arange(T)
            rows_new[r, :k] = torch.arange(n.base, n.base + k)
            ctx[r, : len(n.context)] = torch.tensor(n.context, dtype=torch.long)
            ctx_ok[r, : len(n.context)] = True
            for t in range(k - 1):  # the node's own next tokens
                rows.append(r), cols.append(t), targets.append(n.tokens[t + 1]), owners.append((n, None))
            for first in {c.tokens[0] for c in n.children.values()}:  # children's first tokens, at the last position
                rows.append(r), cols.append(k - 1), targets.append(first), owners.append((n, first))
        hidden = self._tree_forward(tokens.to(dev), pos.to(dev), rows_new.to(dev), ctx.to(dev), ctx_ok.to(dev), store)
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

    def _tree_forward(self, tokens: torch.Tensor, pos: torch.Tensor, rows_new: torch.Tensor, ctx: torch.Tensor,
                      ctx_ok: torch.Tensor, store: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        """Final-norm hidden states [B, T, hidden] of ``tokens`` at ``pos``; each row attends to its
        context (store rows ``ctx`` where ``ctx_ok``) and causally to its own tokens, whose keys and
        values are written to store rows ``rows_new``."""
        B, T = tokens.shape
        C = ctx.shape[1]
        H, KV, D, G = self.n_heads, self.n_kv, self.head_dim, self.group  # type: ignore[attr-defined]
        x = F.embedding(tokens, self.embed)  # type: ignore[attr-defined]
        cos, sin = self._rope(pos)  # type: ignore[attr-defined]
        causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()
        mask = torch.cat([ctx_ok[:, None, :].expand(B, T, C), causal[None].expand(B, T, T)], dim=-1)
        mask = mask[:, None, None].expand(B, 1, G, T, C + T).reshape(B, 1, G * T, C + T)
        for layer, (sk, sv) in zip(self.layers, store):  # type: ignore[attr-defined]
            h = self._rms(x, layer.ln1)  # type: ignore[attr-defined]
            q, k, v = self._linear(h, layer.wqkv).split([H * D, KV * D, KV * D], dim=-1)  # type: ignore[attr-defined]
            q = self._apply_rope(q.view(B, T, H, D), cos, sin)  # type: ignore[attr-defined]
            k = self._apply_rope(k.view(B, T, KV, D), cos, sin)  # type: ignore[attr-defined]
            v = v.view(B, T, KV, D)
            sk[rows_new] = k.to(sk.dtype)
            sv[rows_new] = v.to(sv.dtype)
            keys = torch.cat([sk[ctx], k], dim=1).transpose(1, 2)  # [B, KV, C + T, D]
            vals = torch.cat([sv[ctx], v], dim=1).transpose(1, 2)
            qg = q.view(B, T, KV, G, D).permute(0, 2, 3, 1, 4).reshape(B, KV, G * T, D)
            att = F.scaled_dot_product_attention(qg, keys, vals, attn_mask=mask)
            att = att.view(B, KV, G, T, D).permute(0, 3, 1, 2, 4).reshape(B, T, H * D)
            x = x + self._linear(att, layer.wo)  # type: ignore[attr-defined]
            gate, up = self._linear(self._rms(x, layer.ln2), layer.wgu).chunk(2, dim=-1)  # type: ignore[attr-defined]
            x = x + self._linear(F.silu(gate) * up, layer.wdown)  # type: ignore[attr-defined]
        return self._rms(x, self.norm)  # type: ignore[attr-defined]


def _batches(nodes: list[_Node], batch_tokens: int) -> list[list[_Node]]:
    """Nodes of one level grouped by similar length, about ``batch_tokens`` padded tokens per batch."""
    out: list[list[_Node]] = []
    cur: list[_Node] = []
    for n in sorted(nodes, key=lambda n: -len(n.tokens)):
        if cur and ((len(cur) + 1) * len(cur[0].tokens) > batch_tokens or len(n.tokens) < 0.85 * len(cur[0].tokens)):
            out.append(cur)
            cur = []
        cur.append(n)
    if cur:
        out.append(cur)
    return out
