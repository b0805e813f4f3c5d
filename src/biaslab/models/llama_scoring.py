"""Teacher-forced scoring for :class:`.llama_engine.LlamaEngine` (a mixin): log P(token | preceding) of
every token of many short texts, the log-likelihood path of Llama-architecture models.

* Texts are grouped by exact token length, so a batch has no padding at all, and cut into
  batches of about ``batch_tokens`` tokens.
* No KV cache: one causal pass over the whole text (SDPA with a causal mask, grouped-query
  attention without copying keys), the fused projections of the engine, and the LM head only at
  the positions that predict a token, in chunks (the [positions, vocabulary] logits of a whole
  batch would be hundreds of MB).
* On CPU the batches are shared by ``workers`` loops, each in its own Python thread with one
  torch thread (as for generation: a 2-thread torch slows down several-fold as soon as another
  process competes for a core, independent loops do not).

Values match the transformers forward pass up to float32 noise (checked in the tests).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Callable, Sequence

import torch
import torch.nn.functional as F

from .llama_parts import run_workers

OnScored = Callable[[int, list[float], list[bool]], None]  # (text index, logprobs and is-argmax of tokens 1..n-1)
HEAD_CHUNK = 256  # positions per LM-head product


class _Scoring:
    """The scoring half of LlamaEngine; attributes are set by LlamaEngine.__init__."""

    def score(self, texts: Sequence[list[int]], on_scored: OnScored, *, batch_tokens: int = 2048,
              workers: int | None = None) -> None:
        """Score every text (token ids, the first one being BOS); ``on_scored`` is called in this thread."""
        by_len: dict[int, list[int]] = {}
        for i, ids in enumerate(texts):
            if len(ids) < 2:
                on_scored(i, [], [])
            else:
                by_len.setdefault(len(ids), []).append(i)
        batches: list[list[int]] = []
        for n, idx in sorted(by_len.items()):
            rows = max(1, batch_tokens // n)
            batches += [idx[k:k + rows] for k in range(0, len(idx), rows)]
        if not batches:
            return
        if workers is None:
            workers = torch.get_num_threads() if self.device.type == "cpu" else 1  # type: ignore[attr-defined]
        workers = max(1, min(workers, len(batches)))
        todo: queue.Queue = queue.Queue()
        for b in sorted(batches, key=lambda b: -len(b) * len(texts[b[0]])):  # big first: even finish
            todo.put(b)
        if workers == 1:
            while not todo.empty():
                for i, lp, greedy in self._score_batch(texts, todo.get()):
                    on_scored(i, lp, greedy)
            return
        stop = threading.Event()

        def work(emit: Callable[[object], None]) -> None:
            while not stop.is_set():
                try:
                    batch = todo.get_nowait()
                except queue.Empty:
                    return
                emit(self._score_batch(texts, batch))

        def handle(item: object) -> None:
            for i, lp, greedy in item:  # type: ignore[attr-defined]
                on_scored(i, lp, greedy)

        run_workers(workers, work, handle, stop, name="biaslab-score")

    def _score_batch(self, texts: Sequence[list[int]], batch: list[int]) -> list[tuple[int, list[float], list[bool]]]:
        t0 = time.perf_counter()
        tokens = torch.tensor([texts[i] for i in batch], dtype=torch.long, device=self.device)  # type: ignore[attr-defined]
        hidden = self.hidden_states(tokens)[:, :-1]  # positions that predict a next token
        B, T1, H = hidden.shape
        flat = hidden.reshape(B * T1, H)
        targets = tokens[:, 1:].reshape(-1)
        out = torch.empty(B * T1, dtype=torch.float32)
        top = torch.empty(B * T1, dtype=torch.bool)
        for s in range(0, B * T1, HEAD_CHUNK):
            logits = self._linear(flat[s:s + HEAD_CHUNK], self.lm_head).float()  # type: ignore[attr-defined]
            lp = torch.log_softmax(logits, dim=-1)
            out[s:s + HEAD_CHUNK] = lp.gather(1, targets[s:s + HEAD_CHUNK, None])[:, 0].cpu()
            top[s:s + HEAD_CHUNK] = (logits.argmax(-1) == targets[s:s + HEAD_CHUNK]).cpu()
        self._record(score_s=time.perf_counter() - t0, score_tokens=B * (T1 + 1))  # type: ignore[attr-defined]
        return list(zip(batch, out.view(B, T1).tolist(), top.view(B, T1).tolist()))

    def hidden_states(self, tokens: torch.Tensor) -> torch.Tensor:
        """Final-norm hidden states [B, T, hidden] of a causal pass over ``tokens`` [B, T] (no cache)."""
        B, T = tokens.shape
        H, KV, D, G = self.n_heads, self.n_kv, self.head_dim, self.group  # type: ignore[attr-defined]
        x = F.embedding(tokens, self.embed)  # type: ignore[attr-defined]
        pos = torch.arange(T, device=tokens.device)[None].expand(B, T)
        cos, sin = self._rope(pos)  # type: ignore[attr-defined]
        causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()
        mask = causal.repeat(G, 1)[None, None]  # rows (g, t) of the grouped queries attend keys <= t
        for layer in self.layers:  # type: ignore[attr-defined]
            h = self._rms(x, layer.ln1)  # type: ignore[attr-defined]
            q, k, v = self._linear(h, layer.wqkv).split([H * D, KV * D, KV * D], dim=-1)  # type: ignore[attr-defined]
            q = self._apply_rope(q.view(B, T, H, D), cos, sin)  # type: ignore[attr-defined]
            k = self._apply_rope(k.view(B, T, KV, D), cos, sin).transpose(1, 2)  # type: ignore[attr-defined]
            v = v.view(B, T, KV, D).transpose(1, 2)
            qg = q.view(B, T, KV, G, D).permute(0, 2, 3, 1, 4).reshape(B, KV, G * T, D)
            att = F.scaled_dot_product_attention(qg, k, v, attn_mask=mask)
            att = att.view(B, KV, G, T, D).permute(0, 3, 1, 2, 4).reshape(B, T, H * D)
            x = x + self._linear(att, layer.wo)  # type: ignore[attr-defined]
            gate, up = self._linear(self._rms(x, layer.ln2), layer.wgu).chunk(2, dim=-1)  # type: ignore[attr-defined]
            x = x + self._linear(F.silu(gate) * up, layer.wdown)  # type: ignore[attr-defined]
        return self._rms(x, self.norm)  # type: ignore[attr-defined]
