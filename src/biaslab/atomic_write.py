"""Writing a file so that nothing earlier is lost, and saying in one line why a write cannot be made.

A file is written to a temporary name beside it (``.<name>.<pid>.<random>.tmp``), fsynced and renamed over it,
so a crash never leaves a half-written file and the file as it was stays until the new one is complete. A
writer killed before its rename leaves its temporary file behind: the next write to the same file removes
the temporary files of writers whose process is gone (never those of a live one).

A write that fails (the disk full, the file size limit of ``ulimit -f`` reached, a folder that cannot be
written, a part of the path that is a file) raises a :class:`~biaslab.errors.WriteError` naming the file and
what to do (:func:`write_failure`), never a bare ``OSError``.

:func:`all_or_nothing` groups the writes of one result (a run's results.json, attempts.jsonl, report.html):
inside it each file is written to its temporary name only, and all are renamed into place when the block ends
without an error, so a failed write (a full disk on the third file) leaves every earlier file as it was. It
groups the writes made in its own thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from biaslab.errors import WriteError

_staged: ContextVar[list[tuple[str, Path]] | None] = ContextVar("biaslab_staged_writes", default=None)
# the failures of a write that come from where it is made, not from biaslab: always a one-line error
ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
_TEMPORARY = re.compile(r"(\d+)\.[A-Za-z0-9_]+\.tmp")  # after ".<name>.": the writer's pid, mkstemp's letters


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it and rename it over ``path`` (inside
    :func:`all_or_nothing`: when the block ends). A :class:`WriteError` when that cannot be done."""
    path = Path(path)
    if path.is_dir():
        raise WriteError(write_failure(path, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))))
    try:
        tmp = _write_temporary(path, data)
    except OSError as exc:
        raise WriteError(write_failure(path, exc)) from None
    staged = _staged.get()
    if staged is not None:
        staged.append((tmp, path))
    else:
        _rename_all([(tmp, path)])


@contextlib.contextmanager
def all_or_nothing() -> Iterator[None]:
    """Every file written in the block is renamed into place when it ends without an error; on an error none
    is, and their temporary files are removed. Nested blocks belong to the outermost one."""
    if _staged.get() is not None:
        yield
        return
    staged: list[tuple[str, Path]] = []
    token = _staged.set(staged)
    try:
        yield
    except BaseException:
        for tmp, _ in staged:
            _unlink(tmp)
        raise
    finally:
        _staged.reset(token)
    _rename_all(staged)


def _rename_all(staged: list[tuple[str, Path]]) -> None:
    for i, (tmp, path) in enumerate(staged):
        try:
            os.replace(tmp, path)
        except OSError as exc:
            for left, _ in staged[i:]:
                _unlink(left)
            raise WriteError(write_failure(path, exc)) from None


def _write_temporary(path: Path, data: bytes) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.chmod(tmp, _umask_mode())
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def check_writable_folder(folder: Path, what: str) -> None:
    """Create ``folder`` if needed and write a file in it (removed at once): a folder that cannot be written
    fails now, in one line that starts with ``what`` (``--out texts.csv``), not after the model calls."""
    folder = Path(folder)
    probe = folder / ".biaslab-write-check"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{probe.name}.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise WriteError(f"{what}: {unwritable_reason(probe, exc)}") from None


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files that writers of ``path`` left when they were killed (their process is gone)."""
    prefix = f".{path.name}."
    try:
        entries = [e.name for e in os.scandir(path.parent) if e.name.startswith(prefix)]
    except OSError:
        return
    for name in entries:
        found = _TEMPORARY.fullmatch(name[len(prefix) :])
        if found and not _process_alive(int(found.group(1))):
            _unlink(str(path.parent / name))


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_failure(path: Path, exc: OSError) -> str:
    """One line: why ``path`` could not be written (``exc``) and what to do about it."""
    return f"cannot write {path}: {unwritable_reason(path, exc)}"


def unwritable_reason(path: Path, exc: OSError) -> str:
    """Why ``path`` could not be written and what to do, for a message that names the path itself."""
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full (no space left on device); free space on it and run again"
    if code == errno.EFBIG:
        return "it would exceed the file size limit (ulimit -f); raise the limit (ulimit -f unlimited) and run again"
    if code == errno.EROFS:
        return f"{path.parent} is on a read-only file system; write to another folder"
    if code in (errno.EACCES, errno.EPERM):
        return f"permission denied; make {path.parent} writable or write to another folder"
    if code == errno.ENOTDIR:
        blocking = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), path.parent)
        return f"{blocking} is a file, not a folder; write to another folder"
    if code == errno.EISDIR:
        return "it is a folder; give a file name"
    if code == errno.ENAMETOOLONG:
        return "the name is too long; give a shorter one"
    return f"{exc.strerror or type(exc).__name__}; check the folder and its disk and run again"
