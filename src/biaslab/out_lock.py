"""One writer per output folder: a command that writes a run (or a suite) into ``--out`` holds a lock there
from before its first model call to its last write.

:func:`hold_out_dir` creates the folder when it is missing (so a path through a file, or a folder that cannot
be written, fails at once, before anything is paid for) and takes an advisory lock (``flock``) on
``<out>/.biaslab.lock``, which records who holds it. A second command for the same folder fails at once with
one line naming the first (its pid, when it started, its command). The kernel releases the lock when its
process ends, however it ends, so a killed run never leaves the folder locked; the file itself is removed
when the command ends (one left by a killed run is taken over by the next).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from biaslab.atomic_write import unwritable_reason
from biaslab.errors import ConfigError, WriteError

LOCK_NAME = ".biaslab.lock"


@contextlib.contextmanager
def hold_out_dir(out_dir: Path, flag: str = "--out") -> Iterator[Path]:
    """Create ``out_dir`` if needed and hold its lock while the block runs; a one-line error when it is held by
    another process, is a file, or cannot be written."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"{flag} {out_dir} is a file; give a directory")
    created = not out_dir.exists()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(f"{flag} {out_dir}: {unwritable_reason(out_dir, exc)}") from None
    path = out_dir / LOCK_NAME
    try:
        fd = _take(path, flag, out_dir)
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()
        raise
    try:
        yield out_dir
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)  # while still held: a process that opened it meanwhile sees it was removed
            os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # only when empty: a run that failed before writing leaves no folder


def _take(path: Path, flag: str, out_dir: Path) -> int | None:
    """The open, locked lock file (None where the file system has no locks)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise WriteError(f"{flag} {out_dir}: {unwritable_reason(path, exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise ConfigError(
                f"{flag} {out_dir} is being written by another biaslab command ({holder}); wait for it to end, "
                f"or give another {flag}"
            ) from None
        except OSError:  # no locks on this file system: go on alone, as before locks
            return fd
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed the file after this process opened it: take the new one
    with contextlib.suppress(OSError):  # the record is only for messages: a full disk does not stop the run
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(_record()) + "\n").encode("utf-8"))
    return fd


def _record() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime()),
        # a URL's user and password (--base-url http://user:secret@host) never reach the file or another's error
        "command": re.sub(r"://[^/@\s]+@", "://***@", shlex.join(["biaslab", *sys.argv[1:]])),
    }


def _holder(fd: int) -> str:
    try:
        record = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        pid, started, command = record["pid"], record["started"], str(record["command"])
    except (OSError, ValueError, KeyError, TypeError):
        return "it has not said which yet"
    if len(command) > 120:
        command = command[:117] + "..."
    return f"pid {pid}, started {started}: {command}"
