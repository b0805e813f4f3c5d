"""Building blocks of :class:`.llama_engine.LlamaEngine`: fused weights, the KV cache, small helpers.

Also :func:`limit_heap_retention`, the process-wide allocator setting the engine (and the
local backend, before loading a model) applies.
"""

from __future__ import annotations

import queue
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

import torch
import torch.nn.functional as F

if TYPE_CHECKING:  # pragma: no cover
    from biaslab.models.local.llama.engine import LlamaEngine

# Matrix products get a multiple of this many rows (padding rows are discarded): BLAS kernels
# treat a trailing partial block of rows with different code, which changes a row's last bits
# depending on how many rows share the product. With whole blocks, a row's result is
# bit-identical whatever else is in the batch.
ROW_MULTIPLE = 8


def _rope_theta(cfg: object) -> float:
    rope = getattr(cfg, "rope_parameters", None)
    if isinstance(rope, dict) and "rope_theta" in rope:
        return float(rope["rope_theta"])
    return float(getattr(cfg, "rope_theta", 10000.0))


def _pick_linear(device: torch.device, dtype: torch.dtype) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """``F.linear``, or oneDNN's linear on CPU (10-15 % faster than MKL for these small batches)."""
    op = getattr(getattr(torch.ops, "mkldnn", None), "_linear_pointwise", None)
    if device.type != "cpu" or dtype != torch.float32 or op is None or not torch.backends.mkldnn.is_available():
        return F.linear

    def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return op(x, w, None, "none", [], "")

    try:  # the op is internal to torch: use it only if it behaves
        probe_x, probe_w = torch.randn(8, 2, 16, generator=torch.Generator().manual_seed(0)), torch.eye(16)
        if not torch.allclose(linear(probe_x, probe_w), probe_x, atol=1e-6):
            return F.linear
    except Exception:
        return F.linear
    return linear


@dataclass
class _Layer:
    ln1: torch.Tensor
    wqkv: torch.Tensor
    wo: torch.Tensor
    ln2: torch.Tensor
    wgu: torch.Tensor
    wdown: torch.Tensor

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


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


class KVCache:
    """Per-layer key/value tensors [slots, kv_heads, capacity, head_dim]."""

    def __init__(self, engine: LlamaEngine, width: int, capacity: int, dtype: torch.dtype) -> None:
        shape = (width, engine.n_kv, capacity, engine.head_dim)
        self.k = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]
        self.v = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]

    @staticmethod
    def bytes_per_token(engine: LlamaEngine, dtype: torch.dtype) -> int:
        return 2 * len(engine.layers) * engine.n_kv * engine.head_dim * torch.empty((), dtype=dtype).element_size()

    def narrow(self, width: int) -> "KVCache":
        view = object.__new__(KVCache)
        view.k = [t[:width] for t in self.k]
        view.v = [t[:width] for t in self.v]
        return view

    def copy_row(self, src: int, dst: int) -> None:
        for t in self.k + self.v:
            t[dst].copy_(t[src])


def _fuse_linears(linears: list[torch.nn.Linear]) -> torch.Tensor:
    """Concatenate Linear weights and re-point each layer at its slice (no second copy)."""
    fused = torch.cat([lin.weight.detach() for lin in linears], dim=0).contiguous()
    start = 0
    for lin in linears:
        n = lin.weight.shape[0]
        lin.weight = torch.nn.Parameter(fused[start:start + n], requires_grad=False)
        start += n
    return fused


def run_workers(n: int, work: Callable[[Callable[[Any], None]], None], handle: Callable[[Any], None],
                stop: threading.Event, name: str = "biaslab-worker") -> None:
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
