"""The key/value store of the continuous-batching engine: one row per slot, preallocated.

:class:`KVCache` holds, for every layer of a :class:`~.decoder.Decoder`, the keys and values
[slots, kv_heads, capacity, head_dim] that :meth:`~.decoder.Decoder.forward` writes and
attends to; :mod:`.batching` sizes it from the KV budget, narrows it to the busy slots and
moves rows when it compacts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import torch


class CacheShape(Protocol):
    """What a cache is sized from: the model's key/value heads, head size, layers and device (a
    :class:`~.decoder.Decoder`)."""

    @property
    def n_kv(self) -> int: ...

    @property
    def head_dim(self) -> int: ...

    @property
    def layers(self) -> Sequence[object]: ...

    @property
    def device(self) -> torch.device: ...


class KVCache:
    """Per-layer key/value tensors [slots, kv_heads, capacity, head_dim]."""

    def __init__(self, engine: CacheShape, width: int, capacity: int, dtype: torch.dtype) -> None:
        shape = (width, engine.n_kv, capacity, engine.head_dim)
        self.k = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]
        self.v = [torch.zeros(shape, dtype=dtype, device=engine.device) for _ in engine.layers]

    @staticmethod
    def bytes_per_token(engine: CacheShape, dtype: torch.dtype) -> int:
        return 2 * len(engine.layers) * engine.n_kv * engine.head_dim * torch.empty((), dtype=dtype).element_size()

    def narrow(self, width: int) -> KVCache:
        view = object.__new__(KVCache)
        view.k = [t[:width] for t in self.k]
        view.v = [t[:width] for t in self.v]
        return view

    def copy_row(self, src: int, dst: int) -> None:
        for t in self.k + self.v:
            t[dst].copy_(t[src])
