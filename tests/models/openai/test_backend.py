"""Tests of the OpenAI-compatible backend, over real HTTP against a loopback test server."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_test_server import BAD_REPLIES, CUT_OFF, OpenAITestServer, fake_logprob

from biaslab.errors import BackendError, ConfigError
from biaslab.models.base import (
    GenerateRequest,
    GenerateResult,
    GenerationParams,
    LoglikelihoodRequest,
)
from biaslab.models.openai.backend import OpenAIBackend, from_spec

SECRET = "sk-test-SECRET-0123456789abcdef"


def backend(srv: OpenAITestServer, **options) -> OpenAIBackend:
    options.setdefault("retry_base_delay", 0.01)
    options.setdefault("timeout", 5.0)
    return OpenAIBackend("test-model", base_url=srv.base_url, **options)


def sample_requests(n: int = 10) -> list[GenerateRequest]:
    reqs = []
    for i in range(n):
        params = GenerationParams(temperature=0.7 if i % 2 else None, seed=i, max_tokens=40)
        if i % 3 == 2:
            reqs.append(GenerateRequest(prompt=f"raw prompt number {i}", params=params))
        else:
            reqs.append(GenerateRequest.chat(f"question {i} about nurses", system="be brief", params=params))
    return reqs


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- packaging --------------------------------------------------------------------------------
def test_importing_biaslab_and_the_module_does_not_import_openai() -> None:
    code = (
        "import sys, biaslab, biaslab.models.base, biaslab.models.openai.backend\n"
        "assert 'openai' not in sys.modules, 'openai imported too early'\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_registry_loads_the_backend(make_server) -> None:
    try:
        from biaslab.models.registry import load_model
    except ImportError as exc:  # registry pieces owned by others may not exist yet
        pytest.skip(f"registry not importable yet: {exc}")
    srv = make_server()
    b = load_model("openai/test-model", base_url=srv.base_url, max_concurrency=2, timeout=None)
    assert isinstance(b, OpenAIBackend)
    assert b.max_concurrency == 2 and b.timeout == 60.0


# --- basic requests -------------------------------------------------------------------------
def test_chat_and_completions(make_server) -> None:
    srv = make_server()
    b = backend(srv)
    chat = GenerateRequest.chat("hello there world", params=GenerationParams(seed=5, temperature=0.0))
    raw = GenerateRequest(prompt="once upon a time", params=GenerationParams(top_p=0.9, max_tokens=3))
    r_chat, r_raw = b.generate([chat, raw])
    assert r_chat == GenerateResult(
        text="echo: hello there world seed=5 temperature=0.0 top_p=None",
        n_prompt_tokens=3,
        n_new_tokens=7,
        finish_reason="stop",
    )
    assert r_raw == GenerateResult(text=" echo: once upon", n_prompt_tokens=4, n_new_tokens=3, finish_reason="length")
    assert srv.stats.by_path["/v1/chat/completions"] == 1
    assert srv.stats.by_path["/v1/completions"] == 1
    bodies = {("messages" in body): body for body in srv.stats.bodies}
    # only parameters that are set are sent, so the server's defaults apply otherwise
    assert bodies[True] == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hello there world"}],
        "seed": 5,
        "temperature": 0.0,
    }
    assert bodies[False] == {"model": "test-model", "prompt": "once upon a time", "top_p": 0.9, "max_tokens": 3}


def test_system_message_and_identity(make_server) -> None:
    srv = make_server()
    b = backend(srv)
    [res] = b.generate([GenerateRequest.chat("hi", system="answer tersely")])
    assert res.text == "echo: hi system=answer seed=None temperature=None top_p=None"
    assert b.identity() == {"backend": "openai", "model": "test-model", "base_url": srv.base_url}
    assert b.base_url == srv.base_url
    assert b.kind == "openai"
    assert b.generate([]) == []


def test_on_result_called_once_per_request_as_they_finish(make_server) -> None:
    srv = make_server(delay=0.01)
    b = backend(srv, max_concurrency=4)
    reqs = sample_requests(20)
    seen: list[tuple[int, GenerateResult]] = []
    results = b.generate(reqs, on_result=lambda i, r: seen.append((i, r)))
    assert sorted(i for i, _ in seen) == list(range(20))
    assert all(results[i] == r for i, r in seen)
    assert all(f"question {i} " in results[i].text or f"number {i} " in results[i].text for i in range(20))


def test_concurrency_is_bounded(make_server) -> None:
    srv = make_server(delay=0.1)
    backend(srv, max_concurrency=3).generate(sample_requests(12))
    assert srv.stats.max_in_flight == 3
    srv2 = make_server(delay=0.1)
    backend(srv2, max_concurrency=8).generate(sample_requests(12))
    assert srv2.stats.max_in_flight > 3  # the bound above was ours, not the server's


def test_works_inside_a_running_event_loop(make_server) -> None:
    srv = make_server()
    b = backend(srv)

    async def main() -> list[GenerateResult]:
        return b.generate([GenerateRequest.chat("from async")])  # sync call from a loop's thread

    [res] = asyncio.run(main())
    assert res.text.startswith("echo: from async")


def test_max_completion_tokens_fallback(make_server) -> None:
    srv = make_server(reject_max_tokens_chat=True)
    b = backend(srv)
    reqs = [GenerateRequest.chat("a b c d e f", params=GenerationParams(max_tokens=2)) for _ in range(2)]
    assert [r.text for r in b.generate(reqs)] == ["echo: a"] * 2
    assert srv.stats.bodies[-1].get("max_completion_tokens") == 2


# --- faults and retries ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "faults, options",
    [
        (dict(fault=429, fail_first=2, retry_after="0"), {}),
        (dict(fault=500, fail_first=2), {}),
        (dict(fault=503, fail_fraction=0.4, fail_seed=7), {}),
        (dict(fault="hang", fail_first=1), {"timeout": 0.3}),
    ],
    ids=["429", "500", "503-fraction", "timeout"],
)
def test_faults_are_retried_to_identical_results(make_server, faults, options) -> None:
    reqs = sample_requests(10)
    baseline = backend(make_server()).generate(reqs)
    srv = make_server(**faults)
    seen: list[int] = []
    results = backend(srv, **options).generate(reqs, on_result=lambda i, r: seen.append(i))
    assert results == baseline
    assert sorted(seen) == list(range(10))
    assert srv.stats.faults > 0
    assert srv.stats.requests == len(reqs) + srv.stats.faults


@pytest.mark.parametrize("fault", BAD_REPLIES)
def test_broken_answers_are_retried_to_identical_results(make_server, fault) -> None:
    """A 200 cut short, not JSON, a proxy's HTML page, or without choices: retried like a 5xx, and counted."""
    reqs = sample_requests(6)
    baseline = backend(make_server()).generate(reqs)
    srv = make_server(fault=fault, fail_first=2)
    b = backend(srv)
    assert b.generate(reqs) == baseline
    assert srv.stats.faults == 12 and srv.stats.requests == 18
    assert b.retry_counts() == {"bad reply": 12}


