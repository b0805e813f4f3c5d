"""Log-likelihoods through the completions endpoint's echo: :class:`EchoLoglikelihood`, which the backend holds.

How the continuation's tokens are picked out of the echoed prompt is documented with the
backend, in :mod:`.backend`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from biaslab.errors import BackendError
from biaslab.models.base import LoglikelihoodRequest, LoglikelihoodResult
from biaslab.models.openai.retry import Retrier, Unsupported

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

log = logging.getLogger(__name__.rpartition(".")[0] + ".backend")  # the backend's logger


class EchoLoglikelihood:
    """Scores continuations from echoed prompt logprobs, with ``model`` through ``retrier``'s calls.

    Once the server has shown that it cannot return prompt logprobs, :attr:`unsupported_reason`
    says why and every later call fails at once.
    """

    def __init__(self, retrier: Retrier, model: str) -> None:
        self.retrier = retrier
        self.model = model
        self.unsupported_reason: str | None = None
        self._max_tokens = 0  # becomes 1 for servers that reject max_tokens=0
        self._warned_first_token = False

    @property
    def base_url(self) -> str:
        return self.retrier.base_url

    def check_supported(self) -> None:
        """A BackendError if the server has already shown that it cannot score."""
        if self.unsupported_reason is not None:
            raise BackendError(self._unsupported_message(self.unsupported_reason))

    def _unsupported_message(self, detail: str) -> str:
        return (
            f"{self.model} at {self.base_url} is chat-only / does not return prompt logprobs ({detail}); "
            "likelihood probes need a local model (hf/..., gguf/...) or a completions server with "
            "echo+logprobs such as vLLM"
        )

    # -- loglikelihood --------------------------------------------------------------------
    async def score(self, client: AsyncOpenAI, req: LoglikelihoodRequest) -> LoglikelihoodResult:
        """The log-probabilities of ``req``'s continuation after its context (one request)."""
        if not req.continuation:
            return LoglikelihoodResult(token_logprobs=[], tokens=[], is_greedy=True)
        prompt = req.context + req.continuation
        try:
            resp = await self._echo_call(client, prompt)
            return self._parse_echo(resp, prompt, len(req.context))
        except Unsupported as exc:
            self.unsupported_reason = exc.detail
            raise BackendError(self._unsupported_message(exc.detail)) from None

    async def _echo_call(self, client: AsyncOpenAI, prompt: str) -> Any:
        def call(max_tokens: int) -> Awaitable[Any]:
            return self.retrier.call(
                lambda: client.completions.create(
                    model=self.model, prompt=prompt, max_tokens=max_tokens, echo=True, logprobs=1, temperature=0
                ),
                endpoint="completions-echo",
                check=lambda answer: self.retrier.first_choice(answer, "completions"),
            )

        max_tokens = self._max_tokens
        try:
            return await call(max_tokens)
        except Unsupported as exc:
            # vLLM refuses max_tokens=0: ask for one token, which _parse_echo ignores.
            if max_tokens != 0 or "max_tokens" not in exc.detail:
                raise
            self._max_tokens = 1
            return await call(1)

    def _parse_echo(self, resp: Any, prompt: str, cont_start: int) -> LoglikelihoodResult:
        lp = getattr(self.retrier.first_choice(resp, "completions"), "logprobs", None)
        tokens = list(getattr(lp, "tokens", None) or []) if lp is not None else []
        values = list(getattr(lp, "token_logprobs", None) or []) if lp is not None else []
        offsets = getattr(lp, "text_offset", None) if lp is not None else None
        tops = getattr(lp, "top_logprobs", None) if lp is not None else None
        if not tokens or len(values) != len(tokens):
            raise Unsupported("the completions answer has no prompt logprobs")
        if offsets is None or len(offsets) != len(tokens):
            offsets = _offsets_from_tokens(tokens, prompt)
            if offsets is None:
                raise Unsupported("the completions answer has no text_offset")
        offsets = list(offsets)
        n = len(tokens)
        # Token i covers [offsets[i], end_i) with end_i the next token's offset (robust to
        # tokens whose text is not their exact characters, e.g. partial UTF-8 bytes).
        ends = [offsets[i + 1] if i + 1 < n else offsets[i] + len(tokens[i]) for i in range(n)]
        picked = [i for i in range(n) if offsets[i] < len(prompt) and ends[i] > cont_start]
        if not picked:
            raise Unsupported("the echoed tokens do not cover the prompt")
        out_lp: list[float] = []
        out_tok: list[str] = []
        out_off: list[int] = []
        greedy: bool | None = True
        for i in picked:
            value = values[i]
            if value is None:
                if all(ends[j] <= offsets[i] for j in range(i)):  # first real token: no context
                    if not self._warned_first_token:
                        self._warned_first_token = True
                        log.warning(
                            "%s gives no logprob for the first token of a prompt; when it belongs to the "
                            "continuation (empty context) it is left out of the score",
                            self.base_url,
                        )
                    continue
                raise BackendError(
                    f"{self.base_url} returned no logprob for token {i} of a prompt; cannot score this text"
                )
            out_lp.append(float(value))
            out_tok.append(tokens[i])
            out_off.append(int(offsets[i]))
            top = tops[i] if tops is not None and i < len(tops) else None
            if greedy is not None:
                if top:
                    greedy = greedy and float(value) >= max(float(v) for v in top.values()) - 1e-6
                else:
                    greedy = None
        return LoglikelihoodResult(
            token_logprobs=out_lp, tokens=out_tok, is_greedy=greedy if out_lp else None, offsets=out_off
        )


def _offsets_from_tokens(tokens: list[str], prompt: str) -> list[int] | None:
    """Character offsets from the token texts, when they spell the prompt exactly."""
    offsets, pos = [], 0
    for tok in tokens:
        offsets.append(pos)
        pos += len(tok)
    return offsets if "".join(tokens).startswith(prompt) else None
