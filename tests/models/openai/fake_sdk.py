"""A stand-in for the ``openai`` SDK's exception classes and its async client, for unit tests of the
retrier and the echo scorer without a server."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any


class APIStatusError(Exception):
    def __init__(
        self, status_code: int, message: str = "error", headers: dict[str, str] | None = None, body: Any = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.response = SimpleNamespace(headers=headers or {})
        self.body = body


class APIConnectionError(Exception):
    pass


class APITimeoutError(APIConnectionError):
    pass


SDK = SimpleNamespace(
    APIStatusError=APIStatusError, APIConnectionError=APIConnectionError, APITimeoutError=APITimeoutError
)


class FakeClient:
    """``client.completions.create(**kw)`` answers ``answer(kw)`` (or raises what it returns); calls are kept."""

    def __init__(self, answer: Callable[[dict[str, Any]], Any]) -> None:
        self.calls: list[dict[str, Any]] = []

        async def create(**kw: Any) -> Any:
            self.calls.append(kw)
            result = answer(kw)
            if isinstance(result, Exception):
                raise result
            return result

        self.completions = SimpleNamespace(create=create)


def echo_answer(
    tokens: list[str],
    logprobs: list[float | None],
    offsets: list[int] | None = None,
    tops: list[dict[str, float]] | None = None,
) -> Any:
    """A completions answer with echoed prompt logprobs."""
    lp = SimpleNamespace(tokens=tokens, token_logprobs=logprobs, text_offset=offsets, top_logprobs=tops)
    return SimpleNamespace(choices=[SimpleNamespace(text="".join(tokens), logprobs=lp)])
