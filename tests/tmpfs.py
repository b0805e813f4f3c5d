"""A small tmpfs mounted for one test: a disk that fills up (``size=64k``) or cannot be written (``ro``). Tests
that use it are skipped where mounting is not permitted (not root, no ``mount``, a container without the right)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def tmpfs(path: Path, *options: str) -> Iterator[Path]:
    """A tmpfs mounted at ``path`` (created) with ``options`` while the block runs, always unmounted after."""
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("no mount command here")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(options or ("size=1m",)), "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)  # still busy: detach it now
