"""The key/value store of the continuous-batching engine: one row per slot, preallocated.

:class:`KVCache` holds, for every layer of a :class:`~.engine.LlamaEngine`, the keys and values
[slots, kv_heads, capacity, head_dim] that :meth:`~.engine.LlamaEngine.forward` writes and
attends to; :mod:`.batching` sizes it from the KV budget, narrows it to the busy slots and
moves rows when it compacts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # pragma: no cover - the engine imports this module
    from biaslab.models.local.llama.engine import LlamaEngine


class KVCache:
    """Per-layer key/value tensors [slots, kv_heads, capacity, head_dim]."""

    def __init__(self, engine: LlamaEngine, width: int, capacity: int, dtype: torch.dtype) -> None:
        shape = (width, engine.n_kv, capacity, engine.head_dim)
        self.k = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]
        self.v = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]

    @staticmethod
    def bytes_per_token(engine: LlamaEngine, dtype: torch.dtype) -> int:
        return 2 * len(engine.layers) * engine.n_kv * engine.head_dim * torch.empty((), dtype=dtype).element_size()

    def narrow(self, width: int) -> KVCache:
        view = object.__new__(KVCache)
        view.k = [t[:width] for t in self.k]
        view.v = [t[:width] for t in self.v]
        return view

    def copy_row(self, src: int, dst: int) -> None:
        for t in self.k + self.v:
            t[dst].copy_(t[src])
