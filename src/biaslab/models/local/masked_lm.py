"""Masked LMs (BERT, RoBERTa, ALBERT, DistilBERT, ...) scored by pseudo-log-likelihood.

``hf/<dir>`` loads this backend when the checkpoint's config is a masked LM (see
:func:`.identity.is_masked_lm_config`); the model is loaded by the loader of causal models,
:func:`.loading.load`, with ``objective="masked-lm"``. It cannot generate. ``loglikelihood`` returns, for
each token of the continuation, log P(token | the text with that token masked alone) -- the
pseudo-log-likelihood of Salazar et al. / CrowS-Pairs -- with ``token_ids``. The special first
and last tokens ([CLS], [SEP]) are never scored.

Batching: every masked copy of every request is one row; rows are sorted by length and packed
into batches of about ``batch_tokens`` tokens (no padding beyond the batch's own length), so
the copies of many sentences share a forward pass (the original scored one copy per forward).
Only the masked position of each row goes through the LM head: a forward hook on the encoder
keeps that position's hidden state, which saves the head's cost (hidden x vocabulary) at every
other position. A request is reported through ``on_result`` as soon as all its copies are done.

Options: ``device``, ``dtype``, ``threads`` as for causal models, ``batch_size`` (rows per
batch at most, default 32 x 8) and ``batch_tokens`` (default 8192).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import torch

from biaslab.errors import BackendError, ConfigError
from biaslab.models.base import ContextLengthError, LoglikelihoodRequest, LoglikelihoodResult, ModelBackend, OnResult
from biaslab.models.local import threads as local_threads
from biaslab.models.local.identity import is_masked_lm_config, is_masked_lm_dir, parse_options
from biaslab.models.local.loading import load, pick_device, pick_dtype

BATCH_TOKENS = 8192


def is_masked_lm_source(source: str) -> bool:
    if Path(source).is_dir():
        return is_masked_lm_dir(Path(source))
    try:  # a hub id: only its config is needed to decide
        from transformers import AutoConfig

        return is_masked_lm_config_obj(AutoConfig.from_pretrained(source))
    except Exception:
        return False


def is_masked_lm_config_obj(cfg: Any) -> bool:
    return is_masked_lm_config(
        {
            "architectures": getattr(cfg, "architectures", None),
            "model_type": getattr(cfg, "model_type", None),
            "is_decoder": getattr(cfg, "is_decoder", False),
        }
    )


class MaskedLMBackend(ModelBackend):
    kind = "masked-lm"
    supports_loglikelihood = True

    def __init__(self, source: str, **options: Any) -> None:
        opts = parse_options(options)
        self.threads_option: int | None = opts["threads"]
        self.threads = local_threads.apply(self.threads_option)  # before loading: torch's first operations use it
        self.source = source
        self.device = pick_device(opts["device"])
        self.dtype = pick_dtype(opts["dtype"], self.device)
        self.max_rows = int(options.get("batch_size") or 256)
        self.batch_tokens = int(opts["batch_tokens"] or BATCH_TOKENS)
        self._m = load(source, None, self.device, self.dtype, objective="masked-lm")
        self.model, self.tok = self._m.model, self._m.tokenizer
        if self.tok.mask_token_id is None:
            raise BackendError(f"the tokenizer of {source} has no mask token; it is not a masked LM")
        self.max_length = _max_length(self.model, self.tok)

    def identity(self) -> dict[str, Any]:
        return dict(self._m.identity)

    def generate(self, requests, on_result=None):
        raise BackendError(
            "masked LMs cannot generate text; use them with likelihood probes (winosemitism, gpt-winoqueer, pairs, ...)"
        )

    # -- tokens -----------------------------------------------------------------------------
    def encode(self, request: LoglikelihoodRequest) -> tuple[list[int], list[int]]:
        """Token ids of context + continuation (with special tokens) and the positions to score."""
        text = request.context + request.continuation
        enc = self.tok(
            text,
            add_special_tokens=True,
            return_special_tokens_mask=True,
            return_offsets_mapping=bool(request.context and self.tok.is_fast),
        )
        ids = list(enc["input_ids"])
        special = enc["special_tokens_mask"]
        if request.context:
            if "offset_mapping" not in enc:
                raise BackendError("scoring a continuation after a context needs a fast tokenizer")
            start = len(request.context)
            positions = [i for i, (s, (a, b)) in enumerate(zip(special, enc["offset_mapping"])) if not s and b > start]
        else:
            positions = [i for i, s in enumerate(special) if not s]
        return ids, positions

    # -- scoring ----------------------------------------------------------------------------
    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None
    ) -> list[LoglikelihoodResult]:
        return self.loglikelihood_rest(requests, (), on_result)  # type: ignore[return-value]

    def loglikelihood_rest(
        self, requests: Sequence[LoglikelihoodRequest], answered: Collection[int], on_result: OnResult | None
    ) -> list[LoglikelihoodResult | None]:
        """The batches of a call on all ``requests``, less those whose rows all belong to ``answered`` requests: a
        value's last bits depend on its batch (:meth:`ModelBackend.loglikelihood_rest`)."""
        answered = frozenset(answered)
        self.threads = local_threads.apply(self.threads_option)
        if any(getattr(r, "chat", None) for r in requests):
            raise ConfigError(
                "chat_template=user/assistant applies to causal (chat) models, not masked LMs; use chat_template=none"
            )
        encoded = [self.encode(r) for r in requests]
        for i, (r, (ids, _)) in enumerate(zip(requests, encoded)):
            if len(ids) > self.max_length and i not in answered:
                raise ContextLengthError(
                    f"a text of {len(ids)} tokens is longer than the model's context of {self.max_length} tokens",
                    request=r,
                    n_tokens=len(ids),
                    limit=self.max_length,
                )
        values: list[list[float]] = [[0.0] * len(pos) for _, pos in encoded]
        left = [len(pos) for _, pos in encoded]
        results: list[LoglikelihoodResult | None] = [None] * len(requests)

        def finish(i: int) -> None:
            ids, pos = encoded[i]
            res = LoglikelihoodResult(
                values[i], [self.tok.decode([ids[p]]) for p in pos], None, token_ids=[ids[p] for p in pos]
            )
            results[i] = res
            if on_result is not None:
                on_result(i, res)

        for i, n in enumerate(left):
            if n == 0:
                finish(i)
        rows = sorted((len(encoded[i][0]), i, k) for i in range(len(requests)) for k in range(left[i]))
        start = 0
        with torch.inference_mode():
            while start < len(rows):
                width = rows[start][0]
                n = max(1, min(self.max_rows, self.batch_tokens // width))
                batch = rows[start : start + n]
                start += len(batch)
                if answered.issuperset(i for _, i, _ in batch):
                    continue
                width = max(w for w, _, _ in batch)
                scored = self._score_rows([(encoded[i][0], encoded[i][1][k]) for _, i, k in batch], width)
                for (_, i, k), lp in zip(batch, scored):
                    values[i][k] = lp
                    left[i] -= 1
                    if left[i] == 0:
                        finish(i)
        return results

    def _score_rows(self, rows: list[tuple[list[int], int]], width: int) -> list[float]:
        """log P(true token) at the masked position of each row (ids, position)."""
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        targets, where = [], []
        for r, (toks, p) in enumerate(rows):  # right padding: positions stay as in the unpadded text
            ids[r, : len(toks)] = torch.tensor(toks)
            mask[r, : len(toks)] = 1
            targets.append(toks[p])
            where.append(p)
            ids[r, p] = self.tok.mask_token_id
        pos = torch.tensor(where, device=self.device)
        logits = _masked_logits(self.model, ids.to(self.device), mask.to(self.device), pos)
        logp = torch.log_softmax(logits.float(), dim=-1)
        return logp[torch.arange(len(rows), device=self.device), torch.tensor(targets, device=self.device)].tolist()


def _masked_logits(model: Any, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Logits [rows, vocab] at ``pos`` of each row, the LM head applied to those positions only."""
    rows = torch.arange(ids.shape[0], device=ids.device)

    def keep_masked(module: Any, args: Any, output: Any) -> Any:
        if isinstance(output, tuple):
            return (output[0][rows, pos][:, None], *output[1:])
        output.last_hidden_state = output.last_hidden_state[rows, pos][:, None]
        return output

    handle = model.base_model.register_forward_hook(keep_masked)
    try:
        logits = model(input_ids=ids, attention_mask=mask).logits
    finally:
        handle.remove()
    if logits.shape[1] == 1:
        return logits[:, 0]
    return logits[rows, pos]  # pragma: no cover - a head that ignores the hook's output


def _max_length(model: Any, tok: Any) -> int:
    limit = int(getattr(model.config, "max_position_embeddings", 512) or 512)
    if getattr(model.config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
        limit -= 2  # position ids start after the padding index
    tmax = getattr(tok, "model_max_length", None)
    return min(limit, int(tmax)) if isinstance(tmax, int) and 0 < tmax < 1_000_000 else limit
