"""Whole ``biaslab run`` processes with ``-P batch=true`` against the loopback batch servers: the same texts and
metrics as online, a run SIGKILLed between submitting and polling resumes its batch (one batch in all, no online
call), a cached re-run submits nothing, and the API key is in no file written."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import requires_data

pytest.importorskip("openai")

from biaslab.app.execute import execute_run
from biaslab.models.base import GenerationParams
from tests.models.anthropic.anthropic_test_server import AnthropicTestServer
from tests.models.openai.openai_batch_server import BatchBehaviour, OpenAIBatchServer

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-test-KILL-SECRET-9f8e7d6c5b4a"
ANTHROPIC_SECRET = "sk-ant-test-KILL-SECRET-1a2b3c4d"


def profile(body: dict) -> str:
    """A character profile whose pronouns depend on the prompt and the seed (the probe has something to measure)."""
    key = json.dumps([body.get("messages"), body.get("seed")], sort_keys=True).encode()
    pick = hashlib.sha256(key).digest()[0] % 4
    return [
        "Sam is a nurse. He works nights and he likes it.",
        "Sam is kind. She leads the team and she cares.",
        "Sam is calm. They plan ahead and they listen.",
        "Sam is forty and careful.",
    ][pick]


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "BIASLAB_API_KEY"))
        and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        PYTHONPATH=str(REPO / "src"),
        BIASLAB_CACHE_DIR=str(tmp_path / "cache"),
        **extra,
    )
    return env


def biaslab(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "biaslab.cli", *args],
        env=env,
        cwd=env["HOME"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def batch_run(model: str, base_url: str, limit: int, *more: str) -> list[str]:
    """``biaslab run jobs-lum`` through ``model``'s batch API at ``base_url``, polled every 0.2 s."""
    return ["run", "jobs-lum", "--model", model, "--base-url", base_url, "--limit", str(limit), "-P", "batch=true",
            "-P", "batch_poll_seconds=0.2", *more]  # fmt: skip


def finish(proc: subprocess.Popen, timeout: float = 240) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