@pytest.mark.parametrize(
    "fault, expected",
    [
        ("truncated-json", "/chat/completions sent an answer cut short (invalid JSON: "),
        ("not-json", "/chat/completions sent an answer that is not JSON (got 'upstream connect error or disconnect"),
        ("html-page", "/chat/completions did not answer like an OpenAI-compatible API (got '<html><body><h1>502"),
        ("no-choices", "/chat/completions returned no choices for model 'test-model', after 3 attempts; "),
    ],
)
def test_broken_answers_that_persist_give_one_line(make_server, fault, expected) -> None:
    srv = make_server(fault=fault, fail_first=10**6)
    with pytest.raises(BackendError) as err:
        backend(srv, max_retries=2).generate([GenerateRequest.chat("x")])
    msg = str(err.value)
    assert expected in msg and msg.startswith(srv.base_url) and "after 3 attempts" in msg and "\n" not in msg
    assert srv.stats.requests == 3


def test_answers_broken_off_are_retried_as_often_as_other_faults(make_server) -> None:
    """A connection that drops in the middle of an answer reached the server: not the fast failure of a wrong URL."""
    srv = make_server(fault=CUT_OFF, fail_first=2)
    b = backend(srv)
    assert b.generate(sample_requests(3)) == backend(make_server()).generate(sample_requests(3))
    assert b.retry_counts() == {"connection": 6}
    srv = make_server(fault=CUT_OFF, fail_first=10**6)
    with pytest.raises(BackendError) as err:
        backend(srv, max_retries=4).generate([GenerateRequest.chat("x")])
    assert srv.stats.requests == 5 and str(err.value).startswith(f"{srv.base_url} kept breaking off its answers (")
    assert "5 attempts); the server (or a proxy before it) is failing" in str(err.value)


