"""``-P batch=true`` on the openai backend, over real HTTP against the loopback Batch API server."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_test_server import OpenAITestServer

from biaslab.errors import BackendError, ConfigError
from biaslab.models.base import GenerateRequest, GenerationParams, LoglikelihoodRequest
from biaslab.models.batch.journal import BatchRecord, Journal
from biaslab.models.batch.runner import custom_id
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.openai.backend import OpenAIBackend
from tests.models.openai.openai_batch_server import BatchBehaviour

SECRET = "sk-test-BATCH-SECRET-0123456789"


def requests(n: int = 7, words: str = "hello") -> list[GenerateRequest]:
    return [
        GenerateRequest.chat(
            f"{words} {i} world",
            system="Be brief.",
            params=GenerationParams(max_tokens=6, temperature=0.7, seed=100 + i),
            repetition=i % 2,
        )
        for i in range(n)
    ]


def backend(srv: OpenAITestServer, tmp_path: Path, **options) -> OpenAIBackend:
    options.setdefault("batch", True)
    options.setdefault("batch_poll_seconds", 0.02)
    options.setdefault("retry_base_delay", 0.01)
    return OpenAIBackend("test-model", base_url=srv.base_url, batch_dir=tmp_path / "batches", **options)


def test_batch_answers_equal_online_answers_with_one_batch_and_no_online_call(batch_server, tmp_path, capsys):
    srv = batch_server()
    reqs = requests()
    reported: list[int] = []
    got = backend(srv, tmp_path).generate(reqs, lambda i, r: reported.append(i))
    assert len(srv.batches) == 1 and srv.online_calls == 0
    online = OpenAIBackend("test-model", base_url=srv.base_url).generate(reqs)
    assert [g.to_json() for g in got] == [o.to_json() for o in online]
    assert sorted(reported) == list(range(len(reqs)))
    # the uploaded lines are the online bodies, one per request, keyed by the request's hash
    batch = next(iter(srv.batches.values()))
    lines = srv.batch_lines[batch["id"]]
    assert [x["custom_id"] for x in lines] == [custom_id(r) for r in reqs]
    assert all(x["url"] == "/v1/chat/completions" and x["method"] == "POST" for x in lines)
    assert lines[0]["body"] == {
        "model": "test-model",
        "max_tokens": 6,
        "temperature": 0.7,
        "seed": 100,
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello 0 world"}],
    }
    assert batch["metadata"]["biaslab_token"] and batch["completion_window"] == "24h"
    assert "submitted batch batch_0001 to openai (7 requests" in capsys.readouterr().err
    # the journal holds the batch id and the request hashes, read back
    (rec,) = Journal(tmp_path / "batches").records()
    assert rec.batch_id == "batch_0001" and rec.collected and rec.state == "completed" and not rec.failed
    assert rec.ids == [custom_id(r) for r in reqs] and rec.token == batch["metadata"]["biaslab_token"]


def test_duplicate_requests_go_once_and_each_copy_is_answered(batch_server, tmp_path):
    srv = batch_server()
    reqs = requests(3)
    got = backend(srv, tmp_path).generate(reqs + reqs[:2])
    assert srv.batches["batch_0001"]["request_counts"]["total"] == 3
    assert [g.text for g in got[3:]] == [g.text for g in got[:2]]


def test_batches_are_split_at_the_request_limit(batch_server, tmp_path):
    srv = batch_server()
    got = backend(srv, tmp_path, batch_max_requests=3).generate(requests(7))
    assert [b["request_counts"]["total"] for b in srv.batches.values()] == [3, 3, 1]
    assert all(g is not None for g in got) and srv.online_calls == 0


def test_failed_and_expired_lines_go_again_in_new_batches_and_it_is_said(batch_server, tmp_path, capsys):
    srv = batch_server(BatchBehaviour(fail_lines={1}, expire={2}))
    reqs = requests(7)
    got = backend(srv, tmp_path).generate(reqs)
    online = OpenAIBackend("test-model", base_url=srv.base_url).generate(reqs)
    assert [g.text for g in got] == [o.text for o in online]
    # batch 1: lines 3 and 6 fail with HTTP 500; batch 2 (those two) expires half-way; batch 3 answers the last
    assert [b["request_counts"]["total"] for b in srv.batches.values()] == [7, 2, 1]
    assert [b["status"] for b in srv.batches.values()] == ["completed", "expired", "completed"]
    err = capsys.readouterr().err
    assert "2 HTTP 500" in err and "retrying 2 failed or expired lines of batch batch_0001 in a new batch" in err
    assert "batch_expired" in err and "retrying 1 failed or expired line of batch batch_0002" in err
    records = Journal(tmp_path / "batches").records()
    assert [r.round for r in records] == [1, 2, 3] and len(records[0].failed) == 2


def test_batch_retry_online_sends_the_failed_lines_online(batch_server, tmp_path, capsys):
    srv = batch_server(BatchBehaviour(expire={1}))
    got = backend(srv, tmp_path, batch_retry="online").generate(requests(6))
    assert len(srv.batches) == 1 and srv.online_calls == 3  # the expired half
    assert all(g.text.startswith("echo:") for g in got)
    assert "online (-P batch_retry=online" in capsys.readouterr().err


def test_a_batch_refused_at_validation_is_a_one_line_error(batch_server, tmp_path):
    srv = batch_server(BatchBehaviour(fail_validation={1}))
    with pytest.raises(BackendError) as info:
        backend(srv, tmp_path).generate(requests(3))
    msg = str(info.value)
    assert "\n" not in msg and "refused the batch (injected validation failure)" in msg
    assert "run the same command again" in msg


def test_lines_refused_for_max_tokens_go_again_with_max_completion_tokens(batch_server, tmp_path):
    srv = batch_server(reject_max_tokens_chat=True)
    got = backend(srv, tmp_path).generate(requests(2))
    # newer models want max_completion_tokens: the lines are submitted again with it, as the online path does
    assert len(srv.batches) == 2 and all(g.text for g in got)
    assert "max_completion_tokens" in srv.batch_lines["batch_0002"][0]["body"]


def test_lines_the_server_rejects_fail_the_run_in_one_line_after_the_rest_is_reported(batch_server, tmp_path):
    srv = batch_server(models=("other-model",))
    reported: list[int] = []
    with pytest.raises(BackendError) as info:
        backend(srv, tmp_path).generate(requests(3), lambda i, r: reported.append(i))
    msg = str(info.value)
    assert "\n" not in msg and "HTTP 404" in msg and "does not exist" in msg and "(and 2 more failed requests)" in msg
    assert len(srv.batches) == 1 and srv.online_calls == 0 and reported == []


def test_a_kill_between_create_and_journal_is_found_by_its_token(batch_server, tmp_path, capsys):
    srv = batch_server()
    reqs = requests(4)
    be = backend(srv, tmp_path)
    # what a run killed right after POST /v1/batches leaves: a record with the file id but no batch id
    rec = BatchRecord.new(
        provider="openai",
        base_url=be.base_url,
        model="test-model",
        endpoint="/v1/chat/completions",
        ids=[custom_id(r) for r in reqs],
    )
    lines = b"".join(
        json.dumps(
            {
                "custom_id": c,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": "test-model", "messages": [{"role": "user", "content": "x"}]},
            }
        ).encode()
        + b"\n"
        for c in rec.ids
    )
    rec.input_file_id = srv.new_file(lines, "batch", "x.jsonl")["id"]
    srv.new_batch(
        {
            "input_file_id": rec.input_file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
            "metadata": {"biaslab_token": rec.token},
        }
    )
    Journal(tmp_path / "batches").save(rec)
    got = be.generate(reqs)
    assert len(srv.batches) == 1 and srv.online_calls == 0 and all(g.text.startswith("echo: x ") for g in got)
    assert "found batch batch_0001, whose submission was interrupted" in capsys.readouterr().err
    assert Journal(tmp_path / "batches").records()[0].batch_id == "batch_0001"


def test_an_interrupted_submission_that_never_reached_the_server_is_submitted_again(batch_server, tmp_path):
    srv = batch_server()
    reqs = requests(2)
    be = backend(srv, tmp_path)
    rec = BatchRecord.new(
        provider="openai",
        base_url=be.base_url,
        model="test-model",
        endpoint="/v1/chat/completions",
        ids=[custom_id(r) for r in reqs],
    )
    Journal(tmp_path / "batches").save(rec)
    be.generate(reqs)
    assert len(srv.batches) == 1
    states = {r.token: r.state for r in Journal(tmp_path / "batches").records()}
    assert states[rec.token] == "abandoned" and len(states) == 2


def test_cache_keys_are_shared_between_batch_and_online(batch_server, tmp_path):
    srv = batch_server()
    reqs = requests(5)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    batched = CachedModel(backend(srv, tmp_path), cache)
    first = batched.generate(reqs[:3])  # three answers from a batch
    online = CachedModel(OpenAIBackend("test-model", base_url=srv.base_url), cache)
    both = online.generate(reqs)  # those three from the cache, two online
    assert online.stats.cache_hits == 3 and srv.online_calls == 2
    assert [r.to_json() for r in both[:3]] == [r.to_json() for r in first]
    again = CachedModel(backend(srv, tmp_path), cache)
    again.generate(reqs)  # a cached re-run with batch on submits nothing
    assert again.stats.model_calls == 0 and len(srv.batches) == 1
    cache.close()


def test_likelihood_requests_stay_online_and_it_is_said(batch_server, tmp_path, capsys):
    srv = batch_server()
    scores = backend(srv, tmp_path).loglikelihood([LoglikelihoodRequest("the cat sat", context="Once")])
    assert scores[0].token_logprobs and len(srv.batches) == 0
    assert "log-likelihood requests go online" in capsys.readouterr().err


def test_a_server_without_the_batch_api_is_a_one_line_error(make_server, tmp_path):
    srv = make_server()
    with pytest.raises(BackendError, match=r"has no Batch API \(HTTP 404.*run without -P batch=true"):
        backend(srv, tmp_path).generate(requests(1))


def test_the_key_is_sent_but_written_nowhere(batch_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    srv = batch_server(BatchBehaviour(fail_lines={1}), api_key=SECRET)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    CachedModel(backend(srv, tmp_path), cache).generate(requests(4))
    cache.close()
    assert all(h == f"Bearer {SECRET}" for h in srv.stats.auth_headers)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" for p in written)
    assert not [p for p in written if SECRET.encode() in p.read_bytes()]


def test_batch_options_are_checked(tmp_path):
    srv = OpenAITestServer()
    for options, message in (
        ({"batch": "maybe"}, "true or false"),
        ({"batch_poll_seconds": -1}, "0 or more"),
        ({"batch_retry": "later"}, "batch .a new batch. or online"),
        ({"batch": False, "batch_poll_seconds": 5}, "only apply with -P batch=true"),
    ):
        with pytest.raises(ConfigError, match=message):
            OpenAIBackend("test-model", base_url=srv.base_url, **options)


def test_the_bar_shows_the_batch_states(batch_server, tmp_path):
    from rich.console import Console

    from biaslab.progress import attempt_progress

    behaviour = BatchBehaviour()
    srv = batch_server(behaviour)
    seen: list[str] = []
    with attempt_progress(3, "jobs-lum on openai/test-model", console=Console(file=open("/dev/null", "w"))) as bar:
        original = bar.set_status

        def spy(text: str) -> None:
            seen.append(text)
            original(text)

        bar.set_status = spy  # type: ignore[method-assign]
        backend(srv, tmp_path).generate(requests(3), lambda i, r: bar(i, r, False))
    assert "batch_0001 in_progress · 0/3 done at the provider" in seen
    assert any(s.startswith("batch_0001 finalizing") for s in seen) and seen[-1] == ""  # cleared once read
    assert Journal(tmp_path / "batches").records()[0].run == "jobs-lum on openai/test-model"
    assert time.time() - Journal(tmp_path / "batches").records()[0].created < 60
