"""How much memory and context a vLLM engine is given, from the model's shape and the memory free now: arithmetic
only (what is free and what the model is are read by :mod:`.memory`).

vLLM's CPU build reserves ``gpu_memory_utilization`` (0.92 by default) of the machine's memory, and fails at start
when other processes hold more than the rest. biaslab gives it an explicit key/value cache instead (vLLM's
``kv_cache_memory_bytes``, what ``VLLM_CPU_KVCACHE_SPACE`` sets in GiB): what is free, less the weights at the dtype
that runs and a margin beside them (vLLM's processes, the float32 logits of one step of
:data:`CPU_BATCH_TOKENS` tokens, twice), at most :data:`MAX_SEQS` sequences of the model's whole context; and a
context (``max_model_len``) of at most the model's and of what that cache holds :data:`MIN_SEQS` times. On a GPU
the share is vLLM's default when the GPU is free, else what is free less :data:`GPU_SLACK`; vLLM sizes the cache
itself. Whatever the user set (``-P gpu_memory_utilization``, ``-P max_model_len``, ``VLLM_CPU_KVCACHE_SPACE``)
stays as set. None of it is in the identity: answers do not depend on it (a context too short for a prompt is an
error, never another answer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from biaslab.errors import BackendError

GiB = 1 << 30
MiB = 1 << 20
MIN_SEQS = 4  # sequences of the whole context the KV cache holds at least
MAX_SEQS = 8  # ... and at most: more would only take memory from the machine's other processes
MIN_CONTEXT = 512  # tokens: with less room than MIN_SEQS sequences of it, vLLM is not started
PROCESS_BYTES = 2 * GiB  # vLLM's engine core and worker processes (torch, vLLM, their buffers)
CPU_BATCH_TOKENS = 4096  # tokens of one step of vLLM's CPU build (its max_num_batched_tokens for vllm.LLM)
GPU_SLACK = GiB  # the CUDA context and allocator of vLLM's workers, outside the share they reserve
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class ModelShape:
    """What the KV cache and the weights of a model take: from its config.json and its weight files."""

    layers: int
    kv_heads: int
    head_dim: int
    vocab: int
    context: int  # the model's own context (the smallest length its config names)
    weight_bytes: int  # at the dtype that runs


@dataclass(frozen=True)
class Memory:
    free: int
    total: int


@dataclass
class Plan:
    """Engine arguments to add (never one the user gave) and what results.json records of the choice."""

    args: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)


def gib(n: float) -> float:
    return round(n / GiB, 2)


def kv_bytes_per_token(shape: ModelShape, dtype_bytes: int) -> int:
    """Keys and values of every layer: ``2 * layers * kv_heads * head_dim * dtype bytes``."""
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * dtype_bytes


def beside_weights(shape: ModelShape, batch_tokens: int = CPU_BATCH_TOKENS) -> int:
    """Memory vLLM needs besides weights and KV cache: its processes, and one step's float32 logits twice (the
    logits and their log-softmax: prompt log-probabilities take them at every prompt token)."""
    return PROCESS_BYTES + 2 * batch_tokens * shape.vocab * 4


def fitting_context(kv_bytes: int, per_token: int, model_context: int) -> int | None:
    """The longest context that :data:`MIN_SEQS` sequences fill the KV cache with, in steps of 256 tokens (16 below
    256); None when the model's own fits (or when not one step does: vLLM then says what fits)."""
    if per_token <= 0:
        return None
    tokens = kv_bytes // (MIN_SEQS * per_token)
    if tokens >= model_context:
        return None
    step = 256 if tokens >= 256 else 16
    tokens = tokens // step * step
    return tokens or None


def _floor2(x: float) -> float:
    return math.floor(x * 100) / 100


def _context(plan: Plan, kv_bytes: int, per_token: int, shape: ModelShape, user_len: int | None) -> None:
    if user_len is not None:
        plan.record["max_model_len"], plan.record["set_by"]["max_model_len"] = user_len, "user"
        return
    fit = fitting_context(kv_bytes, per_token, shape.context)
    if fit is None:
        plan.record["max_model_len"], plan.record["set_by"]["max_model_len"] = shape.context, "model"
    else:
        plan.args["max_model_len"] = fit
        plan.record["max_model_len"], plan.record["set_by"]["max_model_len"] = fit, "biaslab"


