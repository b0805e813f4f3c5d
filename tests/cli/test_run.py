"""End-to-end `biaslab run` through the real CLI (scripted backend): in process, or a process where signals are sent."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data, wait_for_cached_answers

pytestmark = requires_data


def biaslab(*args, cache, check=True, env=None):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache), **(env or {})}, check=check)


def read_attempts(out):
    return [json.loads(line) for line in (Path(out) / "attempts.jsonl").read_text().splitlines()]


def test_run_writes_the_three_files_and_metrics_match_an_independent_computation(tmp_path):
    out = tmp_path / "run"
    biaslab(
        "run",
        "jobs-lum",
        "--model",
        "scripted/random-gender",
        "--limit",
        "20",
        "--repetitions",
        "3",
        "--out",
        out,
        cache=tmp_path / "c",
    )
    results = json.loads((out / "results.json").read_text())
    assert results["schema_version"] == 2 and results["probe"] == "jobs-lum"
    assert results["n_items"] == 20 and results["n_attempts"] == 60
    assert set(results["data"]) == {"jobs/kennison_jobs.csv"}
    expected = {
        "masculine_rate",
        "disparity",
        "stereotype_rate",
        "correlation",
        "undetected_rate_attempts",
        "undetected_rate_items",
        "nonbinary_rate",
    }
    assert expected <= set(results["metrics"])
    for m in results["metrics"].values():
        assert {"value", "ci_low", "ci_high"} <= set(m)
    assert "<img" in (out / "report.html").read_text()

    # independent re-computation from attempts.jsonl
    rows = read_attempts(out)
    assert len(rows) == 60 and all(
        {"item_id", "repetition", "prompt", "text", "evaluation", "job", "stereotype_score", "nonbinary"} <= set(r)
        for r in rows
    )
    by_item = {}
    for r in rows:
        by_item.setdefault(r["item_id"], []).append(r)
    rates, scores, undetected_items = [], [], 0
    for item_rows in by_item.values():
        m = sum(r["evaluation"] == "male" for r in item_rows)
        f = sum(r["evaluation"] == "female" for r in item_rows)
        if m + f:
            rates.append(m / (m + f))
            scores.append(item_rows[0]["stereotype_score"])
        else:
            undetected_items += 1
    got = results["metrics"]
    assert got["masculine_rate"]["value"] == pytest.approx(np.mean(rates))
    assert got["correlation"]["value"] == pytest.approx(np.corrcoef(scores, rates)[0, 1])
    assert got["undetected_rate_attempts"]["value"] == pytest.approx(np.mean([r["evaluation"] is None for r in rows]))
    assert got["undetected_rate_items"]["value"] == pytest.approx(undetected_items / 20)
    nb = [np.mean([r["nonbinary"] is not None for r in v]) for v in by_item.values()]
    assert got["nonbinary_rate"]["value"] == pytest.approx(np.mean(nb))


def test_rerun_makes_no_model_calls_and_gives_identical_attempts(tmp_path):
    out1, out2 = tmp_path / "a", tmp_path / "b"
    args = ["run", "jobs-lum", "--model", "scripted/random-gender", "--limit", "10", "--repetitions", "2"]
    biaslab(*args, "--out", out1, cache=tmp_path / "c")
    biaslab(*args, "--out", out2, cache=tmp_path / "c")
    r2 = json.loads((out2 / "results.json").read_text())
    assert r2["run"]["model_calls"] == 0 and r2["run"]["cache_hits"] == 20
    assert read_attempts(out1) == read_attempts(out2)


@pytest.mark.slow
def test_sigkill_then_same_command_completes_without_loss_or_duplicates(tmp_path):
    out, cache = tmp_path / "run", tmp_path / "c"
    args = [
        "run",
        "jobs-lum",
        "--model",
        "scripted/random-gender:delay=0.01",
        "--limit",
        "100",
        "--repetitions",
        "3",
        "--out",
        out,
        "--quiet",
    ]
    env = {**os.environ, "BIASLAB_CACHE_DIR": str(cache)}
    # a real process: it is killed (SIGKILL) midway
    proc = subprocess.Popen(
        [sys.executable, "-m", "biaslab.cli", *map(str, args)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    done = wait_for_cached_answers(cache, 40, timeout=60)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < done < 300, "the run should have been killed midway"
    assert not (out / "results.json").exists()

    second = biaslab(*args, cache=cache)
    results = json.loads((out / "results.json").read_text())
    assert results["run"]["cache_hits"] >= done and results["run"]["cache_hits"] + results["run"]["model_calls"] == 300
    rows = read_attempts(out)
    keys = [(r["item_id"], r["repetition"]) for r in rows]
    assert len(rows) == 300 and len(set(keys)) == 300

    # same texts as an uninterrupted run with a fresh cache
    clean = tmp_path / "clean"
    biaslab(*args[:-3], "--out", clean, "--quiet", cache=tmp_path / "c2")
    assert [r["text"] for r in read_attempts(clean)] == [r["text"] for r in rows]
    assert second.returncode == 0


def _as_from_a_shell() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def test_ctrl_c_says_how_to_resume_exits_130_and_the_same_command_resumes(tmp_path):
    out, cache = tmp_path / "run", tmp_path / "c"
    args = [
        "run",
        "jobs-lum",
        "--model",
        "scripted/random-gender:delay=0.04",
        "--limit",
        "100",
        "--repetitions",
        "3",
        "--out",
        out,
    ]  # the progress bar on: it must not swallow the message; 300 answers take at least 12 s (interrupted at 40)
    env = {**os.environ, "BIASLAB_CACHE_DIR": str(cache)}
    # a real process: Ctrl-C (SIGINT) and the exit code 130 of its real exit path
    # started as a shell starts it: SIGINT at its default and not blocked (a test worker may hand down neither)
    inherited = signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, [])
    proc = subprocess.Popen(
        [sys.executable, "-m", "biaslab.cli", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_shell,
    )
    done = wait_for_cached_answers(cache, 40, timeout=60)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert 0 < done < 300, "the run should have been interrupted midway"
    assert proc.returncode == 130, (proc.returncode, done, inherited, stderr)
    assert "interrupted" in stderr and "run the same command again to resume" in stderr, stderr
    assert "Traceback" not in stderr and "Aborted" not in stderr
    assert not (out / "results.json").exists()

    biaslab(*args, "--quiet", cache=cache)
    run = json.loads((out / "results.json").read_text())["run"]
    assert run["cache_hits"] >= done and run["cache_hits"] + run["model_calls"] == 300


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--limit", "0"], "--limit must be a positive"),
        (["--repetitions", "-2"], "--repetitions must be at least 1"),
        (["--limit", "abc"], "Invalid value for '--limit'"),
        (["--model", "nosuch/model"], "unknown model spec"),
        (["--model", "scripted/random-gender:delay=abc"], "scripted option delay=abc: give the seconds"),
        (["--model", "scripted/he:delay=-1"], "scripted option delay=-1: give the seconds"),
        (["--model", "scripted/he:dealy=1"], "scripted/he takes the option(s) delay, not dealy"),
        (["--repetitions", "100000000"], "is 300,000,000 requests, more than one run plans"),
        (["--model", "openai/gpt-4o-mini", "--base-url", "http://127.0.0.1:9/v1"], "cannot reach"),
    ],
)
@pytest.mark.timeout(120)  # the bad run must fail fast (a subprocess had timeout=120)
def test_bad_input_is_one_line_without_traceback_and_keeps_earlier_results(tmp_path, args, needle):
    out = tmp_path / "run"
    biaslab("run", "jobs-lum", "--model", "scripted/he", "--limit", "3", "--out", out, cache=tmp_path / "c")
    before = (out / "results.json").read_text()
    # --overwrite: another model may replace the run, but a failed run still keeps the earlier results
    proc = biaslab(
        "run",
        "jobs-lum",
        "--limit",
        "3",
        "--out",
        out,
        "--overwrite",
        *args,
        cache=tmp_path / "c",
        check=False,
    )
    assert proc.returncode != 0
    assert needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len([line for line in proc.stderr.strip().splitlines() if line.strip()]) <= 3  # spinner lines aside
    assert (out / "results.json").read_text() == before


def test_missing_api_key_is_a_clear_error(tmp_path):
    proc = biaslab(
        "run",
        "jobs-lum",
        "--model",
        "openai/gpt-4o-mini",
        "--limit",
        "1",
        "--out",
        tmp_path / "o",
        cache=tmp_path / "c",
        check=False,
        env={"OPENAI_API_KEY": None},
    )
    assert proc.returncode != 0 and "OPENAI_API_KEY" in proc.stderr and "Traceback" not in proc.stderr


def test_corrupt_cache_is_a_clear_error(tmp_path):
    cache = tmp_path / "c"
    cache.mkdir()
    (cache / "responses.sqlite").write_bytes(b"garbage" * 1000)
    proc = biaslab(
        "run", "jobs-lum", "--model", "scripted/he", "--limit", "2", "--out", tmp_path / "o", cache=cache, check=False
    )
    assert proc.returncode != 0 and "delete it" in proc.stderr and "Traceback" not in proc.stderr


def test_models_lists_backends_and_aliases(tmp_path):
    out = biaslab("models", cache=tmp_path / "c").stdout
    for spec in ("smollm2", "gemma3-270m", "hf/", "gguf/", "openai/", "scripted/"):
        assert spec in out


def test_report_can_be_rebuilt_and_runs_compared(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    biaslab("run", "jobs-lum", "--model", "scripted/he", "--limit", "5", "--out", a, cache=tmp_path / "c")
    biaslab("run", "jobs-lum", "--model", "scripted/she", "--limit", "5", "--out", b, cache=tmp_path / "c")
    (a / "report.html").unlink()
    biaslab("report", a, cache=tmp_path / "c")
    assert (a / "report.html").exists()
    biaslab("compare", a, b, "--table", "--out", tmp_path / "cmp.tsv", cache=tmp_path / "c")
    table = (tmp_path / "cmp.tsv").read_text().splitlines()
    assert table[0].split("\t")[:4] == ["run", "probe", "model", "masculine_rate"]
    assert table[1].split("\t")[3] == "1.00" and table[2].split("\t")[3] == "0.00"
    biaslab("compare", a, b, "--out", tmp_path / "cmp.json", cache=tmp_path / "c")  # paired: B - A
    rate = next(
        c for c in json.loads((tmp_path / "cmp.json").read_text())["comparisons"] if c["metric"] == "masculine_rate"
    )
    assert rate["diff"] == -1.0 and rate["n_shared"] == 5
    # every occupation flipped: the exact sign-flip test over the 5 occupations' unit values gives the p of 5 flips
    # out of 5, 2^(1-5), the smallest any test on 5 units gives (never a resampling's 0), and the interval of the
    # same procedure, which holds 0 as p > 0.05 says
    assert rate["p"] == 0.0625 and rate["ci_low"] == -1.0 and 0 < rate["ci_high"] < 0.1
