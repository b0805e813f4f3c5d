"""What the Llama engine's loops run on: worker threads, heap settings, whole blocks of rows.

* :func:`run_workers`: independent decoding / scoring loops, each in its own Python thread
  with one torch thread (:mod:`.batching`, :mod:`.scoring`);
* :func:`limit_heap_retention` and :func:`reuse_heap_blocks`: the process-wide allocator
  settings the engine (and the local loader, before loading a model) applies;
* :data:`ROW_MULTIPLE` and :func:`round_up`: matrix products get whole blocks of rows (unless the weights are laid
  out, :mod:`.packing`);
* :func:`single_threaded`: a step of few rows on one torch thread.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

# Matrix products get a multiple of this many rows (padding rows are discarded): BLAS kernels
# treat a trailing partial block of rows with different code, which changes a row's last bits
# depending on how many rows share the product. With whole blocks, a row's result is
# bit-identical whatever else is in the batch.
ROW_MULTIPLE = 8


_MMAP_THRESHOLD_SET = False
_M_MMAP_THRESHOLD = -3  # mallopt parameter (glibc)


def limit_heap_retention() -> None:
    """Make glibc return large freed blocks (>= 1 MiB) to the OS at once.

    glibc raises its mmap threshold each time a large block is freed, after which blocks of
    up to 32 MiB come from per-thread heaps that fragment: with two decoding threads the
    process keeps 300-600 MB of freed temporaries (loading the model leaves the heap fragmented
    too, so call this before loading). A fixed threshold keeps peak RSS near weights + KV
    cache + 100 MB. Process-wide and harmless; a no-op off glibc.
    """
    global _MMAP_THRESHOLD_SET
    if _MMAP_THRESHOLD_SET or not sys.platform.startswith("linux"):
        return
    _MMAP_THRESHOLD_SET = True
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, 1 << 20)


@contextmanager
def reuse_heap_blocks(enabled: bool = True, threshold: int = 64 << 20) -> Iterator[None]:
    """For the duration, freed blocks below ``threshold`` bytes stay in the heap to be reused.

    Under :func:`limit_heap_retention` every temporary of 1 MiB or more is a fresh mapping,
    whose pages the kernel zeroes on first touch: teacher-forced scoring makes a few such
    temporaries per layer (hundreds of rows x 1,536), which costs about a fifth of its time.
    The 1 MiB threshold is restored afterwards. Process-wide; a no-op off glibc.
    """
    libc = _libc() if enabled else None
    if libc is None:
        yield
        return
    global _MMAP_THRESHOLD_SET
    libc.mallopt(_M_MMAP_THRESHOLD, threshold)
    try:
        yield
    finally:
        libc.mallopt(_M_MMAP_THRESHOLD, 1 << 20)
        _MMAP_THRESHOLD_SET = True


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt  # noqa: B018 - glibc only
        return libc
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return None


@contextmanager
def single_threaded(enabled: bool = True) -> Iterator[None]:
    """For the duration, torch runs on one thread (restored afterwards); nothing changes when not ``enabled``."""
    before = torch.get_num_threads()
    if not enabled or before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def run_workers(
    n: int,
    work: Callable[[Callable[[Any], None]], None],
    handle: Callable[[Any], None],
    stop: threading.Event,
    name: str = "biaslab-worker",
) -> None:
    """Run ``work(emit)`` in ``n`` threads, each with one torch thread; ``handle`` every emitted item here.

    The first exception in a worker sets ``stop`` (workers check it) and is re-raised in the
    caller's thread once every worker has ended; items emitted after ``stop`` are dropped.
    """
    done: queue.Queue = queue.Queue()
    threads_before = torch.get_num_threads()

    def target() -> None:
        try:
            torch.set_num_threads(1)
            with torch.inference_mode():
                work(done.put)
        except BaseException as exc:  # reported to the caller's thread
            stop.set()
            done.put(exc)
        finally:
            done.put(_END)

    pool = [threading.Thread(target=target, name=f"{name}-{k}", daemon=True) for k in range(n)]
    try:
        for t in pool:
            t.start()
        running, error = n, None
        while running:
            item = done.get()
            if item is _END:
                running -= 1
            elif isinstance(item, BaseException):
                error = error or item
            elif not stop.is_set():
                handle(item)
        if error is not None:
            raise error
    finally:
        stop.set()
        for t in pool:
            t.join()
        torch.set_num_threads(threads_before)


_END = object()
