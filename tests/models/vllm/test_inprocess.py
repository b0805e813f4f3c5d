"""``vllm/<dir>``: biaslab running vLLM's CPU build in its own process, on the embedded SmolLM2 as float32.

biaslab runs inside the venv of the server tests (:mod:`tests.models.openai.vllm_server`, built on first use;
biaslab's own dependencies are added to it once, :mod:`.inprocess`), with this checkout's ``src`` on its path;
the local engine runs here. Every vLLM engine start costs about a minute of CPU on 2 busy cores: there are two,
and one that fails. The KV cache and the context are biaslab's own sizes (no ``VLLM_CPU_KVCACHE_SPACE``, no
``max_model_len``); a KV cache larger than the machine ends in a one-line error. The run killed mid-way runs vLLM
as it runs by default (an engine core and a worker in processes of their own, killed with biaslab); everything
after it shares one engine in one process (:mod:`.one_engine`, vLLM in that process), and the finished run is run
again from the command line, where vLLM never starts. ``BIASLAB_VLLM=0`` skips the module; without network it
skips with the reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import requires_data, wait_for_cached_answers
from tests.models.openai.test_vllm_server import attempts, cached_answers, compare
from tests.models.openai.vllm_server import Unavailable, f32_checkpoint
from tests.models.vllm.inprocess import biaslab_command, biaslab_python, env, run_biaslab

pytestmark = [
    requires_data,
    pytest.mark.skipif(os.environ.get("BIASLAB_VLLM") == "0", reason="BIASLAB_VLLM=0"),
    pytest.mark.timeout(5400),
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.real_model,
]
N_PAIRS = 100  # paired decisions compared with the local engine (one near-tie may flip, every score within 0.01)
EAGER = ("-P", "enforce_eager=true")  # no torch.compile: minutes less to start; KV cache and context: biaslab's


@pytest.fixture(scope="module")
def reference(local_runs):
    """The local engine's run to compare with; asked for before ``vllm_venv``, so that it runs while the venv is
    still being built in the background."""
    return local_runs(N_PAIRS)


@pytest.fixture(scope="module")
def vllm_venv():
    try:
        python = biaslab_python()
    except Unavailable as exc:
        pytest.skip(str(exc))
    return python, f"vllm/{f32_checkpoint()}"


def test_a_killed_run_resumes_and_scores_generates_and_judges_on_one_engine(reference, vllm_venv, tmp_path):
    """A run in vLLM's default layout killed mid-way; on one engine in one process (:mod:`.one_engine`) the run
    resumed (only what the cache lacks, once), its paired decisions against the local engine's, jobs-lum batched
    and its requests again one at a time (each request's own seed gives the same text whatever runs beside it), and
    fsb-judge; then the finished run again from the command line, which never starts vLLM."""
    python, spec = vllm_venv
    run = ["run", "winosemitism", "--limit", N_PAIRS, "-q"]

    cache, out = tmp_path / "cache", tmp_path / "vllm"
    # killed mid-run: few sequences at a time (not part of the identity), so that the scoring takes long enough
    killed = subprocess.Popen(
        biaslab_command(python, *run, "--model", spec, *EAGER, "-P", "max_num_seqs=2", "--out", out),
        env=env(cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    done = wait_for_cached_answers(cache, 40, timeout=2400)
    os.killpg(killed.pid, signal.SIGKILL)  # biaslab and vLLM's engine processes
    killed.communicate(timeout=120)
    before = cached_answers(cache)
    assert 40 <= done <= before < 2 * N_PAIRS and not (out / "results.json").exists()

    proc = subprocess.run(
        [python, str(Path(__file__).with_name("one_engine.py")), spec, str(cache), str(tmp_path), str(N_PAIRS)],
        capture_output=True,
        text=True,
        env=env(cache, one_process=True),
        timeout=2400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["n_attempts"] == N_PAIRS and results["run"]["cache_hits"] >= before
    assert results["run"]["model_calls"] == cached_answers(cache) - before - 3 - 12 > 0  # only what was missing
    assert results["model"]["backend"] == "vllm" and results["model"]["dtype"] == "float32"
    assert results["model"]["vllm"] and results["model"]["vllm_build"] == "cpu"
    engine = results["model"]["engine"]  # sized by biaslab for the memory free (not part of the identity)
    print(f"\nvLLM in process: the engine biaslab sized: {engine}")
    assert engine["set_by"]["kv_cache_gib"] == "biaslab" and 0 < engine["kv_cache_gib"] <= engine["memory_free_gib"]
    assert 512 <= engine["max_model_len"] <= 8192 and engine["start_seconds"] > 0

    a, b = attempts(reference), attempts(out)
    agree, gap = compare(a, b)
    print(
        f"\nvLLM in process vs local engine: {agree}/{len(a)} decisions agree, "
        f"largest sentence-score gap {gap:.2e} nats"
    )
    assert agree >= N_PAIRS - 1 and gap < 0.01
    assert all(a[k]["n_scored_tokens"] == b[k]["n_scored_tokens"] for k in a)  # the same shared tokens

    alone = json.loads(proc.stdout.strip().splitlines()[-1])
    jobs = attempts(tmp_path / "jobs")
    assert len(jobs) == 3 and all(r["text"].strip() for r in jobs.values())  # 3 occupations, each answered
    assert json.loads((tmp_path / "jobs" / "results.json").read_text())["run"]["model_calls"] == 3
    assert {k: r["text"] for k, r in jobs.items()} == alone
    judged = json.loads((tmp_path / "judge" / "results.json").read_text())
    assert judged["n_attempts"] == 12 and judged["run"]["model_calls"] == 12

    again = run_biaslab(
        python, *[x for x in run if x != "-q"], "--model", spec, *EAGER, "--out", tmp_path / "again", cache=cache
    )
    rerun = json.loads((tmp_path / "again" / "results.json").read_text())
    assert rerun["run"]["model_calls"] == 0 and "loading model" not in again.stderr + again.stdout  # never started
    assert rerun["model"] == {k: v for k, v in results["model"].items() if k != "engine"}  # no engine: no sizes


def test_an_engine_that_cannot_start_is_one_line(vllm_venv, tmp_path):
    """A KV cache larger than the machine (``VLLM_CPU_KVCACHE_SPACE``, which wins over biaslab's sizing): vLLM fails
    once the weights are loaded, and biaslab says why in one line with the fix, vLLM's own lines in the log that
    line names; a non-zero exit. vLLM in biaslab's process (its engine core and worker in processes of their own
    cost 40 s more CPU to start; the log of a failure in a child process: tests/models/vllm/test_sizing.py)."""
    python, spec = vllm_venv
    cache = tmp_path / "cache"
    run = ["run", "winosemitism", "--limit", 2, "-q", "--model", spec, *EAGER, "-P", "distributed_executor_backend=uni"]
    proc = subprocess.run(
        biaslab_command(python, *run, "--out", tmp_path),
        capture_output=True,
        text=True,
        env=env(cache, one_process=True, extra={"VLLM_CPU_KVCACHE_SPACE": "4096"}),
        timeout=900,
    )
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    print(f"\n{lines}")
    assert proc.returncode == 3 and len(lines) == 1, proc.stderr[-3000:]
    line = lines[0]
    assert line.startswith(f"error: {spec} did not start: vLLM could not reserve 4096 GiB of KV cache: ")
    assert "GiB are free; set VLLM_CPU_KVCACHE_SPACE=" in line and not (tmp_path / "results.json").exists()
    log = Path(line.rpartition("(vLLM's log: ")[2].rstrip(")"))
    assert log.parent == cache / "vllm-logs"
    assert "Loading safetensors checkpoint shards" in log.read_text()  # vLLM's own lines, kept off the terminal
