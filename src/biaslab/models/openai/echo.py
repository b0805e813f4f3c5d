"""Log-likelihoods through the completions endpoint's echo (a mixin of :class:`.openai_backend.OpenAIBackend`).

How the continuation's tokens are picked out of the echoed prompt is documented with the
backend, in :mod:`.openai_backend`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from biaslab.errors import BackendError
from biaslab.models.base import LoglikelihoodRequest, LoglikelihoodResult
from biaslab.models.openai.retry import _Unsupported

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

log = logging.getLogger(__name__.rpartition(".")[0] + ".openai_backend")  # the backend's logger


class _EchoLoglikelihood:
    """Scores continuations from echoed prompt logprobs; the attributes below are set by OpenAIBackend."""

    model: str
    base_url: str
    supports_loglikelihood: bool
    _unsupported_reason: str | None
    _echo_max_tokens: int
    _warned_first_token: bool
    _with_retries: Callable[..., Awaitable[Any]]
    _unsupported_message: Callable[[str], str]
    _first_choice: Callable[[Any, str], Any]

    # -- loglikelihood --------------------------------------------------------------------
    async def _loglikelihood_one(self, client: "AsyncOpenAI", req: LoglikelihoodRequest) -> LoglikelihoodResult:
        if not req.continuation:
            return LoglikelihoodResult(token_logprobs=[], tokens=[], is_greedy=True)
        prompt = req.context + req.continuation
        try:
            resp = await self._echo_call(client, prompt)
            return self._parse_echo(resp, prompt, len(req.context))
        except _Unsupported as exc:
            self.supports_loglikelihood = False
            self._unsupported_reason = exc.detail
            raise BackendError(self._unsupported_message(exc.detail)) from None

    async def _echo_call(self, client: "AsyncOpenAI", prompt: str) -> Any:
        def call(max_tokens: int) -> Awaitable[Any]:
            return self._with_retries(
                lambda: client.completions.create(
                    model=self.model, prompt=prompt, max_tokens=max_tokens, echo=True, logprobs=1, temperature=0
                ),
                endpoint="completions-echo",
            )

        max_tokens = self._echo_max_tokens
        try:
            return await call(max_tokens)
        except _Unsupported as exc:
            # vLLM refuses max_tokens=0: ask for one token, which _parse_echo ignores.
            if max_tokens != 0 or "max_tokens" not in exc.detail:
                raise
            self._echo_max_tokens = 1
            return await call(1)

    def _parse_echo(self, resp: Any, prompt: str, cont_start: int) -> LoglikelihoodResult:
        lp = getattr(self._first_choice(resp, "completions"), "logprobs", None)
        tokens = list(getattr(lp, "tokens", None) or []) if lp is not None else []
        values = list(getattr(lp, "token_logprobs", None) or []) if lp is not None else []
        offsets = getattr(lp, "text_offset", None) if lp is not None else None
        tops = getattr(lp, "top_logprobs", None) if lp is not None else None
        if not tokens or len(values) != len(tokens):
            raise _Unsupported("the completions answer has no prompt logprobs")
        if offsets is None or len(offsets) != len(tokens):
            offsets = _offsets_from_tokens(tokens, prompt)
            if offsets is None:
                raise _Unsupported("the completions answer has no text_offset")
        offsets = list(offsets)
        n = len(tokens)
        # Token i covers [offsets[i], end_i) with end_i the next token's offset (robust to
        # tokens whose text is not their exact characters, e.g. partial UTF-8 bytes).
        ends = [offsets[i + 1] if i + 1 < n else offsets[i] + len(tokens[i]) for i in range(n)]
        picked = [i for i in range(n) if offsets[i] < len(prompt) and ends[i] > cont_start]
        if not picked:
            raise _Unsupported("the echoed tokens do not cover the prompt")
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
                            "continuation (empty context) it is left out of the score", self.base_url)
                    continue
                raise BackendError(f"{self.base_url} returned no logprob for token {i} of a prompt; "
                                   "cannot score this text")
            out_lp.append(float(value))
            out_tok.append(tokens[i])
            out_off.append(int(offsets[i]))
            top = tops[i] if tops is not None and i < len(tops) else None
            if greedy is not None:
                if top:
                    greedy = greedy and float(value) >= max(float(v) for v in top.values()) - 1e-6
                else:
                    greedy = None
        return LoglikelihoodResult(token_logprobs=out_lp, tokens=out_tok, is_greedy=greedy if out_lp else None,
                                   offsets=out_off)


def _offsets_from_tokens(tokens: list[str], prompt: str) -> list[int] | None:
    """Character offsets from the token texts, when they spell the prompt exactly."""
    offsets, pos = [], 0
    for tok in tokens:
        offsets.append(pos)
        pos += len(tok)
    return offsets if "".join(tokens).startswith(prompt) else None