def plan_cpu(
    shape: ModelShape,
    dtype: str,
    memory: Memory,
    *,
    world: int = 1,
    user_kv_bytes: int | None = None,
    user_share: float | None = None,
    user_len: int | None = None,
) -> Plan:
    """The KV cache, memory share and context of vLLM's CPU build (``world``: its workers, tensor x pipeline
    parallel, each holding its part of the cache: ``kv_cache_memory_bytes`` is per worker)."""
    per_token = kv_bytes_per_token(shape, DTYPE_BYTES.get(dtype, 4))
    beside = beside_weights(shape, CPU_BATCH_TOKENS * world)
    plan = Plan(
        record={
            "memory_free_gib": gib(memory.free),
            "memory_total_gib": gib(memory.total),
            "weights_gib": gib(shape.weight_bytes),
            "set_by": {},
        }
    )
    set_by = plan.record["set_by"]
    if user_kv_bytes is not None:  # VLLM_CPU_KVCACHE_SPACE: vLLM applies it itself (and ignores the share)
        kv = user_kv_bytes * world
        set_by["kv_cache_gib"] = "user"
    elif user_share is not None:  # vLLM's own cache: the share less what its worker holds (weights, itself)
        kv = max(0, int(user_share * memory.total) - shape.weight_bytes - PROCESS_BYTES)
        plan.record["gpu_memory_utilization"], set_by["gpu_memory_utilization"] = user_share, "user"
        set_by["kv_cache_gib"] = "vllm"
    else:
        budget = memory.free - shape.weight_bytes - beside
        least = MIN_SEQS * per_token * min(MIN_CONTEXT, shape.context)
        if budget < least:
            raise BackendError(
                f"too little memory for vLLM: its weights take {gib(shape.weight_bytes)} GiB and it needs about "
                f"{gib(beside + least)} GiB beside them (KV cache, activations, its processes), but "
                f"{gib(memory.free)} GiB of {gib(memory.total)} GiB are free; free some memory, or set "
                f"VLLM_CPU_KVCACHE_SPACE=1 -P max_model_len={MIN_CONTEXT} to try anyway"
            )
        kv = min(budget, MAX_SEQS * per_token * shape.context) // (world * MiB) * (world * MiB)
        share = (shape.weight_bytes + kv + beside) / max(1, memory.total)
        plan.args["kv_cache_memory_bytes"] = kv // world
        plan.args["gpu_memory_utilization"] = min(1.0, max(0.01, math.ceil(share * 100) / 100))
        plan.record["gpu_memory_utilization"] = plan.args["gpu_memory_utilization"]
        set_by["kv_cache_gib"] = set_by["gpu_memory_utilization"] = "biaslab"
    plan.record["kv_cache_gib"] = gib(kv)
    _context(plan, kv, per_token, shape, user_len)
    plan.record["set_by"] = plan.record.pop("set_by")  # last: after the sizes it names
    return plan


def plan_gpu(
    memory: Memory,
    default_share: float,
    *,
    weight_bytes: int | None = None,
    world: int = 1,
    user_share: float | None = None,
    user_len: int | None = None,
) -> Plan:
    """The share of each GPU vLLM takes (``memory``: the least free of its GPUs): vLLM's default when that much is
    free, else what is free less :data:`GPU_SLACK`. vLLM sizes the KV cache and checks the context itself."""
    plan = Plan(record={"memory_free_gib": gib(memory.free), "memory_total_gib": gib(memory.total), "set_by": {}})
    set_by = plan.record["set_by"]
    if weight_bytes is not None:
        plan.record["weights_gib"] = gib(weight_bytes)
    if user_share is not None:
        share, set_by["gpu_memory_utilization"] = user_share, "user"
    elif memory.free >= default_share * memory.total + GPU_SLACK:
        share, set_by["gpu_memory_utilization"] = default_share, "vllm"
    else:
        share = _floor2((memory.free - GPU_SLACK) / max(1, memory.total))
        per_gpu = (weight_bytes or 0) / max(1, world)
        if share <= 0 or share * memory.total <= per_gpu:
            raise BackendError(
                f"too little GPU memory for vLLM: {gib(memory.free)} GiB of {gib(memory.total)} GiB are free"
                + (f" and the weights take {gib(per_gpu)} GiB of each GPU" if weight_bytes else "")
                + "; free memory on the GPU, or give -P gpu_memory_utilization=<share> to try anyway"
            )
        plan.args["gpu_memory_utilization"] = share
        set_by["gpu_memory_utilization"] = "biaslab"
    plan.record["gpu_memory_utilization"] = share
    if user_len is not None:
        plan.record["max_model_len"], set_by["max_model_len"] = user_len, "user"
    plan.record["set_by"] = plan.record.pop("set_by")
    return plan