def leaked(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@requires_data
def test_jobs_lum_through_the_batch_api_gives_the_online_texts_and_metrics(tmp_path, monkeypatch):
    from rich.console import Console

    for var in ("OPENAI_API_KEY", "BIASLAB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with OpenAIBatchServer(reply=profile) as srv:
        runs = {}
        for mode, options in (("online", {}), ("batch", {"batch": "true", "batch_poll_seconds": "0.02"})):
            results, out = execute_run(
                "jobs-lum",
                model="openai/test-model",
                base_url=srv.base_url,
                repetitions=2,
                limit=12,
                seed=3,
                out=tmp_path / mode,
                params=GenerationParams(),
                cache_dir=tmp_path / f"cache-{mode}",
                quiet=True,
                console=Console(file=open(os.devnull, "w")),
                probe_options=dict(options),
            )
            rows = [json.loads(x) for x in (out / "attempts.jsonl").read_text().splitlines()]
            runs[mode] = (results, rows)
        assert len(srv.batches) == 1 and srv.batches["batch_0001"]["request_counts"]["total"] == 24
        assert srv.online_calls == 24  # the online run's only
    (r_on, a_on), (r_b, a_b) = runs["online"], runs["batch"]
    assert [(a["item_id"], a["repetition"], a["text"]) for a in a_b] == [
        (a["item_id"], a["repetition"], a["text"]) for a in a_on
    ]
    assert r_b.metric_dicts() == r_on.metric_dicts() and r_b.model == r_on.model
    assert {a["evaluation"] for a in a_b} >= {"male", "female"}  # the metrics measure something
    assert r_b.run.model_calls == 24 and r_b.run.cache_hits == 0


def _journal_has_batch_id(cache: Path) -> bool:
    for p in (cache / "batches").glob("*.json"):
        try:
            if json.loads(p.read_text()).get("batch_id"):
                return True
        except ValueError:
            continue
    return False


@pytest.mark.slow
@requires_data
@pytest.mark.parametrize("when", ["after-journal", "inside-window"])
def test_a_run_killed_after_submitting_resumes_its_batch(tmp_path, when):
    """SIGKILL once the batch exists (its id journaled, or, inside the window, only the server knows it); the
    re-run waits for that batch: one batch in all, no online call; a third run is answered by the cache."""
    behaviour = BatchBehaviour(create_delay=3.0 if when == "inside-window" else 0.0)
    behaviour.hold.set()  # batches stay in progress until the re-run
    env = clean_env(tmp_path, OPENAI_API_KEY=SECRET)
    with OpenAIBatchServer(behaviour, reply=profile, api_key=SECRET) as srv:
        args = batch_run("openai/test-model", srv.base_url, 6, "--out", str(tmp_path / "out"))
        proc = biaslab(args, env)
        assert srv.created.wait(120), finish(proc)[1]
        if when == "after-journal":
            deadline = time.time() + 30
            while not _journal_has_batch_id(tmp_path / "cache") and time.time() < deadline:
                time.sleep(0.01)
            assert _journal_has_batch_id(tmp_path / "cache")
        proc.send_signal(signal.SIGKILL)
        assert finish(proc)[0] == -signal.SIGKILL
        assert not (tmp_path / "out" / "results.json").exists()
        behaviour.hold.clear()
        code, output = finish(biaslab(args, env))
        assert code == 0, output
        assert len(srv.batches) == 1, output  # every POST /v1/batches makes one
        assert srv.online_calls == 0
        assert "resuming 1 batch submitted earlier (batch_0001)" in output
        if when == "inside-window":
            assert "found batch batch_0001, whose submission was interrupted" in output
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        assert results["run"]["model_calls"] == 6 and results["n_attempts"] == 6
        uploads = srv.stats.by_path["/v1/files"]
        code, output = finish(biaslab(args, env))  # cached: nothing submitted, nothing uploaded, no call
        assert code == 0, output
        assert len(srv.batches) == 1 and srv.stats.by_path["/v1/files"] == uploads and srv.online_calls == 0
        assert json.loads((tmp_path / "out" / "results.json").read_text())["run"]["cache_hits"] == 6
    assert all(h == f"Bearer {SECRET}" for h in srv.stats.auth_headers)
    assert leaked(tmp_path, SECRET) == []  # cache, journal, run outputs, home: the key is in none


@pytest.mark.slow
@requires_data
def test_claude_batch_run_killed_after_submitting_resumes_and_likelihood_probes_cannot_score(tmp_path):
    pytest.importorskip("anthropic")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY=ANTHROPIC_SECRET)
    with AnthropicTestServer(api_key=ANTHROPIC_SECRET, create_delay=2.0) as srv:
        srv.config.hold.set()
        args = batch_run("anthropic/claude-test", srv.base_url, 5, "--out", str(tmp_path / "out"))
        proc = biaslab(args, env)
        assert srv.created.wait(120), finish(proc)[1]
        proc.send_signal(signal.SIGKILL)  # inside the window: the server made the batch, the client never heard
        finish(proc)
        srv.config.hold.clear()
        code, output = finish(biaslab(args, env))
        assert code == 0, output
        assert len(srv.batches) == 1 and srv.online_calls == 0
        assert "found batch msgbatch_0001, whose submission was interrupted" in output
        online = tmp_path / "online"
        code, output = finish(biaslab([*args[:8], "--out", str(online), "--cache-dir", str(tmp_path / "c2")], env))
        assert code == 0, output
        texts = [
            [json.loads(x)["text"] for x in (d / "attempts.jsonl").read_text().splitlines()]
            for d in (tmp_path / "out", online)
        ]
        assert texts[0] == texts[1] and srv.online_calls == 5
        code, output = finish(
            biaslab(
                [
                    "run",
                    "winosemitism",
                    "--model",
                    "anthropic/claude-test",
                    "--base-url",
                    srv.base_url,
                    "--limit",
                    "2",
                    "--out",
                    str(tmp_path / "ws"),
                ],
                env,
            )
        )
        assert code != 0 and "cannot score log-likelihoods" in output and "Traceback" not in output
        assert len([ln for ln in output.strip().splitlines() if "cannot score" in ln]) == 1
    assert all(ANTHROPIC_SECRET in (h.get("x-api-key", "") + h.get("authorization", "")) for h in srv.headers)
    assert leaked(tmp_path, ANTHROPIC_SECRET) == []


@pytest.mark.slow
@requires_data
def test_two_runs_started_together_on_one_cache_submit_each_batch_once(tmp_path):
    """Two identical `-P batch=true` runs started at once on one cache, twice over (the second at once, then
    0.6 s later). The upload is slow (1.5 s), so the second run always comes while the first's journal record has
    no batch id yet: it waits for the journal's lock and then for the first's batch. Some lines fail, and both
    runs read them: one retry batch is submitted, not two. Both runs end with the same texts."""
    for attempt in (0, 2):
        behaviour = BatchBehaviour(upload_delay=1.5, fail_lines={1})
        home = tmp_path / f"try{attempt}"
        home.mkdir()
        env = clean_env(home)
        with OpenAIBatchServer(behaviour, reply=profile) as srv:
            args = batch_run("openai/test-model", srv.base_url, 6)
            first = biaslab([*args, "--out", str(home / "out-1")], env)
            time.sleep(0.3 * attempt)
            second = biaslab([*args, "--out", str(home / "out-2")], env)
            (code1, out1), (code2, out2) = finish(first), finish(second)
            assert code1 == 0 and code2 == 0, out1 + out2
            assert [b["request_counts"]["total"] for b in srv.batches.values()] == [6, 2], out1 + out2
            assert srv.online_calls == 0
        texts = [
            [json.loads(x)["text"] for x in (home / out / "attempts.jsonl").read_text().splitlines()]
            for out in ("out-1", "out-2")
        ]
        assert texts[0] == texts[1] and len(texts[0]) == 6
