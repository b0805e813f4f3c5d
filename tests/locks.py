"""One lock for the test helpers that build something once per machine or session (a venv, a reference run):
the first process builds it, the others wait, then find it built."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the file ``path`` (created) while the block runs; released when the block
    ends or the process dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
