"""``vllm/<dir>``: biaslab running vLLM's CPU build in its own process, on the embedded SmolLM2 as float32.

biaslab runs inside the venv of the server tests (:mod:`tests.models.openai.vllm_server`, built on first use;
biaslab's own dependencies are added to it once, :mod:`.inprocess`), with this checkout's ``src`` on its path;
the local engine runs here. Every vLLM run loads the model (minutes on 2 busy cores): the runs are few and each
checks several things. The run killed mid-way runs vLLM as it runs by default (an engine core and a worker in
processes of their own, killed with biaslab); the others keep vLLM in biaslab's process (``ONE_PROCESS``), which
saves two starts of torch and vLLM per run. ``BIASLAB_VLLM=0`` skips the module; without network it skips with
the reason.
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
from tests.models.vllm.inprocess import ONE_PROCESS, biaslab_command, biaslab_python, env, run_biaslab

pytestmark = [
    requires_data,
    pytest.mark.skipif(os.environ.get("BIASLAB_VLLM") == "0", reason="BIASLAB_VLLM=0"),
    pytest.mark.timeout(5400),
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.real_model,
]
N_PAIRS = 200  # paired decisions compared with the local engine (99.5% must agree, every score within 0.01)
EAGER = ("-P", "enforce_eager=true", "-P", "max_model_len=2048")  # no torch.compile: minutes less to start


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


def test_paired_decisions_match_the_local_engine_and_a_killed_run_resumes(reference, vllm_venv, tmp_path):
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

    run_biaslab(python, *run, "--model", spec, *EAGER, *ONE_PROCESS, "--out", out, cache=cache, one_process=True)
    results = json.loads((out / "results.json").read_text())
    assert results["n_attempts"] == N_PAIRS and results["run"]["cache_hits"] >= before
    assert results["run"]["model_calls"] == cached_answers(cache) - before > 0  # only what was missing, once
    assert results["model"]["backend"] == "vllm" and results["model"]["dtype"] == "float32"
    assert results["model"]["vllm"] and results["model"]["vllm_build"] == "cpu"

    a, b = attempts(reference), attempts(out)
    agree, gap = compare(a, b)
    print(
        f"\nvLLM in process vs local engine: {agree}/{len(a)} decisions agree, "
        f"largest sentence-score gap {gap:.2e} nats"
    )
    assert agree >= 0.995 * N_PAIRS and gap < 0.01
    assert all(a[k]["n_scored_tokens"] == b[k]["n_scored_tokens"] for k in a)  # the same shared tokens

    again = run_biaslab(
        python, *[x for x in run if x != "-q"], "--model", spec, *EAGER, "--out", tmp_path / "again", cache=cache
    )
    rerun = json.loads((tmp_path / "again" / "results.json").read_text())["run"]
    assert rerun["model_calls"] == 0 and "loading model" not in again.stderr + again.stdout  # vLLM never started


def test_generation_is_reproducible_and_the_judge_probe_runs(vllm_venv, tmp_path):
    """jobs-lum batched, its requests again one at a time (each request's own seed gives the same text whatever
    runs beside it), and fsb-judge: three runs on one engine, in one process (:mod:`.generation_checks`)."""
    python, spec = vllm_venv
    out, cache = tmp_path / "out", tmp_path / "cache"
    proc = subprocess.run(
        [python, str(Path(__file__).with_name("generation_checks.py")), spec, str(cache), str(out)],
        capture_output=True,
        text=True,
        env=env(cache, one_process=True),
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    alone = json.loads(proc.stdout.strip().splitlines()[-1])
    jobs = attempts(out / "jobs")
    assert len(jobs) == 3 and all(r["text"].strip() for r in jobs.values())  # 3 occupations, each answered
    assert json.loads((out / "jobs" / "results.json").read_text())["model"]["backend"] == "vllm"
    assert {k: r["text"] for k, r in jobs.items()} == alone
    results = json.loads((out / "judge" / "results.json").read_text())
    assert results["n_attempts"] == 12 and results["run"]["model_calls"] == 12
