"""The KV cache of the continuous-batching engine: shapes, narrowed views, row copies."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")


def _shape(n_layers: int = 3, n_kv: int = 2, head_dim: int = 4) -> Any:
    """What the cache reads of an engine."""
    return SimpleNamespace(n_kv=n_kv, head_dim=head_dim, device=torch.device("cpu"), layers=[None] * n_layers)


def test_shapes_and_bytes_per_token():
    from biaslab.models.local.llama.kv_cache import KVCache

    engine = _shape()
    cache = KVCache(engine, 8, 16, torch.float32)
    assert len(cache.k) == len(cache.v) == 3
    assert all(t.shape == (8, 2, 16, 4) and t.dtype == torch.float32 and not t.any() for t in cache.k + cache.v)
    # keys and values, every layer, 4-byte floats
    assert KVCache.bytes_per_token(engine, torch.float32) == 2 * 3 * 2 * 4 * 4
    assert KVCache.bytes_per_token(engine, torch.bfloat16) == 2 * 3 * 2 * 4 * 2


def test_narrow_is_a_view_and_copy_row_moves_a_slot():
    from biaslab.models.local.llama.kv_cache import KVCache

    cache = KVCache(_shape(), 8, 16, torch.float32)
    for li, (k, v) in enumerate(zip(cache.k, cache.v)):
        k[5].fill_(li + 1.0)
        v[5].fill_(-(li + 1.0))
    narrow = cache.narrow(6)
    assert all(t.shape[0] == 6 for t in narrow.k + narrow.v)
    narrow.copy_row(5, 1)
    for li, (k, v) in enumerate(zip(cache.k, cache.v)):  # written through the view
        assert torch.equal(k[1], k[5]) and float(k[1].max()) == li + 1.0
        assert torch.equal(v[1], v[5]) and not k[0].any()
