"""``biaslab`` run inside the test process: :func:`biaslab.cli.main` with its own argv, environment, working
directory and captured output, answered as a :class:`subprocess.CompletedProcess` (the ``returncode`` the process
would exit with, its ``stdout`` and ``stderr``).

A ``biaslab`` subprocess costs about a second of start-up before it does anything; in process, a scripted run
costs what the run costs, and a local model loaded by one run stays loaded for the next. Keep real processes
(:func:`biaslab_process`) for what only a process shows: signals (SIGKILL, Ctrl-C), the exit path of
:func:`biaslab.cli.entry`, start-up without torch, another interpreter or venv.

What differs from a process, and is made the same here: the root logger's records at WARNING and above go to the
captured stderr (a process prints them through logging's last resort; pytest's handlers would take them), an
uncaught exception prints its traceback to stderr with exit code 1, only the run's own threads write to its
stdout and stderr (a test's server answering it in another thread keeps its output), and the SIGINT handler,
argv, environment and working directory are restored afterwards.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TextIO


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None] | None) -> Iterator[None]:
    saved = dict(os.environ)
    try:
        for key, value in (env or {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = str(value)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _working_directory(cwd: str | Path | None) -> Iterator[None]:
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


def _exit_code(code: object, err: io.StringIO) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=err)  # sys.exit("message"), as the interpreter does
    return 1


class _RunThreads:
    """The threads of one in-process run: the caller's and every thread started from one of them while the run
    lasts (progress bars, request pools, model workers), but not the threads that were there before (a test's own
    server answering the run, whose tracebacks a process would not have printed)."""

    def __init__(self) -> None:
        self.idents = {threading.get_ident()}
        self._start = threading.Thread.start

    def __contains__(self, ident: object) -> bool:
        return ident in self.idents

    def __enter__(self) -> _RunThreads:
        run_threads, start = self, self._start

        def tracked_start(thread: threading.Thread) -> None:
            if threading.get_ident() in run_threads.idents:
                body = thread.run

                def run() -> None:
                    run_threads.idents.add(threading.get_ident())
                    body()

                thread.run = run  # type: ignore[method-assign]
            start(thread)

        threading.Thread.start = tracked_start  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        threading.Thread.start = self._start  # type: ignore[method-assign]


class _Routed(io.TextIOBase):
    """``sys.stdout`` / ``sys.stderr`` during a run: what the run's threads write goes to ``captured``, what any
    other thread writes to the stream it would have gone to."""

    def __init__(self, captured: io.StringIO, other: TextIO, threads: _RunThreads) -> None:
        self.captured, self.other, self.threads = captured, other, threads

    def _target(self) -> TextIO:
        return self.captured if threading.get_ident() in self.threads else self.other

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return False


def run_cli(
    *args: object,
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
    input: str = "",
    check: bool = False,
) -> subprocess.CompletedProcess:
    """``biaslab ARGS`` in this process. ``env``: variables to set for the run (None removes one); ``check``:
    raise AssertionError, with the output, unless it exits 0."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    saved_argv, saved_stdin, saved_sigint = sys.argv, sys.stdin, signal.getsignal(signal.SIGINT)
    from biaslab.cli import main

    with _environment(env), _working_directory(cwd), _RunThreads() as threads:
        handler = logging.StreamHandler(err)
        handler.setLevel(logging.WARNING)
        handler.addFilter(lambda record: record.thread in threads)
        sys.argv, sys.stdin = ["biaslab", *argv], io.StringIO(input)
        saved_main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")  # as under the console script: "Usage: biaslab ..."
        root.addHandler(handler)
        try:
            stdout, stderr = _Routed(out, sys.stdout, threads), _Routed(err, sys.stderr, threads)
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):  # type: ignore[type-var]
                try:
                    main()
                    code = 0
                except SystemExit as exc:
                    code = _exit_code(exc.code, err)
                except Exception:
                    traceback.print_exc(file=err)  # what the interpreter prints for an uncaught exception
                    code = 1
        finally:
            root.removeHandler(handler)
            sys.modules["__main__"] = saved_main
            sys.argv, sys.stdin = saved_argv, saved_stdin
            signal.signal(signal.SIGINT, saved_sigint)
    proc = subprocess.CompletedProcess(["biaslab", *argv], code, out.getvalue(), err.getvalue())
    if check and code != 0:
        raise AssertionError(f"biaslab {' '.join(argv)} exited {code}\n{proc.stdout}\n{proc.stderr}")
    return proc


def biaslab_process(
    *args: object,
    env: Mapping[str, str | None] | None = None,
    check: bool = False,
    timeout: float | None = 1800,
    **kw: object,
) -> subprocess.CompletedProcess:
    """``biaslab ARGS`` as a real process (``python -m biaslab.cli``), for what only a process shows."""
    full = {**os.environ}
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = str(value)
    proc = subprocess.run(
        [sys.executable, "-m", "biaslab.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
        **kw,  # type: ignore[arg-type]
    )
    if check and proc.returncode != 0:
        shown = " ".join(map(str, args))
        raise AssertionError(f"biaslab {shown} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc
