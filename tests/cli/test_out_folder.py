"""One writer per --out, checked before any model call: two runs into one folder at once (real processes), a
suite into a folder another command holds, an --out through a file or on a read-only disk (scripted models)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.cli_runner import biaslab_process, run_cli
from tests.conftest import requires_data, wait_for_cached_answers
from tests.tmpfs import tmpfs

pytestmark = requires_data
LOCK_NAME = ".biaslab.lock"


def biaslab(*args, cache, env=None):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache), **(env or {})})


def answers_in(cache: Path) -> int:
    """The answers in a response cache (0 when none was created: no model was called)."""
    db = cache / "responses.sqlite"
    if not db.exists():
        return 0
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("select count(*) from responses").fetchone()[0]


def start_run(out: Path, cache: Path, model: str) -> subprocess.Popen:
    args = ["run", "jobs-lum", "-m", model, "-n", "30", "--max-concurrency", "1", "--out", out, "-q"]
    return subprocess.Popen(
        [sys.executable, "-m", "biaslab.cli", *map(str, args)],
        env={**os.environ, "BIASLAB_CACHE_DIR": str(cache)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow  # real processes, a run of 6 s
def test_a_second_run_into_the_same_out_fails_at_once_naming_the_first_and_calls_no_model(tmp_path):
    out = tmp_path / "run"
    first = start_run(out, tmp_path / "c1", "scripted/he:delay=0.2")  # 30 answers, one at a time: 6 s
    try:
        assert wait_for_cached_answers(tmp_path / "c1", 1, timeout=60) >= 1  # it is calling the model
        other_cache = tmp_path / "c2"
        for model in ("scripted/she", "scripted/he:delay=0.2"):  # another model, and the very same run
            started = time.time()
            second = biaslab_process(
                "run", "jobs-lum", "-m", model, "-n", "30", "--out", out, "-q", env={"BIASLAB_CACHE_DIR": other_cache}
            )
            assert second.returncode == 2 and "Traceback" not in second.stderr
            (line,) = second.stderr.strip().splitlines()
            assert line.startswith(f"error: --out {out} is being written by another biaslab command (pid {first.pid}")
            assert "biaslab run jobs-lum -m scripted/he:delay=0.2" in line and "give another --out" in line
            assert time.time() - started < 30 and first.poll() is None  # at once, while the first still runs
            assert answers_in(other_cache) == 0  # refused before any model call
        stdout, stderr = first.communicate(timeout=120)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 0, stderr
    results = json.loads((out / "results.json").read_text())
    rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert results["model"]["model"] == "he" and len(rows) == 30 and all(" He is " in r["text"] for r in rows)
    assert "scripted/he:delay=0.2" in (out / "report.html").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["attempts.jsonl", "report.html", "results.json"]  # lock gone

    # the finished run is not replaced by another model's without --overwrite, now that the folder is free
    third = biaslab("run", "jobs-lum", "-m", "scripted/she", "-n", "30", "--out", out, "-q", cache=tmp_path / "c2")
    assert third.returncode == 2 and "already holds a finished run (jobs-lum on he)" in third.stderr
    assert json.loads((out / "results.json").read_text()) == results


def test_a_killed_run_leaves_no_lock_behind(tmp_path):
    out, cache = tmp_path / "run", tmp_path / "c"
    first = start_run(out, cache, "scripted/he:delay=0.2")
    assert wait_for_cached_answers(cache, 1, timeout=60) >= 1
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert (out / LOCK_NAME).exists() and not (out / "results.json").exists()
    again = biaslab("run", "jobs-lum", "-m", "scripted/he", "-n", "30", "--out", out, "-q", cache=cache)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in out.iterdir()) == ["attempts.jsonl", "report.html", "results.json"]


def test_a_suite_into_a_folder_another_command_holds_fails_before_any_model_call(tmp_path):
    out, cache = tmp_path / "suite", tmp_path / "c"
    args = ("suite", "-m", "scripted/he", "--probes", "jobs-lum", "--limit", "4", "--out", out, "-q")
    from biaslab.out_lock import hold_out_dir

    with hold_out_dir(out):
        held = biaslab(*args, cache=cache)
    assert held.returncode == 2 and "Traceback" not in held.stderr
    (line,) = held.stderr.strip().splitlines()
    assert f"--out {out} is being written by another biaslab command (pid {os.getpid()}" in line
    assert answers_in(cache) == 0 and not out.exists()  # nothing called, and the folder it made is gone
    assert biaslab(*args, cache=cache).returncode == 0


def test_an_out_through_a_file_fails_before_any_model_call(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    cache = tmp_path / "c"
    for command in (
        ["run", "jobs-lum", "-m", "scripted/he", "-n", "4"],
        ["suite", "-m", "scripted/he", "--probes", "jobs-lum", "--limit", "4"],
    ):
        proc = biaslab(*command, "--out", tmp_path / "file" / "sub", "-q", cache=cache)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"error: --out {tmp_path / 'file' / 'sub'}: {tmp_path / 'file'} is a file, not a folder; "
            "write to another folder"
        ]
        assert answers_in(cache) == 0


def test_an_out_on_a_read_only_disk_fails_before_any_model_call(tmp_path):
    cache = tmp_path / "c"
    with tmpfs(tmp_path / "ro", "ro", "size=64k") as ro:
        for command in (
            ["run", "jobs-lum", "-m", "scripted/he", "-n", "4"],
            ["suite", "-m", "scripted/he", "--probes", "jobs-lum", "--limit", "4"],
        ):
            proc = biaslab(*command, "--out", ro / "out", "-q", cache=cache)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
            assert proc.stderr.strip().splitlines() == [
                f"error: --out {ro / 'out'}: {ro} is on a read-only file system; write to another folder"
            ]
            assert answers_in(cache) == 0


def test_the_lock_record_keeps_no_password_of_a_url(monkeypatch):
    from biaslab.out_lock import _record

    argv = ["biaslab", "run", "jobs-lum", "--base-url", "http://ann:s3cret@host:8000/v1", "--out", "o"]
    monkeypatch.setattr("sys.argv", argv)
    command = _record()["command"]
    assert "s3cret" not in command and "ann" not in command and "http://***@host:8000/v1" in command
