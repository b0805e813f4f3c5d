"""The anthropic backend over real HTTP against the loopback Messages / Message Batches server."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("anthropic")

from biaslab.errors import BackendError, ConfigError
from biaslab.models.anthropic.backend import DEFAULT_MAX_TOKENS, AnthropicBackend, anthropic_identity
from biaslab.models.base import GenerateRequest, GenerationParams, LoglikelihoodRequest
from biaslab.models.batch.journal import Journal
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.registry import load_model
from tests.models.anthropic.anthropic_test_server import BAD_REPLIES, AnthropicTestServer

SECRET = "sk-ant-test-SECRET-abcdef0123456789"


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def chats(n: int = 5) -> list[GenerateRequest]:
    return [
        GenerateRequest.chat(
            f"tell me about {i} cats",
            system="Be brief.",
            params=GenerationParams(max_tokens=8, temperature=0.5, seed=i),
        )
        for i in range(n)
    ]


def make(srv: AnthropicTestServer, tmp_path=None, **options) -> AnthropicBackend:
    options.setdefault("retry_base_delay", 0.01)
    if tmp_path is not None:
        options.update(batch=True, batch_poll_seconds=0.02, batch_dir=tmp_path / "batches")
    return AnthropicBackend("claude-test", base_url=srv.base_url, **options)


def test_messages_are_sent_as_the_messages_api_takes_them(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with AnthropicTestServer(api_key=SECRET) as srv:
        few_shot = GenerateRequest(
            messages=(("system", "Rate it."), ("user", "a"), ("assistant", "0.1"), ("user", "b c")),
            params=GenerationParams(top_p=0.9),
        )
        got = make(srv).generate([*chats(2), few_shot])
        # the three requests are sent concurrently: they reach the server in any order
        [body] = [b for b in srv.bodies if b["messages"][-1]["content"] == "b c"]
    assert got[0].text == "claude: tell me about 0 cats system=Be temperature=0.5"
    assert got[0].finish_reason == "stop" and got[0].n_new_tokens == 8 and got[0].n_prompt_tokens == 5
    assert got[2].text == "claude: b c system=Rate top_p=0.9"
    assert body == {
        "model": "claude-test",
        "max_tokens": DEFAULT_MAX_TOKENS,
        "system": "Rate it.",
        "top_p": 0.9,
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "0.1"},
            {"role": "user", "content": "b c"},
        ],
    }
    assert all(h["anthropic-version"] for h in srv.headers)


def test_max_tokens_cuts_the_answer_and_says_length():
    with AnthropicTestServer() as srv:
        (r,) = make(srv).generate([GenerateRequest.chat("one two three four", params=GenerationParams(max_tokens=2))])
    assert r.text == "claude: one" and r.finish_reason == "length"


def test_overloaded_and_rate_limited_requests_are_retried_with_retry_after():
    with AnthropicTestServer(fault=529, fail_first=2) as srv:
        started = time.monotonic()
        got = make(srv).generate(chats(3))
        assert all(g.text.startswith("claude:") for g in got) and srv.online_calls == 9
    with AnthropicTestServer(fault=429, fail_first=1, retry_after="0.3") as srv:
        started = time.monotonic()
        make(srv).generate(chats(1))
        assert time.monotonic() - started >= 0.3


@pytest.mark.parametrize("fault", BAD_REPLIES)
def test_broken_answers_are_retried_and_counted_then_one_line(fault):
    """A 200 cut short, not JSON, a proxy's HTML page or a message without content: retried like a 529."""
    with AnthropicTestServer() as srv:
        baseline = make(srv).generate(chats(3))
    with AnthropicTestServer(fault=fault, fail_first=2) as srv:
        be = make(srv)
        assert be.generate(chats(3)) == baseline and srv.online_calls == 9
        assert be.retry_counts() == {"bad reply": 6}
    with AnthropicTestServer(fault=fault, fail_first=10**6) as srv:
        with pytest.raises(BackendError) as info:
            make(srv, max_retries=1).generate(chats(1))
        assert srv.online_calls == 2
    msg = str(info.value)
    assert msg.startswith(f"{srv.base_url}/v1/messages ") and ", after 2 attempts; " in msg and "\n" not in msg


