"""The openai backend's echo log-likelihoods, on canned completions answers (no server)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_sdk import SDK, APIStatusError, FakeClient, echo_answer

from biaslab.errors import BackendError
from biaslab.models.base import LoglikelihoodRequest
from biaslab.models.openai.echo import EchoLoglikelihood
from biaslab.models.openai.options import Secret
from biaslab.models.openai.retry import Retrier

URL = "http://127.0.0.1:9/v1"


def scorer() -> EchoLoglikelihood:
    retrier = Retrier(
        SDK,
        Secret("EMPTY"),
        model="m",
        base_url=URL,
        timeout=5.0,
        max_retries=0,
        retry_base_delay=0.0,
        retry_max_delay=0.0,
        max_retry_after=0.0,
    )
    return EchoLoglikelihood(retrier, "m")


def test_continuation_tokens_are_picked_by_offset():
    answer = echo_answer(
        ["The", " cat", " sat", " on"],
        [None, -1.0, -0.75, -0.5],
        [0, 3, 7, 11],
        [{"The": 0.0}, {" cat": -1.0}, {" sat": -0.75}, {" the": -0.25}],
    )
    client = FakeClient(lambda kw: answer)
    echo = scorer()
    res = asyncio.run(echo.score(client, LoglikelihoodRequest(context="The cat", continuation=" sat on")))
    assert (res.tokens, res.token_logprobs, res.offsets, res.is_greedy) == (
        [" sat", " on"],
        [-0.75, -0.5],
        [7, 11],
        False,
    )
    # a token straddling the boundary counts for the continuation; offsets rebuilt from the tokens
    res = asyncio.run(
        echo.score(
            FakeClient(lambda kw: echo_answer(["The", " cat", " sat", " on"], [None, -1.0, -0.75, -0.5])),
            LoglikelihoodRequest(context="The cat ", continuation="sat on"),
        )
    )
    assert res.tokens == [" sat", " on"] and res.is_greedy is None  # no top logprobs: unknown
    assert client.calls == [
        {"model": "m", "prompt": "The cat sat on", "max_tokens": 0, "echo": True, "logprobs": 1, "temperature": 0}
    ]
    # nothing to score, no request
    assert asyncio.run(echo.score(client, LoglikelihoodRequest("", context="x"))).token_logprobs == []
    assert len(client.calls) == 1


def test_max_tokens_fallback_and_chat_only_servers():
    def answer(kw):
        if kw["max_tokens"] == 0:
            return APIStatusError(400, body={"error": {"message": "max_tokens must be at least 1"}})
        return echo_answer(["a", " b", " gen"], [None, -2.0, -0.1], [0, 1, 3])

    client = FakeClient(answer)
    echo = scorer()
    res = asyncio.run(echo.score(client, LoglikelihoodRequest(context="a", continuation=" b")))
    assert res.token_logprobs == [-2.0]  # the generated token is ignored
    asyncio.run(echo.score(client, LoglikelihoodRequest(context="a", continuation=" b")))
    assert [c["max_tokens"] for c in client.calls] == [0, 1, 1]  # remembered
    echo.check_supported()

    no_logprobs = FakeClient(lambda kw: echo_answer(["a", " b"], []))
    with pytest.raises(BackendError, match=r"^m at .* is chat-only / does not return prompt logprobs"):
        asyncio.run(echo.score(no_logprobs, LoglikelihoodRequest(context="a", continuation=" b")))
    assert echo.unsupported_reason == "the completions answer has no prompt logprobs"
    with pytest.raises(BackendError, match="chat-only"):
        echo.check_supported()
