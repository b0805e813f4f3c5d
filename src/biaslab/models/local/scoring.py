"""The local backend's log-likelihood half (:meth:`.backend.TransformersBackend.loglikelihood_rest`): the token ids
of context+continuation scored with the continuous-batching engine (packed prefix trees, :mod:`.llama.scoring`) or,
for the architectures it does not run, in length-sorted, left-padded static batches with explicit position ids
(only the continuation positions projected to the vocabulary)."""

from __future__ import annotations

from typing import Any

import torch

from biaslab.models.base import LoglikelihoodResult, OnResult
from biaslab.models.local.llama.engine import LlamaEngine

Encoded = list[tuple[list[int], int]]  # per request: context+continuation token ids, where the continuation starts


def score_with_engine(
    engine: LlamaEngine,
    tok: Any,
    encoded: Encoded,
    answered: frozenset[int],
    on_result: OnResult | None,
    *,
    batch_tokens: int,
    workers: int | None,
) -> list[LoglikelihoodResult | None]:
    """Scoring with the engine: packed prefix trees, one torch thread per worker (:mod:`.llama.scoring`)."""
    results: list[LoglikelihoodResult | None] = [None] * len(encoded)
    texts: dict[int, str] = {}  # token id -> its text (decoded once per call)

    def text(t: int) -> str:
        s = texts.get(t)
        if s is None:
            s = texts[t] = tok.decode([t])
        return s

    def done(i: int, logprobs: list[float], greedy: list[bool]) -> None:
        ids, n = encoded[i]
        cont = ids[n:]
        res = LoglikelihoodResult(
            logprobs[n - 1 :], [text(t) for t in cont], all(greedy[n - 1 :]), token_ids=list(cont)
        )
        results[i] = res
        if on_result is not None:
            on_result(i, res)

    with torch.inference_mode():
        engine.score([ids for ids, _ in encoded], done, batch_tokens=batch_tokens, workers=workers, skip=answered)
    return results


def score_static(
    model: Any,
    device: torch.device,
    tokenizer: Any,
    encoded: Encoded,
    answered: frozenset[int],
    on_result: OnResult | None,
    *,
    batch_size: int,
    logits_floats: int,
    pad_id: int,
) -> list[LoglikelihoodResult | None]:
    """Scoring with the model's forward pass, in length-sorted, left-padded batches of at most ``batch_size``
    rows whose continuation logits fit ``logits_floats``; a batch whose requests are all ``answered`` is skipped."""
    results: list[LoglikelihoodResult | None] = [None] * len(encoded)
    order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i][0]), i))
    vocab = model.get_output_embeddings().weight.shape[0]
    with torch.inference_mode():
        start = 0
        while start < len(order):
            width = len(encoded[order[start]][0])
            n_cont = max(len(encoded[i][0]) - encoded[i][1] for i in order[start : start + batch_size])
            rows_fit = max(1, logits_floats // max(1, n_cont * vocab))
            rows = order[start : start + min(batch_size, rows_fit)]
            start += len(rows)
            if answered.issuperset(rows):
                continue
            for i, res in zip(rows, _score_batch(model, device, tokenizer, pad_id, [encoded[i] for i in rows], width)):
                results[i] = res
                if on_result is not None:
                    on_result(i, res)
    return results


def _score_batch(
    model: Any, device: torch.device, tok: Any, pad_id: int, batch: Encoded, width: int
) -> list[LoglikelihoodResult]:
    keep = max(len(ids) - n for ids, n in batch)  # continuation tokens of the longest one
    if keep == 0:
        return [LoglikelihoodResult([], [], True) for _ in batch]
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for r, (toks, _) in enumerate(batch):  # left padding: every row ends at the last column
        ids[r, width - len(toks) :] = torch.tensor(toks, dtype=torch.long)
        mask[r, width - len(toks) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    out = model(
        input_ids=ids.to(device),
        attention_mask=mask.to(device),
        position_ids=pos.to(device),
        logits_to_keep=keep + 1,
        use_cache=False,
    )
    # logits[:, j] predicts the token at column width - keep + j
    logp = torch.log_softmax(out.logits[:, :-1].float(), dim=-1)
    results = []
    for r, (toks, n) in enumerate(batch):
        m = len(toks) - n
        if m == 0:
            results.append(LoglikelihoodResult([], [], True))
            continue
        target = torch.tensor(toks[n:], dtype=torch.long, device=logp.device)
        lp = logp[r, keep - m :]
        token_lp = lp.gather(1, target[:, None])[:, 0]
        greedy = bool((lp.argmax(-1) == target).all())
        results.append(
            LoglikelihoodResult(
                [float(x) for x in token_lp.tolist()],
                [tok.decode([t]) for t in toks[n:]],
                greedy,
                token_ids=list(toks[n:]),
            )
        )
    return results
