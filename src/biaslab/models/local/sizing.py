"""How much the local backend takes on at once, sized to the device it runs on.

On CPU the defaults are those tuned for 2-8 cores: 32 rows per static batch, 48 decoding slots, a 720 MB
key/value cache, 512 tokens per scoring pass (:mod:`.llama.batching`, :mod:`.llama.scoring`). A GPU does
the same work in about the time of much larger batches, and has memory for them: there the sizes follow the
memory left free once the weights are loaded (:func:`sizes_for`):

* the key/value cache of the continuous-batching engine gets :data:`GPU_KV_SHARE` of it (the engine then
  runs as many slots as that holds for the call's longest prompt + max_tokens, up to :data:`GPU_MAX_SLOTS`);
* a scoring pass takes as many tokens as :data:`GPU_ACTIVATION_SHARE` of it holds in activations (between
  512 and :data:`GPU_MAX_BATCH_TOKENS`);
* a static batch (architectures the engine does not run) has :data:`GPU_BATCH_SIZE` rows, and its
  scoring logits may take :data:`GPU_LOGITS_SHARE` of the free memory.

Options given by the user (``-P max_slots=...``) win over these. The device is described by a
:class:`DeviceMemory`; :func:`device_memory` reads it from torch, and tests pass their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CPU_BATCH_SIZE, CPU_MAX_SLOTS, CPU_KV_BUDGET_MB, CPU_BATCH_TOKENS = 32, 48, 720, 512
CPU_LOGITS_FLOATS = 16 << 20  # logits of one scoring batch of the transformers path (64 MB)
GPU_BATCH_SIZE = 64
GPU_MAX_SLOTS = 256
GPU_KV_SHARE = 0.45
GPU_ACTIVATION_SHARE = 0.10
GPU_MAX_BATCH_TOKENS = 16384
GPU_LOGITS_SHARE = 0.05


@dataclass(frozen=True)
class DeviceMemory:
    kind: str  # torch's device type: "cpu", "cuda", "mps"
    total: int  # bytes
    free: int  # bytes free with the model loaded


@dataclass(frozen=True)
class Sizes:
    batch_size: int  # rows per static batch (generate) and per scoring batch of the transformers path
    max_slots: int  # concurrent requests of the continuous-batching engine
    kv_budget_mb: int  # about this much memory for its key/value cache
    batch_tokens: int  # tokens per forward pass of the engine's log-likelihood scoring
    logits_floats: int  # logits of one scoring batch of the transformers path (fewer rows for long texts)


CPU_SIZES = Sizes(CPU_BATCH_SIZE, CPU_MAX_SLOTS, CPU_KV_BUDGET_MB, CPU_BATCH_TOKENS, CPU_LOGITS_FLOATS)


def model_dims(config: Any, dtype_bytes: int) -> tuple[int, int]:
    """``(key/value cache bytes per token, activation bytes per token of a forward pass)`` of a model config."""
    text = getattr(config, "text_config", None) or config
    hidden = int(getattr(text, "hidden_size", 0) or 0)
    heads = int(getattr(text, "num_attention_heads", 0) or 1)
    kv_heads = int(getattr(text, "num_key_value_heads", 0) or heads)
    head_dim = int(getattr(text, "head_dim", 0) or (hidden // heads if hidden else 0))
    layers = int(getattr(text, "num_hidden_layers", 0) or 0)
    intermediate = int(getattr(text, "intermediate_size", 0) or 4 * hidden)
    kv = 2 * layers * kv_heads * head_dim * dtype_bytes
    # a layer's live temporaries per token: the residual, q/k/v and the attention output, gate/up and the
    # product; twice that for what the allocator holds between layers
    act = 2 * (4 * hidden + 3 * intermediate) * dtype_bytes
    return kv, act


def sizes_for(memory: DeviceMemory | None, *, activation_bytes_per_token: int) -> Sizes:
    """The sizes for a model on the device ``memory`` describes (None or a CPU: :data:`CPU_SIZES`)."""
    if memory is None or memory.kind != "cuda":
        return CPU_SIZES
    free = max(0, memory.free)
    kv_mb = max(CPU_KV_BUDGET_MB, int(free * GPU_KV_SHARE) >> 20)
    tokens = int(free * GPU_ACTIVATION_SHARE) // max(1, activation_bytes_per_token)
    tokens = max(CPU_BATCH_TOKENS, min(GPU_MAX_BATCH_TOKENS, tokens // 512 * 512))
    logits = max(CPU_LOGITS_FLOATS, int(free * GPU_LOGITS_SHARE) // 4)
    return Sizes(GPU_BATCH_SIZE, GPU_MAX_SLOTS, kv_mb, tokens, logits)


def device_memory(device: Any) -> DeviceMemory | None:
    """The memory of a torch ``device`` (None for a CPU or a device torch cannot describe)."""
    if getattr(device, "type", None) != "cuda":
        return None
    import torch

    free, total = torch.cuda.mem_get_info(device)
    return DeviceMemory("cuda", int(total), int(free))
