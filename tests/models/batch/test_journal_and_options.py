"""The batch journal, the batch options, request ids and the split at the providers' limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from biaslab.errors import CacheError, ConfigError
from biaslab.models.base import GenerateRequest, GenerationParams
from biaslab.models.batch.journal import BatchRecord, Journal
from biaslab.models.batch.options import BatchSettings, split_batch_options
from biaslab.models.batch.runner import custom_id, split


def record(**kw) -> BatchRecord:
    base = dict(provider="openai", base_url="http://x/v1", model="m", endpoint="/v1/chat/completions", ids=["a", "b"])
    return BatchRecord.new(**{**base, **kw})


def test_custom_ids_are_stable_hashes_of_the_cache_relevant_fields():
    a = GenerateRequest.chat("hi", params=GenerationParams(seed=1, max_tokens=5))
    assert custom_id(a) == custom_id(GenerateRequest.chat("hi", params=GenerationParams(seed=1, max_tokens=5)))
    assert len(custom_id(a)) == 64 and all(c in "0123456789abcdef" for c in custom_id(a))
    others = [
        GenerateRequest.chat("hi", params=GenerationParams(seed=2, max_tokens=5)),
        GenerateRequest.chat("hi", params=GenerationParams(seed=1, max_tokens=5), repetition=1),
        GenerateRequest.chat("hi", system="s", params=GenerationParams(seed=1, max_tokens=5)),
    ]
    assert len({custom_id(r) for r in [a, *others]}) == 4


def test_split_respects_the_request_and_byte_limits():
    ids = [str(i) for i in range(7)]
    lines = [b"x" * 9] * 7  # 10 bytes each with its newline
    assert [c for c, _ in split(ids, lines, 3, 10**6)] == [["0", "1", "2"], ["3", "4", "5"], ["6"]]
    assert [len(c) for c, _ in split(ids, lines, 100, 25)] == [2, 2, 2, 1]  # 20 bytes fit in 25, 30 do not
    assert [len(c) for c, _ in split(ids, lines, 100, 30)] == [3, 3, 1]
    assert split([], [], 3, 10) == []


def test_options():
    settings, rest = split_batch_options(
        {
            "batch": "yes",
            "batch_poll_seconds": "2.5",
            "batch_retry": "Online",
            "batch_max_requests": "10",
            "max_concurrency": 4,
        }
    )
    assert settings == BatchSettings(True, 2.5, "online", 10, None) and rest == {"max_concurrency": 4}
    assert split_batch_options({})[0] == BatchSettings()
    assert split_batch_options({})[0].poll_seconds == 60.0
    for bad, message in (
        ({"batch": "2"}, "true or false"),
        ({"batch": True, "batch_poll_seconds": "soon"}, "seconds"),
        ({"batch": True, "batch_max_requests": -1}, "0 .the provider's limit. or more"),
        ({"batch_retry": "online"}, "only apply with -P batch=true"),
    ):
        with pytest.raises(ConfigError, match=message):
            split_batch_options(bad)


def test_batch_options_go_to_hosted_models_only(tmp_path):
    from biaslab.models.model_options import check_model_options
    from biaslab.models.open import open_cached_model

    with pytest.raises(
        ConfigError,
        match=r"model options \(batch\) apply to openai/ models and anthropic/ models, "
        "not smollm2",
    ):
        open_cached_model("smollm2", cache_dir=tmp_path, model_options={"batch": "true"})
    with pytest.raises(ConfigError, match=r"model options \(precision\) apply to local models"):
        check_model_options("openai", "openai/gpt-4o-mini", {"precision": "bf16", "batch": "true"})
    with pytest.raises(ConfigError, match=r"model options \(tokenizer\) apply to openai/ models, not anthropic/c"):
        check_model_options("anthropic", "anthropic/c", {"tokenizer": "hf/x", "batch": "true"})
    check_model_options("anthropic", "anthropic/c", {"batch": "true", "batch_poll_seconds": "5"})


def test_batch_options_are_model_options_for_every_probe():
    from biaslab.app.resolve import split_model_options

    probe, model = split_model_options("jobs-lum", {"batch": "true", "batch_retry": "online", "max_tokens": "5"})
    assert model == {"batch": "true", "batch_retry": "online"} and probe == {"max_tokens": "5"}


def test_journal_round_trip_find_and_filters(tmp_path):
    journal = Journal(tmp_path / "batches")
    assert journal.records() == []
    a, b = record(), record(provider="anthropic", base_url="https://api.anthropic.com", endpoint="/v1/messages")
    a.batch_id = "batch_abc123"
    for r in (a, b):
        journal.save(r)
    assert [r.token for r in journal.records()] == [a.token, b.token]
    assert journal.records(provider="anthropic")[0].to_json() == b.to_json()
    assert journal.find("batch_abc123").token == a.token and journal.find(b.token[:8]).token == b.token
    with pytest.raises(ConfigError, match="no batch"):
        journal.find("batch_zzz")
    on_disk = json.loads(journal.path(a).read_text())
    assert on_disk["batch_id"] == "batch_abc123" and on_disk["ids"] == ["a", "b"]
    assert not [p for p in journal.directory.iterdir() if p.name.startswith(".")]  # no temporary left
    journal.path(b).write_text("{half")
    with pytest.raises(CacheError, match="unreadable"):
        journal.records()


def test_a_save_is_whole_after_a_sigkill_at_any_moment(tmp_path):
    """A process killed while saving leaves the earlier record or the new one, never a broken file."""
    code = (
        "import sys, os, signal; from biaslab.models.batch.journal import BatchRecord, Journal\n"
        "j = Journal(sys.argv[1]); r = BatchRecord.new(provider='openai', base_url='u', model='m', endpoint='e', "
        "ids=[str(i) for i in range(50000)])\n"
        "r.token = 'fixed'\nj.save(r)\nprint('saved', flush=True)\n"
        "while True:\n    r.counts = {'n': r.counts.get('n', 0) + 1}; j.save(r)\n"
    )
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert proc.stdout.readline().strip() == "saved"
        proc.kill()
        proc.wait()
        (rec,) = Journal(tmp_path).records()
        assert len(rec.ids) == 50000 and rec.token == "fixed"
