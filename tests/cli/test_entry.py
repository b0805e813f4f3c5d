"""The ``biaslab`` process's end: exit codes and output intact when it skips the interpreter's teardown."""

import subprocess
import sys
import threading

import pytest


def test_the_command_ends_with_its_exit_code_and_all_of_its_output():
    ok = subprocess.run([sys.executable, "-m", "biaslab.cli", "probes"], capture_output=True, text=True)
    assert ok.returncode == 0
    assert "winosemitism" in ok.stdout and ok.stdout.rstrip().endswith("biaslab probes --long")  # its last line
    bad = subprocess.run([sys.executable, "-m", "biaslab.cli", "run", "no-such-probe"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown probe" in bad.stderr and "Traceback" not in bad.stderr


def test_exit_handlers_run_before_the_process_ends():
    code = (
        "import atexit, sys; sys.argv = ['biaslab', 'probes']; "
        "atexit.register(lambda: print('handler ran', file=sys.stderr)); "
        "from biaslab.cli import entry; entry()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and "handler ran" in proc.stderr


def test_another_live_thread_or_a_message_gets_the_usual_exit():
    from biaslab.cli import _end_process

    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        with pytest.raises(SystemExit) as exc:  # the usual exit waits for the thread
            _end_process(3)
        assert exc.value.code == 3
    finally:
        release.set()
        worker.join()
    with pytest.raises(SystemExit) as exc:
        _end_process("a message for stderr")
    assert exc.value.code == "a message for stderr"