def test_a_failure_lets_the_requests_in_flight_finish(make_server) -> None:
    """The requests already sent when one fails are answered (and paid for): their answers are reported, so the
    cache keeps them; the requests not sent yet are not sent."""
    srv = make_server(fault=500, fail_first=10**6, fault_match="doomed", delay=0.4)
    reqs = [GenerateRequest.chat("doomed"), *(GenerateRequest.chat(f"fine {i}") for i in range(11))]
    seen: list[int] = []
    with pytest.raises(BackendError, match="kept failing with HTTP 500 after 1 attempt"):
        backend(srv, max_retries=0, max_concurrency=4).generate(reqs, on_result=lambda i, r: seen.append(i))
    assert sorted(seen) == [1, 2, 3] and srv.stats.requests == 4


def test_retries_are_counted_by_cause(make_server) -> None:
    b = backend(make_server(fault=429, fail_first=1, retry_after="0"))
    b.generate(sample_requests(3))
    assert b.retry_counts() == {"HTTP 429": 3}
    b = backend(make_server(fault="hang", fail_first=1), timeout=0.3)
    b.generate(sample_requests(2))
    assert b.retry_counts() == {"timeout": 2}


def test_loglikelihood_is_retried_too(make_server) -> None:
    req = [LoglikelihoodRequest(context="The cat", continuation=" sat on")]
    srv = make_server(fault=502, fail_first=2)
    [res] = backend(srv, likelihood="text-echo").loglikelihood(req)
    assert res.token_logprobs == [-0.75, -0.5]
    assert srv.stats.requests == 3


def test_retry_after_is_honoured(make_server) -> None:
    srv = make_server(fault=429, fail_first=1, retry_after="1")
    start = time.monotonic()
    backend(srv).generate([GenerateRequest.chat("x")])
    assert time.monotonic() - start >= 0.9  # base delay is 0.01 s: the wait came from Retry-After
    srv = make_server(fault=429, fail_first=1, retry_after_ms="300")
    start = time.monotonic()
    backend(srv).generate([GenerateRequest.chat("x")])
    assert 0.28 <= time.monotonic() - start < 1.5


def test_retry_after_is_capped(make_server) -> None:
    srv = make_server(fault=503, fail_first=1, retry_after="3600")
    start = time.monotonic()
    backend(srv, max_retry_after=0.1).generate([GenerateRequest.chat("x")])
    assert time.monotonic() - start < 2


@pytest.mark.parametrize(
    "faults, options, expected",
    [
        (dict(fault=500), {}, "kept failing with HTTP 500 after 3 attempts"),
        (dict(fault=429, retry_after="0"), {}, "kept answering 429 (rate limited) after 3 attempts"),
        (dict(fault="hang"), {"timeout": 0.2}, "did not answer within 0.2 s (3 attempts)"),
    ],
    ids=["500", "429", "timeout"],
)
def test_persistent_faults_give_up_after_max_retries(make_server, faults, options, expected) -> None:
    srv = make_server(fail_first=10**6, **faults)
    with pytest.raises(BackendError) as err:
        backend(srv, max_retries=2, **options).generate([GenerateRequest.chat("x")])
    assert expected in str(err.value)
    assert srv.base_url in str(err.value) and "\n" not in str(err.value)
    assert srv.stats.requests == 3


def test_unreachable_server_fails_quickly() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    b = OpenAIBackend("m", base_url=url, max_retries=2, retry_base_delay=0.01, timeout=2)
    start = time.monotonic()
    with pytest.raises(BackendError) as err:
        b.generate([GenerateRequest.chat("x")] * 3)
    assert time.monotonic() - start < 3
    msg = str(err.value)
    assert msg.startswith(f"cannot reach {url}: ")
    assert "check --base-url / that the server is running" in msg and "\n" not in msg


def test_non_retryable_errors_fail_at_once(make_server) -> None:
    srv = make_server(models=("other-model",))
    with pytest.raises(BackendError) as err:
        backend(srv).generate([GenerateRequest.chat("x")])
    assert "model 'test-model' not found at " + srv.base_url in str(err.value)
    assert srv.stats.requests == 1

    srv = make_server(no_completions=True)
    with pytest.raises(BackendError, match=r"/completions answered HTTP 404 \(Not Found\); check --base-url"):
        backend(srv).generate([GenerateRequest(prompt="x")])
    assert srv.stats.requests == 1


