"""Exact log-likelihoods over HTTP (token-id prompts, prompt_logprobs), against the loopback test server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_test_server import OpenAITestServer, fake_ids, fake_logprob, token_id

from biaslab.errors import ConfigError
from biaslab.models.base import LoglikelihoodRequest
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.openai.backend import OpenAIBackend


def backend(srv: OpenAITestServer, **options) -> OpenAIBackend:
    options.setdefault("retry_base_delay", 0.01)
    options.setdefault("timeout", 5.0)
    return OpenAIBackend("test-model", base_url=srv.base_url, **options)


def completions_bodies(srv: OpenAITestServer) -> list[dict]:
    return [b for b in srv.stats.bodies if "prompt" in b and isinstance(b["prompt"], list)]


def test_bos_from_tokenizer_info_and_token_id_prompts(make_server) -> None:
    srv = make_server()  # the fake tokenizer adds no BOS; /tokenizer_info names "<s>" (id 1)
    b = backend(srv)
    assert b.loglikelihood_rule == "token-ids/1"
    [res] = b.loglikelihood([LoglikelihoodRequest(continuation="nurses are kind")])
    ids = fake_ids("nurses are kind")
    # every token is scored, the first one after BOS too
    assert res.token_ids == ids and res.tokens == ["nurses", " are", " kind"]
    assert res.token_logprobs == [fake_logprob("nurses"), fake_logprob(" are"), fake_logprob(" kind")]
    assert res.is_greedy is False  # "nurses" has rank 2 on this server
    [body] = completions_bodies(srv)
    assert body["prompt"] == [1, *ids] and body["prompt_logprobs"] == 0 and body["max_tokens"] == 1
    assert srv.stats.by_path["/tokenizer_info"] == 1


def test_tokenizer_that_adds_bos_and_a_context(make_server) -> None:
    srv = make_server(add_bos=True, tokenizer_info=False)
    b = backend(srv)
    r1, r2 = b.loglikelihood(
        [
            LoglikelihoodRequest(continuation="nurses are kind"),
            LoglikelihoodRequest(context="The cat", continuation=" sat on"),
        ]
    )
    assert r1.token_logprobs == [-1.5, -0.75, -1.0] and r1.token_ids == fake_ids("nurses are kind")
    # with a context: the context's tokens condition, the continuation's are scored
    assert r2.tokens == [" sat", " on"] and r2.token_logprobs == [-0.75, -0.5] and r2.is_greedy is True
    assert sorted(b["prompt"][0] for b in completions_bodies(srv)) == [1, 1]
    assert srv.stats.by_path["/tokenizer_info"] == 0


def test_chat_template_turns(make_server) -> None:
    srv = make_server()
    b = backend(srv)
    user, assistant = b.loglikelihood(
        [
            LoglikelihoodRequest(continuation="nurses are kind", chat="user"),
            LoglikelihoodRequest(continuation="nurses are kind", chat="assistant"),
        ]
    )
    ids = fake_ids("nurses are kind")
    assert user.token_ids == ids and assistant.token_ids == ids
    bodies = completions_bodies(srv)
    # the turn's opening conditions the text; the end-of-turn marker is not scored
    assert sorted(map(tuple, (b["prompt"] for b in bodies))) == sorted(
        [(token_id("<|user|>"), *ids), (token_id("<|user|>"), token_id("<|end|>"), token_id("<|assistant|>"), *ids)]
    )
    with pytest.raises(ConfigError, match="takes no context"):
        b.loglikelihood([LoglikelihoodRequest(context="x", continuation="y", chat="user")])


def test_no_bos_known_is_a_one_line_error(make_server) -> None:
    srv = make_server(tokenizer_info=False)
    with pytest.raises(ConfigError) as err:
        backend(srv).loglikelihood([LoglikelihoodRequest(continuation="a b")])
    assert "--enable-tokenizer-info-endpoint" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("mode", ["tokenize", "chat_only", "no_completions", "drop_logprobs"])
def test_servers_that_cannot_score_exactly(make_server, mode) -> None:
    srv = make_server(**({"tokenize": False} if mode == "tokenize" else {mode: True}))
    b = backend(srv)
    with pytest.raises(ConfigError) as err:
        b.loglikelihood([LoglikelihoodRequest(continuation="a b")] * 3)
    msg = str(err.value)
    assert msg.startswith(f"test-model at {srv.base_url} cannot score exact log-likelihoods") and "\n" not in msg
    assert ("no /tokenize endpoint" in msg) == (mode == "tokenize")
    n = srv.stats.requests
    with pytest.raises(ConfigError):
        b.loglikelihood([LoglikelihoodRequest(continuation="x y")])
    assert srv.stats.requests == n  # known now: no new request
    assert b.supports_loglikelihood is False


def test_echo_when_prompt_logprobs_are_ignored(make_server) -> None:
    srv = make_server(ignore_prompt_logprobs=True, add_bos=True)
    b = backend(srv)
    [res] = b.loglikelihood([LoglikelihoodRequest(continuation="nurses are kind")])
    assert res.token_logprobs == [-1.5, -0.75, -1.0] and res.is_greedy is None
    [res] = b.loglikelihood([LoglikelihoodRequest(continuation="cats are kind")])  # echo remembered
    assert res.token_logprobs == [-1.0, -0.75, -1.0]
    assert [("prompt_logprobs" in x, x.get("echo")) for x in completions_bodies(srv)] == [
        (True, None),
        (False, True),
        (False, True),
    ]


def test_cache_entries_of_another_rule_are_not_reused(make_server, tmp_path) -> None:
    srv = make_server(add_bos=True)
    reqs = [LoglikelihoodRequest(continuation="nurses are kind")]
    echo = CachedModel(backend(srv, likelihood="text-echo"), ResponseCache(tmp_path / "c.sqlite"))
    echo.loglikelihood(reqs)
    echo.close()
    exact = CachedModel(backend(srv), ResponseCache(tmp_path / "c.sqlite"))
    exact.loglikelihood(reqs)
    assert (exact.stats.cache_hits, exact.stats.model_calls) == (0, 1)
    exact.loglikelihood(reqs)
    assert exact.stats.cache_hits == 1
    exact.close()
    # text-echo keeps the keys it always had
    again = CachedModel(backend(srv, likelihood="text-echo"), ResponseCache(tmp_path / "c.sqlite"))
    again.loglikelihood(reqs)
    assert again.stats.cache_hits == 1
    again.close()


def test_bad_likelihood_option() -> None:
    with pytest.raises(ConfigError, match="likelihood .* must be one of token-ids, text-echo"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", likelihood="guess")
