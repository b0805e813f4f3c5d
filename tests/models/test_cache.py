import sqlite3

import pytest

from biaslab.errors import CacheError
from biaslab.models.base import GenerateRequest, GenerationParams, LoglikelihoodRequest, LoglikelihoodResult
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend


def _requests(n, rep=0, seed=1):
    return [
        GenerateRequest.chat(f"prompt {i}", params=GenerationParams(seed=seed + i), repetition=rep) for i in range(n)
    ]


def test_second_call_is_served_from_cache(tmp_path):
    backend = ScriptedBackend("echo")
    model = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
    first = model.generate(_requests(5))
    assert backend.calls == 5
    again = CachedModel(ScriptedBackend("echo"), ResponseCache(tmp_path / "c.sqlite"))
    second = again.generate(_requests(5))
    assert again.backend.calls == 0 and again.stats.cache_hits == 5
    assert [r.text for r in first] == [r.text for r in second]


def test_key_includes_repetition_params_and_model(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    a = CachedModel(ScriptedBackend("echo"), cache)
    a.generate(_requests(2))
    a.generate(_requests(2, rep=1))  # other repetition: new calls
    a.generate(_requests(2, seed=99))  # other seed: new calls
    assert a.backend.calls == 6
    b = CachedModel(ScriptedBackend("he"), cache)  # other model: nothing shared
    b.generate(_requests(2))
    assert b.backend.calls == 2


def test_duplicate_requests_in_one_batch_call_the_model_once(tmp_path):
    model = CachedModel(ScriptedBackend("echo"), ResponseCache(tmp_path / "c.sqlite"))
    out = model.generate(_requests(1) * 3)
    assert model.backend.calls == 1 and len(out) == 3


def test_loglikelihood_is_cached(tmp_path):
    model = CachedModel(ScriptedBackend("echo"), ResponseCache(tmp_path / "c.sqlite"))
    reqs = [LoglikelihoodRequest("a bb ccc", context="x")]
    assert model.loglikelihood(reqs)[0].total == pytest.approx(-0.6)
    model.loglikelihood(reqs)
    assert model.backend.calls == 1


def test_results_persist_one_by_one_when_the_backend_fails_midway(tmp_path):
    class Flaky(ScriptedBackend):
        def generate(self, requests, on_result=None):
            for i, r in enumerate(requests):
                if i == 3:
                    raise RuntimeError("crash")
                super().generate([r], lambda _, res, i=i: on_result(i, res))

    with pytest.raises(RuntimeError):
        CachedModel(Flaky("echo"), ResponseCache(tmp_path / "c.sqlite")).generate(_requests(6))
    resumed = CachedModel(ScriptedBackend("echo"), ResponseCache(tmp_path / "c.sqlite"))
    resumed.generate(_requests(6))
    assert resumed.stats.cache_hits == 3 and resumed.backend.calls == 3


def test_corrupt_database_is_a_clear_error(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError, match="not a usable SQLite database"):
        ResponseCache(path)


def test_api_key_reaches_the_server_but_never_the_cache(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "openai"))
    from openai_test_server import OpenAITestServer

    from biaslab.models.registry import load_model

    secret = "sk-secret-123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with OpenAITestServer(api_key=secret) as server:  # answers 401 to any other key
        backend = load_model("openai/test-model", base_url=server.base_url)
        model = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
        answers = model.generate(_requests(2))
        model.close()
    assert all(a.text for a in answers) and model.stats.model_calls == 2
    dump = "\n".join(sqlite3.connect(tmp_path / "c.sqlite").iterdump())
    assert "test-model" in dump and secret not in dump
    assert secret not in repr(backend.identity())


def test_a_scoring_call_with_answers_cached_hands_the_backend_the_whole_call_and_keeps_the_cached_answers(tmp_path):
    """A backend whose scores depend on their batch-mates (a local model's packed batches) sees every distinct
    request of a resumed call, the cached ones marked, so that it can form the batches of an uninterrupted call;
    what it reports for a cached request does not replace the committed answer."""

    class BatchDependent(ScriptedBackend):
        seen: list[tuple[list[str], list[int]]] = []

        def loglikelihood_rest(self, requests, answered, on_result):
            self.seen.append(([r.continuation for r in requests], sorted(answered)))
            batch = [r.continuation for r in requests]
            results = [LoglikelihoodResult([-float(len(batch))], [r.continuation], None) for r in requests]
            for i, result in enumerate(results):
                on_result(i, result)
            return results

    reqs = [LoglikelihoodRequest(t) for t in ("a", "b", "c", "b")]
    cache = ResponseCache(tmp_path / "c.sqlite")
    CachedModel(BatchDependent("echo"), cache).loglikelihood(reqs[:1])  # "a" alone: -1
    model = CachedModel(BatchDependent("echo"), cache)
    got = model.loglikelihood(reqs)
    assert BatchDependent.seen[-1] == (["a", "b", "c"], [0])
    assert [r.token_logprobs for r in got] == [[-1.0], [-3.0], [-3.0], [-3.0]]
    assert model.stats.model_calls == 2 and model.stats.cache_hits == 1 and cache.count() == 3
