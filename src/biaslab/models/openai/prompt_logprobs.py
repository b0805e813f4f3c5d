"""Exact log-likelihoods over HTTP: :class:`TokenLoglikelihood`, which the backend holds by default.

The text is tokenized by the server's own tokenizer (:class:`~.server_tokens.ServerTokenizer`), or by the
one ``-P tokenizer=hf/<hub id or dir>`` names (:class:`~.tokenizer_source.LocalTokenizer`),
the token ids to run are chosen by the same rule as the local engine's
(:mod:`biaslab.models.likelihood_rule`: BOS or the context, or the chat template), and the ids
themselves are sent as the prompt of ``/v1/completions`` (a list of ints), so the server cannot
tokenize differently. The log-probability of each prompt token comes from vLLM's
``prompt_logprobs`` (``rank`` 1 marks the greedy token); a server that ignores it but echoes
``logprobs`` for token prompts is read from ``echo``. Results carry the token ids, for the
shared-token alignment of the paired-sentence probes. A server without ``/tokenize`` or without
prompt log-probabilities gets a one-line ConfigError; nothing falls back to another rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biaslab.errors import BackendError, ConfigError
from biaslab.models.base import LoglikelihoodRequest, LoglikelihoodResult
from biaslab.models.likelihood_rule import chat_messages, chat_span, check_chat, plain_ids
from biaslab.models.openai.retry import Retrier, Unsupported
from biaslab.models.openai.server_tokens import ServerTokenizer
from biaslab.models.openai.tokenizer_source import LocalTokenizer

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

RULE = "token-ids/1"  # what keys the cache's log-likelihood entries of this scorer (see CachedModel)


class TokenLoglikelihood:
    """Scores requests from token-id prompts; :attr:`unsupported_reason` once the server proved unable."""

    rule = RULE

    def __init__(self, retrier: Retrier, model: str, tokenizer: str | None = None) -> None:
        self.retrier = retrier
        self.model = model
        self.tokens: ServerTokenizer | LocalTokenizer = (
            LocalTokenizer(tokenizer, retrier, model) if tokenizer else ServerTokenizer(retrier, model)
        )
        self.unsupported_reason: str | None = None
        self._use_echo = False  # the server ignored prompt_logprobs but echoes logprobs

    @property
    def base_url(self) -> str:
        return self.retrier.base_url

    def _unsupported_message(self, detail: str) -> str:
        return (
            f"{self.model} at {self.base_url} cannot score exact log-likelihoods ({detail}); likelihood probes "
            "need token-id prompts with prompt log-probabilities and the model's tokenizer (vLLM's /v1/completions "
            "and /tokenize) or a local model (smollm2, hf/..., gguf/...)"
        )

    def check_supported(self) -> None:
        if self.unsupported_reason is not None:
            raise ConfigError(self._unsupported_message(self.unsupported_reason))

    def _unsupported(self, detail: str) -> ConfigError:
        self.unsupported_reason = detail
        return ConfigError(self._unsupported_message(detail))

    async def prepare(self, client: AsyncOpenAI) -> None:
        try:
            await self.tokens.prepare(client)
        except Unsupported as exc:
            raise self._unsupported(exc.detail) from None

    # -- one request ------------------------------------------------------------------------
    async def score(self, client: AsyncOpenAI, req: LoglikelihoodRequest) -> LoglikelihoodResult:
        if not req.continuation:
            return LoglikelihoodResult(token_logprobs=[], tokens=[], is_greedy=True, token_ids=[])
        try:
            ids, n = await self._ids(client, req)
            if n >= len(ids):
                return LoglikelihoodResult(token_logprobs=[], tokens=[], is_greedy=True, token_ids=[])
            values, texts, greedy = await self._prompt_logprobs(client, ids)
        except Unsupported as exc:
            raise self._unsupported(exc.detail) from None
        if any(v is None for v in values[n:]):
            raise BackendError(f"{self.base_url} returned no log-probability for some prompt tokens; cannot score")
        return LoglikelihoodResult(
            token_logprobs=[float(v) for v in values[n:] if v is not None],
            tokens=texts[n:],
            is_greedy=all(greedy[n:]) if None not in greedy[n:] else None,
            token_ids=ids[n:],
        )

    async def _ids(self, client: AsyncOpenAI, req: LoglikelihoodRequest) -> tuple[list[int], int]:
        role = check_chat(req)
        if role is not None:
            full = await self.tokens.render(client, chat_messages(role, req.continuation, req.system))
            empty = await self.tokens.render(client, chat_messages(role, "", req.system))
            return chat_span(full, empty)
        whole = await self.tokens.tokenize(client, req.context + req.continuation, special=True)
        ctx = await self.tokens.tokenize(client, req.context, special=True) if req.context else []
        if self.tokens.prefix_id is None:
            await self.prepare(client)
        return plain_ids(whole, ctx, self.tokens.prefix_id)

    async def _prompt_logprobs(
        self, client: AsyncOpenAI, ids: list[int]
    ) -> tuple[list[float | None], list[str], list[bool | None]]:
        """Per prompt token: its log-probability (None for the first), its text, whether it was the argmax."""
        kw: dict[str, Any] = {"model": self.model, "prompt": ids, "max_tokens": 1, "temperature": 0}
        if self._use_echo:
            kw.update(echo=True, logprobs=1)
        else:
            kw["extra_body"] = {"prompt_logprobs": 0}
        resp = await self.retrier.call(
            lambda: client.completions.create(**kw),
            endpoint="completions-echo",
            check=lambda answer: self.retrier.first_choice(answer, "completions"),
        )
        choice = self.retrier.first_choice(resp, "completions")
        plp = getattr(choice, "prompt_logprobs", None)
        if plp is None and isinstance(getattr(choice, "model_extra", None), dict):
            plp = choice.model_extra.get("prompt_logprobs")
        if isinstance(plp, list) and len(plp) == len(ids):
            return _from_prompt_logprobs(plp, ids)
        if not self._use_echo:  # prompt_logprobs ignored: try echo + logprobs once
            self._use_echo = True
            return await self._prompt_logprobs(client, ids)
        return _from_echo(getattr(choice, "logprobs", None), ids)


def _from_prompt_logprobs(plp: list[Any], ids: list[int]) -> tuple[list[float | None], list[str], list[bool | None]]:
    values: list[float | None] = []
    texts: list[str] = []
    greedy: list[bool | None] = []
    for i, (entry, tid) in enumerate(zip(plp, ids)):
        info = entry.get(str(tid), entry.get(tid)) if isinstance(entry, dict) else None
        if info is None:
            if i == 0:
                values.append(None)
                texts.append("")
                greedy.append(None)
                continue
            raise Unsupported(f"its prompt_logprobs lack prompt token {i}")
        values.append(float(info["logprob"]) if info.get("logprob") is not None else None)
        texts.append(str(info.get("decoded_token") or ""))
        rank = info.get("rank")
        greedy.append(None if rank is None else int(rank) == 1)
    return values, texts, greedy


def _from_echo(lp: Any, ids: list[int]) -> tuple[list[float | None], list[str], list[bool | None]]:
    tokens = list(getattr(lp, "tokens", None) or []) if lp is not None else []
    values = list(getattr(lp, "token_logprobs", None) or []) if lp is not None else []
    tops = getattr(lp, "top_logprobs", None) if lp is not None else None
    if len(values) < len(ids) or len(tokens) < len(ids):
        raise Unsupported("the completions answer has no prompt logprobs")
    greedy: list[bool | None] = []
    for i in range(len(ids)):
        top = tops[i] if tops is not None and i < len(tops) else None
        v = values[i]
        greedy.append(None if not top or v is None else float(v) >= max(float(x) for x in top.values()) - 1e-6)
    return [None if v is None else float(v) for v in values[: len(ids)]], [str(t) for t in tokens[: len(ids)]], greedy
