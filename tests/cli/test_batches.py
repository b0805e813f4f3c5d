"""``biaslab batches``: list the journal's batches (nothing sent), show one (its state at the provider now),
cancel one or a run's; then the run that needs the cancelled requests submits them anew."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from biaslab.cli import mount
from biaslab.errors import BackendError

pytest.importorskip("openai")

from biaslab.models.base import GenerateRequest, GenerationParams
from biaslab.models.batch.journal import BatchRecord, Journal
from biaslab.models.batch.runner import custom_id
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.openai.backend import OpenAIBackend
from biaslab.models.openai.batch import OpenAIBatchProvider
from tests.models.openai.openai_batch_server import BatchBehaviour, OpenAIBatchServer


def submit(srv: OpenAIBatchServer, cache_dir, reqs: list[GenerateRequest], run: str) -> BatchRecord:
    """What a run with -P batch=true leaves when it stops after submitting: a journaled batch at the server."""
    journal = Journal(cache_dir / "batches")
    provider = OpenAIBatchProvider(OpenAIBackend("test-model", base_url=srv.base_url))
    rec = BatchRecord.new(
        provider="openai",
        base_url=provider.base_url,
        model="test-model",
        endpoint="/v1/chat/completions",
        ids=[custom_id(r) for r in reqs],
        run=run,
        command=f"biaslab run {run}",
    )
    journal.save(rec)

    async def go() -> None:
        await provider.open()
        try:
            await provider.submit(rec, [provider.line(custom_id(r), r) for r in reqs], lambda: journal.save(rec))
        finally:
            await provider.close()

    provider.run_sync(go)
    return rec


def chats(words: str, n: int = 4) -> list[GenerateRequest]:
    return [GenerateRequest.chat(f"{words} {i}", params=GenerationParams(max_tokens=5, seed=i)) for i in range(n)]


def test_list_show_and_cancel(tmp_path, monkeypatch):
    for var in ("OPENAI_API_KEY", "BIASLAB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    behaviour = BatchBehaviour()
    behaviour.hold.set()
    runner = CliRunner()
    cache = ["--cache-dir", str(tmp_path)]
    with OpenAIBatchServer(behaviour) as srv:
        a = submit(srv, tmp_path, chats("alpha"), "jobs-lum on openai/test-model")
        b = submit(srv, tmp_path, chats("beta", 3), "bold on openai/test-model")
        requests_before = srv.stats.requests
        listed = runner.invoke(mount(), ["batches", "list", *cache], terminal_width=200)
        assert listed.exit_code == 0, listed.output
        assert "batch_0001" in listed.output and "batch_0002" in listed.output and "2 batches" in listed.output
        assert "jobs-lum on openai/test-model" in listed.output and srv.stats.requests == requests_before
        only = runner.invoke(mount(), ["batches", "list", "--run", "bold", *cache], terminal_width=200)
        assert "batch_0002" in only.output and "batch_0001" not in only.output
        shown = runner.invoke(mount(), ["batches", "show", "batch_0001", *cache], terminal_width=200)
        assert shown.exit_code == 0, shown.output
        assert "in_progress" in shown.output and "openai/test-model" in shown.output and a.token in shown.output
        cancelled = runner.invoke(mount(), ["batches", "cancel", "--run", "jobs-lum", *cache], terminal_width=200)
        assert cancelled.exit_code == 0 and "batch_0001: cancel requested: now cancelling" in cancelled.output
        assert srv.batches["batch_0002"]["status"] in ("validating", "in_progress")  # not the other run's
        assert runner.invoke(mount(), ["batches", "cancel", *cache]).exit_code != 0  # says what to name
        missing = runner.invoke(mount(), ["batches", "show", "batch_9999", *cache])
        assert missing.exit_code != 0 and "no batch" in str(missing.exception)
        behaviour.hold.clear()
        # the run that needs the cancelled requests reads the answered half and submits the rest anew
        cache_db = ResponseCache(tmp_path / "responses.sqlite")
        model = CachedModel(
            OpenAIBackend(
                "test-model", base_url=srv.base_url, batch=True, batch_poll_seconds=0.02, batch_dir=tmp_path / "batches"
            ),
            cache_db,
        )
        with pytest.raises(Exception, match="cancelled"):
            model.generate(chats("alpha"))
        assert model.stats.model_calls == 2  # the half answered before the cancel is cached
        got = model.generate(chats("alpha"))
        assert all(g.text.startswith("echo: alpha") for g in got) and len(srv.batches) == 3
        assert sum(srv.batches["batch_0003"]["request_counts"][k] for k in ("completed",)) == 2
        cache_db.close()
    records = {r.batch_id: r for r in Journal(tmp_path / "batches").records()}
    assert records["batch_0001"].state == "cancelled" and records["batch_0002"].token == b.token


def test_a_batch_the_server_no_longer_knows_is_named_and_forget_recovers_without_paying_again(tmp_path, monkeypatch):
    for var in ("OPENAI_API_KEY", "BIASLAB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    behaviour = BatchBehaviour()
    behaviour.hold.set()
    runner = CliRunner()
    cache = ["--cache-dir", str(tmp_path)]
    reqs = chats("gamma", 6)
    with OpenAIBatchServer(behaviour) as srv:
        submit(srv, tmp_path, reqs[:3], "jobs-lum on openai/test-model")
        submit(srv, tmp_path, reqs[3:], "jobs-lum on openai/test-model")
        srv.vanish("batch_0001")  # deleted, or made with another project's key
        behaviour.hold.clear()
        cache_db = ResponseCache(tmp_path / "responses.sqlite")
        model = CachedModel(
            OpenAIBackend(
                "test-model", base_url=srv.base_url, batch=True, batch_poll_seconds=0.02, batch_dir=tmp_path / "batches"
            ),
            cache_db,
        )
        with pytest.raises(BackendError) as info:
            model.generate(reqs)
        msg = str(info.value)
        assert "\n" not in msg and "has no Batch API" not in msg
        assert "batch batch_0001 in the batch journal" in msg and "HTTP 404: No batch found with id" in msg
        assert f"`biaslab batches forget batch_0001 --cache-dir {tmp_path}`" in msg
        assert model.stats.model_calls == 3  # the other batch was read and its answers cached
        shown = runner.invoke(mount(), ["batches", "show", "batch_0001", *cache])
        assert shown.exit_code != 0 and "biaslab batches forget batch_0001" in str(shown.exception)
        cancelled = runner.invoke(mount(), ["batches", "cancel", "batch_0001", *cache])
        assert cancelled.exit_code != 0 and "biaslab batches forget batch_0001" in str(cancelled.exception)
        forgot = runner.invoke(mount(), ["batches", "forget", "batch_0001", *cache], terminal_width=200)
        assert forgot.exit_code == 0, forgot.output
        assert "batch_0001: forgotten (was validating)" in forgot.output
        got = model.generate(reqs)  # only the forgotten batch's requests go again, in one new batch
        assert [g.text.split(" seed=")[0] for g in got] == [f"echo: gamma {i}" for i in range(6)]
        assert len(srv.batches) == 3 and srv.online_calls == 0
        assert [x["custom_id"] for x in srv.batch_lines["batch_0003"]] == [custom_id(r) for r in reqs[:3]]
        assert model.stats.model_calls == 6
        cache_db.close()
    states = {r.batch_id: r.state for r in Journal(tmp_path / "batches").records()}
    assert states == {"batch_0001": "forgotten", "batch_0002": "completed", "batch_0003": "completed"}


def test_forget_stale_forgets_the_batches_the_server_answers_404_for(tmp_path, monkeypatch):
    for var in ("OPENAI_API_KEY", "BIASLAB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    behaviour = BatchBehaviour()
    behaviour.hold.set()
    runner = CliRunner()
    cache = ["--cache-dir", str(tmp_path)]
    with OpenAIBatchServer(behaviour) as srv:
        for words in ("one", "two", "three"):
            submit(srv, tmp_path, chats(words, 2), f"bold {words}")
        srv.vanish("batch_0001")
        srv.vanish("batch_0003")
        refused = runner.invoke(mount(), ["batches", "forget", *cache])
        assert refused.exit_code != 0 and "--stale" in str(refused.exception)
        forgot = runner.invoke(mount(), ["batches", "forget", "--stale", *cache], terminal_width=200)
        assert forgot.exit_code == 0, forgot.output
        assert "batch_0001: forgotten" in forgot.output and "batch_0003: forgotten" in forgot.output
        assert "batch_0002" not in forgot.output
        listed = runner.invoke(mount(), ["batches", "list", "--unfinished", *cache], terminal_width=200)
        assert "batch_0002" in listed.output and "batch_0001" not in listed.output and "1 batch;" in listed.output
        again = runner.invoke(mount(), ["batches", "forget", "--stale", *cache], terminal_width=200)
        assert "no batch to forget" in again.output