def test_a_url_that_is_no_api(make_server) -> None:
    srv = make_server(html=True)
    b = backend(srv, likelihood="text-echo", max_retries=2)  # a page like a proxy's error page: retried, then this
    with pytest.raises(
        BackendError,
        match=r"/chat/completions did not answer like an OpenAI-compatible API "
        r"\(got '<html><body>It works!</body></html>'\), after 3 attempts; check --base-url",
    ):
        b.generate([GenerateRequest.chat("x")])
    assert srv.stats.requests == 3
    with pytest.raises(BackendError, match=r"/completions did not answer like an OpenAI-compatible API"):
        b.loglikelihood([LoglikelihoodRequest(continuation="x y")])


def test_error_stops_the_run_and_finished_results_were_reported(make_server) -> None:
    srv = make_server(models=("test-model",))
    reqs = [GenerateRequest.chat("ok")] * 3
    b = OpenAIBackend("test-model", base_url=srv.base_url, max_concurrency=1)
    seen: list[int] = []
    b.generate(reqs, on_result=lambda i, r: seen.append(i))
    assert sorted(seen) == [0, 1, 2]

    def boom(i: int, r: object) -> None:
        raise RuntimeError("cache is full")

    with pytest.raises(RuntimeError, match="cache is full"):
        b.generate(reqs, on_result=boom)


# --- API keys -------------------------------------------------------------------------------
def test_missing_key_without_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="set OPENAI_API_KEY"):
        from_spec("gpt-4o-mini", base_url=None, options={})


