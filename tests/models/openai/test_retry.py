"""The openai backend's Retrier on a stand-in SDK: which errors are retried, how often, and the messages."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_sdk import SDK, APIConnectionError, APIStatusError, APITimeoutError

from biaslab.errors import BackendError
from biaslab.models import async_calls
from biaslab.models.openai.options import Secret
from biaslab.models.openai.retry import BadReply, Retrier, Unsupported, _retry_after_seconds

KEY = "sk-test-SECRET-0123456789"
URL = "http://127.0.0.1:9/v1"


def retrier(**options: Any) -> Retrier:
    settings = dict(timeout=5.0, max_retries=3, retry_base_delay=0.0, retry_max_delay=1.0, max_retry_after=0.05)
    settings.update(options)
    return Retrier(SDK, Secret(KEY), model="m", base_url=URL, **settings)


def run(
    r: Retrier, failures: list[Exception], endpoint: str = "chat", answers: list[Any] | None = None
) -> tuple[Any, int]:
    """``r.call`` on a call that raises ``failures`` one after another, then answers "ok"; with ``answers``, the
    call answers those one after another and each is checked with :meth:`Retrier.first_choice`."""
    calls = 0

    async def call() -> Any:
        nonlocal calls
        calls += 1
        if failures:
            raise failures.pop(0)
        return answers.pop(0) if answers else "ok"

    check = (lambda answer: r.first_choice(answer, "chat/completions")) if answers else None
    try:
        return asyncio.run(r.call(call, endpoint=endpoint, check=check)), calls
    except Exception as exc:
        return exc, calls


def test_retryable_errors_are_retried_until_an_answer():
    faults: list[Exception] = [
        APIStatusError(503),
        APIStatusError(429, headers={"retry-after": "0"}),
        APITimeoutError("slow"),
    ]
    assert run(retrier(), faults) == ("ok", 4)


def test_giving_up_after_max_retries():
    exc, calls = run(retrier(max_retries=2), [APIStatusError(500, body={"error": {"message": "db down"}})] * 5)
    assert isinstance(exc, BackendError) and calls == 3
    assert str(exc) == (
        f"{URL} kept failing with HTTP 500 after 3 attempts (db down); check the server's logs and try again"
    )
    exc, calls = run(retrier(max_retries=6), [APIConnectionError("refused")] * 9)  # a wrong URL fails fast
    assert calls == 3 and str(exc).startswith(f"cannot reach {URL}: refused (3 attempts)")


def test_other_errors_fail_at_once_without_the_key():
    exc, calls = run(retrier(), [APIStatusError(401, body={"error": {"message": f"bad key {KEY}"}})])
    assert calls == 1 and str(exc).startswith("the server rejected the API key (HTTP 401")
    exc, calls = run(retrier(), [APIStatusError(400, body={"error": {"message": f"no {KEY} here"}})])
    assert calls == 1 and str(exc) == f"{URL} rejected the request for model 'm' (HTTP 400: no *** here)"
    exc, _ = run(retrier(), [APIStatusError(404, body={"error": {"message": "Not Found"}})], "completions-echo")
    assert isinstance(exc, Unsupported) and exc.detail == f"HTTP 404 on {URL}/completions"
    exc, _ = run(
        retrier(), [APIStatusError(400, body={"error": {"message": "context length exceeded"}})], "completions-echo"
    )
    assert isinstance(exc, BackendError)  # a too-long text is the request's problem, not the server's


def test_backoff_and_retry_after():
    r = retrier(retry_base_delay=0.5, retry_max_delay=3.0, max_retry_after=10.0)
    assert r.backoff(0, 4.0) == 4.0 and r.backoff(0, 60.0) == 10.0 and r.backoff(0, -1.0) == 0.0
    for attempt, base in ((0, 0.5), (1, 1.0), (3, 3.0), (9, 3.0)):  # doubling, capped, +-50 % jitter
        assert all(0.5 * base <= r.backoff(attempt, None) <= 1.5 * base for _ in range(20))
    assert _retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert _retry_after_seconds({"retry-after": "3"}) == 3.0
    assert _retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert _retry_after_seconds({"retry-after": "soon"}) is None and _retry_after_seconds(None) is None


def test_messages_are_one_line_and_answers_are_checked():
    r = retrier()
    assert r.clean(f"a\n  b {KEY}") == "a b ***" and r.clean("x" * 300, 10) == "xxxxxxx..."
    with pytest.raises(BackendError, match=r"/chat did not answer like an OpenAI-compatible API \(got '<html>'\)"):
        r.first_choice("<html>", "chat")
    with pytest.raises(BackendError, match="returned no choices for model 'm'"):
        r.first_choice(type("Answer", (), {"choices": []})(), "completions")


def test_broken_answers_are_retried_like_server_errors():
    """A 200 whose body is cut short or not JSON (the SDK's JSON decoding fails), a proxy's HTML page (the SDK
    gives the text) or an answer without choices: retried with the same backoff, counted as bad replies."""
    good = type("Answer", (), {"choices": ["the choice"]})()
    no_choices = type("Answer", (), {"choices": []})()
    faults: list[Exception] = [
        json.JSONDecodeError("Unterminated string", '{"id": "x", "choi', 12),
        json.JSONDecodeError("Expecting value", "upstream connect error", 0),
    ]
    r = retrier(max_retries=4)
    assert run(r, faults, answers=["<html>502 Bad Gateway</html>", no_choices, good]) == (good, 5)
    assert r.retries == {"bad reply": 4}


def test_broken_answers_give_a_line_once_the_retries_run_out():
    r = retrier(max_retries=2)
    exc, calls = run(r, [json.JSONDecodeError("Expecting value", f"oops {KEY}\n", 0)] * 3)
    assert calls == 3 and isinstance(exc, BackendError) and "\n" not in str(exc) and KEY not in str(exc)
    assert str(exc).startswith(f"{URL}/chat/completions sent an answer that is not JSON (got 'oops ***'), after 3")
    exc, _ = run(r, [json.JSONDecodeError("Unterminated string", '{"id": "x", "ch', 12)] * 3)
    assert "sent an answer cut short (invalid JSON: Unterminated string" in str(exc)
    no_choices = type("Answer", (), {"choices": []})()
    exc, calls = run(r, [], answers=[no_choices] * 3)
    assert calls == 3 and str(exc).startswith(f"{URL}/chat/completions returned no choices for model 'm', after 3")
    assert "raise max_retries (-P max_retries=N)" in str(exc)
    with pytest.raises(BadReply, match="returned no choices"):  # outside a retried call: a one-line error at once
        r.first_choice(no_choices, "completions")
    exc, calls = run(r, [ValueError("not the answer's fault")])  # other ValueErrors are not the server's
    assert calls == 1 and type(exc) is ValueError


def test_retries_are_counted_by_cause():
    r = retrier(max_retries=6)
    faults = [APIConnectionError("refused"), APIStatusError(503), APIStatusError(429), APIStatusError(503)]
    faults.append(APITimeoutError("slow"))
    assert run(r, faults) == ("ok", 6)
    assert r.retries == {"HTTP 503": 2, "HTTP 429": 1, "timeout": 1, "connection": 1}
    run(r, [APIStatusError(500)] * 9)  # a request that gives up: its retries were made all the same
    assert r.retries["HTTP 500"] == 6


def test_no_retry_once_the_run_has_failed():
    """When another request of the run failed, a request in flight gets no more attempts (a dead server costs
    nothing more); its first attempt was awaited, not cancelled."""
    failed = asyncio.Event()
    failed.set()
    token = async_calls._STOPPING.set(failed)
    try:
        exc, calls = run(retrier(max_retries=5), [APIStatusError(503)] * 6)
    finally:
        async_calls._STOPPING.reset(token)
    assert calls == 1 and isinstance(exc, BackendError)
    assert run(retrier(max_retries=5), [APIStatusError(503)] * 2) == ("ok", 3)  # in a run that goes on: retried
