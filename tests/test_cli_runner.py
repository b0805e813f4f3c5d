"""The in-process runner the tests use (tests/cli_runner.py) answers as the ``biaslab`` process would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.cli_runner import run_cli
from tests.conftest import requires_data


def test_output_exit_codes_and_errors_are_the_processes():
    """The same as the ``biaslab`` command's, usage errors included (which name the program)."""
    script = Path(sys.executable).with_name("biaslab")
    for args in (["--version"], ["schema", "results"], ["run", "no-such-probe"], ["run", "jobs-lum", "--limit", "x"]):
        here = run_cli(*args)
        env = {**os.environ, "NO_COLOR": "1"}
        there = subprocess.run([str(script), *args], capture_output=True, text=True, env=env)
        assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr), args
    assert run_cli("run", "no-such-probe").returncode == 2 and "Traceback" not in run_cli("run", "no-such-probe").stderr


@requires_data
def test_a_run_keeps_its_environment_and_output_to_itself(tmp_path, monkeypatch):
    """Environment, argv and working directory come back as they were; another thread's writes (a test's server
    answering the run) stay out of the run's output, while the run's own threads' (its progress bar) are in it."""
    monkeypatch.setenv("BIASLAB_CACHE_DIR", "before")
    stop = threading.Event()

    def noise() -> None:
        while not stop.is_set():
            print("NOT THE RUN'S", file=sys.stderr)
            time.sleep(0.001)

    other = threading.Thread(target=noise, daemon=True)
    other.start()
    cwd, argv = os.getcwd(), list(sys.argv)
    try:
        proc = run_cli(
            "run",
            "jobs-lum",
            "--model",
            "scripted/he",
            "--limit",
            "3",
            "--out",
            "run",
            env={"BIASLAB_CACHE_DIR": str(tmp_path / "c")},
            cwd=tmp_path,
        )
    finally:
        stop.set()
        other.join()
    assert proc.returncode == 0, proc.stderr
    assert "NOT THE RUN'S" not in proc.stdout + proc.stderr
    assert "jobs-lum on scripted/he" in proc.stderr  # the progress bar, drawn by the run's own thread
    assert json.loads((tmp_path / "run" / "results.json").read_text())["n_attempts"] == 3
    assert (tmp_path / "c" / "responses.sqlite").is_file()
    assert os.environ["BIASLAB_CACHE_DIR"] == "before" and os.getcwd() == cwd and sys.argv == argv