def test_one_line_errors_and_the_key_is_not_in_them(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with AnthropicTestServer(api_key="another-key") as srv:
        with pytest.raises(BackendError, match="rejected the API key.*set ANTHROPIC_API_KEY") as info:
            make(srv).generate(chats(1))
        assert SECRET not in str(info.value)
    with AnthropicTestServer(models=("claude-real",)) as srv:
        with pytest.raises(BackendError, match="model 'claude-test' not found.*check the name after anthropic/"):
            make(srv).generate(chats(1))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match="set ANTHROPIC_API_KEY"):
        load_model("anthropic/claude-haiku-4-5")
    with AnthropicTestServer() as srv, pytest.raises(ConfigError, match="chat messages only"):
        make(srv).generate([GenerateRequest(prompt="raw text")])
    be = AnthropicBackend("claude-test", base_url="http://127.0.0.1:9/v1/")
    assert SECRET not in repr(be) and be.identity() == anthropic_identity("claude-test", "http://127.0.0.1:9")
    assert be.identity() == {"backend": "anthropic", "model": "claude-test", "base_url": "http://127.0.0.1:9"}


def test_likelihood_requests_get_the_one_line_cannot_score_error():
    with AnthropicTestServer() as srv:
        with pytest.raises(ConfigError) as info:
            make(srv).loglikelihood([LoglikelihoodRequest("a b")])
        assert srv.online_calls == 0
    assert "cannot score log-likelihoods" in str(info.value) and "\n" not in str(info.value)


def test_message_batches_give_the_online_answers_and_share_the_cache(tmp_path):
    with AnthropicTestServer() as srv:
        reqs = chats(6)
        cache = ResponseCache(tmp_path / "responses.sqlite")
        batched = CachedModel(make(srv, tmp_path), cache).generate(reqs)
        assert len(srv.batches) == 1 and srv.online_calls == 0
        line = srv.requests["msgbatch_0001"][0]
        assert set(line) == {"custom_id", "params"} and line["params"]["system"] == "Be brief."
        again = CachedModel(make(srv), cache)  # online, same keys: all cached
        assert [r.to_json() for r in again.generate(reqs)] == [r.to_json() for r in batched]
        assert again.stats.model_calls == 0
        online = make(srv).generate(reqs)
        assert [r.text for r in online] == [r.text for r in batched]
        cache.close()


def test_errored_and_expired_lines_are_retried_and_cancelled_batches_end_the_run(tmp_path, capsys):
    with AnthropicTestServer(fail_lines={1}, expire={2}) as srv:
        got = make(srv, tmp_path).generate(chats(7))
        assert [sum(b["request_counts"].values()) for b in srv.batches.values()] == [7, 2, 1]
        assert all(g.text.startswith("claude:") for g in got) and srv.online_calls == 0
    err = capsys.readouterr().err
    assert "2 api_error: Internal server error" in err and "expired (not processed within 24 hours)" in err
    with AnthropicTestServer(expire={1}) as srv:
        make(srv, tmp_path / "online-retry", batch_retry="online").generate(chats(4))
        assert len(srv.batches) == 1 and srv.online_calls == 2
    with AnthropicTestServer() as srv:
        srv.config.hold.set()
        import threading

        def cancel_soon() -> None:
            srv.created.wait(10)
            time.sleep(0.2)
            srv.batches["msgbatch_0001"].update(
                processing_status="canceling", cancel_initiated_at="2026-01-01T00:00:00Z"
            )

        threading.Thread(target=cancel_soon, daemon=True).start()
        with pytest.raises(BackendError, match="the batch was cancelled.*run the same command again"):
            make(srv, tmp_path / "cancel").generate(chats(4))
        (rec,) = Journal(tmp_path / "cancel" / "batches").records()
        assert rec.collected and len(rec.failed) == 2 and rec.state == "ended"


def test_an_unreadable_results_line_is_named_the_others_kept_and_its_request_asked_again(tmp_path, capsys):
    reqs = chats(5)
    with AnthropicTestServer(malformed={1}) as srv:
        got = make(srv, tmp_path).generate(reqs)
        assert [sum(b["request_counts"].values()) for b in srv.batches.values()] == [5, 1]
        assert [r.text for r in make(srv).generate(reqs)] == [g.text for g in got]
    err = capsys.readouterr().err
    assert "batch msgbatch_0001: 1 line of its results could not be read (the results of msgbatch_0001 line 2" in err
    assert "not JSON" in err and "Traceback" not in err
