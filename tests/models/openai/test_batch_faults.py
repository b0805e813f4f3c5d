"""``-P batch=true`` against a Batch API whose results are damaged: an output line that is not JSON, a batch
completed without an output file, a request with two different answers. The good lines are kept, the others
are named in one line and asked again (once for a request that got no usable line), never in a loop."""

from __future__ import annotations

import pytest

pytest.importorskip("openai")

from biaslab.errors import BackendError
from biaslab.models.batch.journal import Journal
from biaslab.models.batch.runner import custom_id
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.openai.backend import OpenAIBackend
from tests.models.openai.openai_batch_server import BatchBehaviour, OpenAIBatchServer
from tests.models.openai.test_batch import backend, requests


def online_texts(srv: OpenAIBatchServer, reqs) -> list[str]:
    return [r.text for r in OpenAIBackend("test-model", base_url=srv.base_url).generate(reqs)]


def test_an_unreadable_output_line_is_named_the_others_kept_and_its_request_asked_again(batch_server, tmp_path, capsys):
    srv = batch_server(BatchBehaviour(malformed={1}))
    reqs = requests(5)
    reported: list[int] = []
    got = backend(srv, tmp_path).generate(reqs, lambda i, r: reported.append(i))
    assert [g.text for g in got] == online_texts(srv, reqs) and sorted(reported) == list(range(5))
    # the second output line was cut short: only its request goes again, the four good answers are kept
    assert [b["request_counts"]["total"] for b in srv.batches.values()] == [5, 1]
    assert [x["custom_id"] for x in srv.batch_lines["batch_0002"]] == [custom_id(reqs[1])]
    err = capsys.readouterr().err
    assert "batch batch_0001: 1 line of its results could not be read (file file-0002 line 2: not JSON" in err
    assert "Traceback" not in err
    first = Journal(tmp_path / "batches").records()[0]
    assert first.collected and list(first.failed) == [custom_id(reqs[1])]


def test_a_request_whose_line_stays_unreadable_ends_the_run_in_one_line_and_the_rerun_finishes(batch_server, tmp_path):
    srv = batch_server(BatchBehaviour(malformed={1, 2}))
    reqs = requests(5)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    model = CachedModel(backend(srv, tmp_path), cache)
    with pytest.raises(BackendError) as info:
        model.generate(reqs)
    msg = str(info.value)
    assert "\n" not in msg and "no usable answer for a request in two batches, the last batch_0002" in msg
    assert "run the same command again" in msg
    assert len(srv.batches) == 2 and model.stats.model_calls == 4  # the good lines' answers are cached
    again = CachedModel(backend(srv, tmp_path), cache)
    got = again.generate(reqs)  # not stuck: only the unanswered request goes again
    assert again.stats.cache_hits == 4 and again.stats.model_calls == 1
    assert len(srv.batches) == 3 and srv.batches["batch_0003"]["request_counts"]["total"] == 1
    assert [g.text for g in got] == online_texts(srv, reqs)
    cache.close()


def test_a_completed_batch_without_output_is_asked_again_once_not_in_a_loop(batch_server, tmp_path):
    srv = batch_server(BatchBehaviour(no_output={1, 2, 3, 4}))
    with pytest.raises(BackendError) as info:
        backend(srv, tmp_path).generate(requests(10))
    msg = str(info.value)
    assert len(srv.batches) == 2 and srv.online_calls == 0  # the first and one more, not three
    assert "\n" not in msg and "no result in the completed batch" in msg and "(and 9 more failed requests)" in msg


def test_a_completed_batch_without_output_has_its_error_file_read(batch_server, tmp_path, capsys):
    srv = batch_server(BatchBehaviour(no_output={1}, fail_lines={1}))
    reqs = requests(10)
    got = backend(srv, tmp_path).generate(reqs)
    assert [g.text for g in got] == online_texts(srv, reqs)
    assert [b["request_counts"]["total"] for b in srv.batches.values()] == [10, 10]
    err = capsys.readouterr().err
    assert "batch batch_0001 completed: 0 answered, 10 not (7 no result in the completed batch; 3 HTTP 500" in err


def test_different_answers_for_one_request_keep_neither_and_it_is_said(batch_server, tmp_path, capsys):
    srv = batch_server(BatchBehaviour(duplicate={1}))
    reqs = requests(4)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    got = CachedModel(backend(srv, tmp_path), cache).generate(reqs)
    assert [g.text for g in got] == online_texts(srv, reqs)  # the other answer is kept nowhere, nor cached
    assert all("a different answer" not in g.text for g in got)
    assert [x["custom_id"] for x in srv.batch_lines["batch_0002"]] == [custom_id(reqs[0])]
    err = capsys.readouterr().err
    assert (
        f"batch batch_0001: 1 request has different answers on several lines of its results "
        f"(custom_id {custom_id(reqs[0])[:16]}); none of them is kept"
    ) in err
    cache.close()
