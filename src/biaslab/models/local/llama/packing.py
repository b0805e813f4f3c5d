"""The engine's float32 weights laid out once for oneDNN: faster products, and a row's numbers independent of the
rows beside it at any number of rows.

oneDNN's linear on a plain float32 weight lays the weight out again on every call of two rows or more, and
multiplies a single row with another kernel (a matrix-vector product) whose last bits differ. So the engine gave
every product whole blocks of :data:`.runtime.ROW_MULTIPLE` rows, and one sequence decoded alone paid for eight.
With the weight laid out once (``torch.ops.mkldnn._reorder_linear_weight``), one kernel serves every number of
rows and no call re-lays the weight out. Measured on one thread of a 2-core AMD EPYC (AVX2), the products of one
decoding step of SmolLM2-135M (121 products, 540 MB of weights read from memory; ``bench/bench_products.py``):

=====  ========================  ====================
rows   plain, blocks of 8 rows   laid out, no padding
=====  ========================  ====================
1      116 ms (8 rows)           42-51 ms
2      116 ms (8 rows)           48 ms
8      116 ms                    68 ms
=====  ========================  ====================

and the laid-out products give the plain ones' numbers to the bit from two rows on. Whether a row's numbers are
the same alone, in any number of rows and at the thread count in use is checked on the model's own weights when
an engine starts (:func:`rows_independent`, about 0.1 s); where it does not hold (another CPU or oneDNN), the
engine keeps the plain weights and the blocks of rows.

The laid-out copy is a second copy of the weights (the loaded model keeps its own, for the paths that use it), so
it is made only while it takes at most half of the memory available beyond a reserve (:func:`fits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from biaslab.models.local.llama.precision import LINEAR_POINTWISE, PACK_ROWS, REORDER

RESERVE_BYTES = 1 << 30  # memory left aside before the copy is weighed against what is available
_PROBE_ROWS = (1, 2, 3, 8, 9)  # row counts each probe compares (the row at each offset, alone and in company)


@dataclass(frozen=True)
class Packing:
    """What :func:`pack` did: the weights to multiply (laid out, or the plain ones) and the row multiple the
    products then need (1: none); ``reason`` says why the weights stayed plain."""

    weights: list[torch.Tensor]
    row_multiple: int
    reason: str = ""

    @property
    def packed(self) -> bool:
        return not self.reason


def available() -> bool:
    """Whether this torch has the oneDNN operators (internal to torch) the layout needs."""
    return REORDER is not None and LINEAR_POINTWISE is not None and torch.backends.mkldnn.is_available()


def fits(nbytes: int, free: int | None = None) -> bool:
    """Whether a copy of ``nbytes`` takes at most half of the memory available now beyond :data:`RESERVE_BYTES`
    (``free``: the available bytes, default read from the machine and its cgroup)."""
    if free is None:
        from biaslab.models.vllm.memory import cpu_memory

        try:
            free = cpu_memory().free
        except (OSError, KeyError, ValueError):
            return False
    return nbytes <= max(0, free - RESERVE_BYTES) // 2


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w.T`` with oneDNN's linear, ``w`` plain or laid out."""
    assert LINEAR_POINTWISE is not None
    return LINEAR_POINTWISE(x, w, None, "none", [], "")


def rows_independent(weight: torch.Tensor, laid_out: torch.Tensor) -> bool:
    """Whether every row of a product with ``laid_out`` (``weight`` laid out) has the same numbers alone, in
    company (1, 2, 3, 8 and 9 rows, at several offsets) and on one thread as on torch's current count."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(max(_PROBE_ROWS), weight.shape[1], generator=g, dtype=weight.dtype)
    threads = torch.get_num_threads()
    try:
        with torch.inference_mode():
            torch.set_num_threads(1)
            full = linear(x, laid_out)
            for n in _PROBE_ROWS[:-1]:
                for start in {0, len(x) - n}:
                    if not torch.equal(linear(x[start : start + n], laid_out), full[start : start + n]):
                        return False
            if threads > 1:
                torch.set_num_threads(threads)
                if not all(torch.equal(linear(x[:n], laid_out), full[:n]) for n in (1, len(x))):
                    return False
    except RuntimeError:
        return False
    finally:
        torch.set_num_threads(threads)
    return True


def pack(weights: Sequence[torch.Tensor], row_multiple: int, *, free: int | None = None) -> Packing:
    """The float32 CPU ``weights`` laid out for oneDNN when the layout is available, fits in memory and keeps rows
    independent (checked on the first weight of each shape); otherwise the weights as they are, with
    ``row_multiple`` (the blocks of rows plain weights need)."""
    plain = list(weights)

    def keep(reason: str) -> Packing:
        return Packing(plain, row_multiple, reason)

    if not available():
        return keep("this torch lacks oneDNN's linear")
    if any(w.device.type != "cpu" or w.dtype != torch.float32 or w.is_mkldnn for w in plain):
        return keep("not float32 weights on CPU")
    if not fits(sum(w.numel() * w.element_size() for w in plain), free):
        return keep("a second copy of the weights does not fit in the memory available")
    assert REORDER is not None
    laid_out = [REORDER(w.contiguous(), PACK_ROWS) for w in plain]
    checked: set[tuple[int, ...]] = set()
    for w, p in zip(plain, laid_out):
        if tuple(w.shape) not in checked:
            checked.add(tuple(w.shape))
            if not rows_independent(w, p):
                return keep(f"rows are not independent in a laid-out {tuple(w.shape)} product on this CPU")
    return Packing(laid_out, 1)