def test_key_from_environment_is_sent(make_server, monkeypatch) -> None:
    srv = make_server(api_key=SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    backend(srv).generate([GenerateRequest.chat("x")])
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("BIASLAB_API_KEY", SECRET)
    backend(srv).generate([GenerateRequest.chat("y")])
    assert srv.stats.auth_headers == [f"Bearer {SECRET}"] * 2


def test_local_server_gets_a_placeholder_key(make_server) -> None:
    srv = make_server()
    backend(srv).generate([GenerateRequest.chat("x")])
    assert srv.stats.auth_headers == ["Bearer EMPTY"]


def test_rejected_key_is_not_retried_and_never_shown(make_server, monkeypatch, caplog) -> None:
    srv = make_server(api_key="sk-the-right-one")  # its 401 body echoes the key it got
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    b = backend(srv)
    with caplog.at_level("DEBUG"), pytest.raises(BackendError) as err:
        b.generate([GenerateRequest.chat("x")])
    msg = str(err.value)
    assert msg.startswith("the server rejected the API key") and "set OPENAI_API_KEY" in msg
    assert srv.stats.requests == 1
    assert SECRET not in msg
    assert SECRET not in repr(err.value) and SECRET not in repr(err.value.__cause__) + repr(err.value.__context__)
    for text in (repr(b), str(b.identity()), repr(vars(b)), caplog.text):
        assert SECRET not in text
    # no SDK exception (its request object holds the Authorization header) rides along
    exc: BaseException | None = err.value
    while exc is not None:
        assert not type(exc).__module__.startswith("openai")
        exc = exc.__cause__ or exc.__context__


def test_key_not_echoed_by_other_errors(make_server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    b = OpenAIBackend("m", base_url=url, max_retries=0)
    with pytest.raises(BackendError) as err:
        b.generate([GenerateRequest.chat("x")])
    assert SECRET not in str(err.value)


def test_bad_options(make_server) -> None:
    srv = make_server()
    with pytest.raises(ConfigError, match="unknown option 'max_concurency'"):
        OpenAIBackend("m", base_url=srv.base_url, max_concurency=3)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIBackend("m", base_url=srv.base_url, api_key="sk-x")
    with pytest.raises(ConfigError, match="max_concurrency must be at least 1"):
        OpenAIBackend("m", base_url=srv.base_url, max_concurrency=0)
    with pytest.raises(ConfigError, match="http://"):
        OpenAIBackend("m", base_url="127.0.0.1:8000/v1")
    b = OpenAIBackend("m", base_url=srv.base_url + "/", max_concurrency="4", timeout="2.5")
    assert (b.max_concurrency, b.timeout, b.base_url) == (4, 2.5, srv.base_url)


# --- log-likelihoods ------------------------------------------------------------------------
def test_loglikelihood_known_values(make_server) -> None:
    srv = make_server()
    b = backend(srv, likelihood="text-echo")
    reqs = [
        # "The cat sat on" -> "The" " cat" | " sat" " on": boundary between tokens
        LoglikelihoodRequest(context="The cat", continuation=" sat on"),
        # "The cat " + "sat down": " sat" straddles the boundary and counts for the continuation
        LoglikelihoodRequest(context="The cat ", continuation="sat down"),
        # empty context: the first token has no logprob on this server and is left out
        LoglikelihoodRequest(continuation="nurses are kind"),
        LoglikelihoodRequest(context="abc", continuation=""),
    ]
    seen: list[int] = []
    r1, r2, r3, r4 = b.loglikelihood(reqs, on_result=lambda i, r: seen.append(i))
    assert sorted(seen) == [0, 1, 2, 3]
    assert r1.tokens == [" sat", " on"] and r1.token_logprobs == [-0.75, -0.5]
    assert r1.total == pytest.approx(-1.25) and r1.is_greedy is True
    assert r2.tokens == [" sat", " down"] and r2.token_logprobs == [-0.75, -1.0]
    assert r2.is_greedy is False  # " down" is not the top-1 token (" the" at -0.75 is)
    assert r3.tokens == [" are", " kind"] and r3.token_logprobs == [fake_logprob(" are"), fake_logprob(" kind")]
    assert r3.total == pytest.approx(-1.75)
    assert r4.token_logprobs == [] and r4.total == 0.0
    assert srv.stats.requests == 3  # the empty continuation needs no request
    assert all(body["echo"] is True and body["logprobs"] == 1 and body["max_tokens"] == 0 for body in srv.stats.bodies)


def test_loglikelihood_with_bos_scores_first_token(make_server) -> None:
    srv = make_server(add_bos=True)
    [res] = backend(srv, likelihood="text-echo").loglikelihood([LoglikelihoodRequest(continuation="nurses are kind")])
    assert res.tokens == ["nurses", " are", " kind"]
    assert res.token_logprobs == [-1.5, -0.75, -1.0]


def test_loglikelihood_falls_back_to_max_tokens_1(make_server) -> None:
    srv = make_server(reject_zero_max_tokens=True)
    b = backend(srv, likelihood="text-echo")
    reqs = [LoglikelihoodRequest(context="The cat", continuation=" sat on")]
    [res] = b.loglikelihood(reqs)
    assert res.tokens == [" sat", " on"] and res.token_logprobs == [-0.75, -0.5]  # " gen" ignored
    [res] = b.loglikelihood(reqs)
    assert res.token_logprobs == [-0.75, -0.5]
    assert [body["max_tokens"] for body in srv.stats.bodies] == [0, 1, 1]


@pytest.mark.parametrize("mode", ["chat_only", "no_completions", "drop_logprobs"])
def test_chat_only_server_cannot_score(make_server, mode) -> None:
    srv = make_server(**{mode: True})
    b = backend(srv, likelihood="text-echo")
    assert b.supports_loglikelihood is True
    with pytest.raises(BackendError) as err:
        b.loglikelihood([LoglikelihoodRequest(context="a", continuation=" b")] * 3)
    msg = str(err.value)
    assert msg.startswith(f"test-model at {srv.base_url} is chat-only / does not return prompt logprobs")
    assert "local model (hf/..., gguf/...)" in msg and "vLLM" in msg and "\n" not in msg
    assert b.supports_loglikelihood is False
    n = srv.stats.requests
    assert n <= 3  # not retried
    with pytest.raises(BackendError, match="chat-only"):
        b.loglikelihood([LoglikelihoodRequest(continuation="x y")])
    assert srv.stats.requests == n  # known now: no new request
    # generation still works on such a server
    assert b.generate([GenerateRequest.chat("still fine")])[0].text.startswith("echo: still fine")


def test_too_long_text_is_not_taken_for_a_chat_only_server(make_server) -> None:
    srv = make_server(max_prompt_chars=20)
    b = backend(srv, likelihood="text-echo")
    with pytest.raises(
        BackendError,
        match=r"rejected the request for model 'test-model' \(HTTP 400: This model's "
        r"maximum context length is 20",
    ):
        b.loglikelihood([LoglikelihoodRequest(context="a long context " * 3, continuation=" end")])
    assert b.supports_loglikelihood is True
    [res] = b.loglikelihood([LoglikelihoodRequest(context="short", continuation=" end")])
    assert res.token_logprobs == [-0.75]
