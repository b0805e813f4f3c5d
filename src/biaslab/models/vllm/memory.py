"""What :mod:`.sizing` needs, read where the engine starts: the memory free now (``/proc/meminfo`` and the cgroup's
limit on CPUs, NVML or torch on GPUs) and the model's shape (its config.json, the tensors its safetensors files
hold). :func:`size_engine` puts them together: the engine arguments biaslab adds, and the record of the choice.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.vllm.sizing import DTYPE_BYTES, Memory, ModelShape, Plan, plan_cpu, plan_gpu

KV_ENV = "VLLM_CPU_KVCACHE_SPACE"  # GiB of KV cache on vLLM's CPU build
_LENGTH_KEYS = (  # the keys vLLM takes the model's context from (the smallest)
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
_FLOATS = {"F64", "F32", "F16", "BF16"}  # loaded at the dtype that runs; other tensors (quantized) as stored
_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2}


def _meminfo(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in path.read_text().splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key.strip()] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return out


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_free(root: Path) -> tuple[int, int] | None:
    """(limit, free) of this process's memory cgroup (v2, else v1): the limit less what it holds, less the
    inactive file cache it may reclaim; None without a limit."""
    for limit_file, usage_file, inactive_key in (
        ("memory.max", "memory.current", "inactive_file"),
        ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes", "total_inactive_file"),
    ):
        limit, usage = _read_int(root / limit_file), _read_int(root / usage_file)
        if limit is None or usage is None or limit >= 1 << 60:  # "max", or v1's "unlimited"
            continue
        inactive = 0
        try:
            for line in (root / limit_file).with_name("memory.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == inactive_key and value.strip().isdigit():
                    inactive = int(value)
        except OSError:
            pass
        return limit, max(0, limit - usage + inactive)
    return None


def cpu_memory(meminfo: Path = Path("/proc/meminfo"), cgroup: Path = Path("/sys/fs/cgroup")) -> Memory:
    """The machine's memory and what is available now (MemAvailable), the cgroup's when its limit is lower."""
    info = _meminfo(meminfo)
    total = info["MemTotal"]
    free = info.get("MemAvailable", info.get("MemFree", 0))
    limited = _cgroup_free(cgroup)
    if limited is not None and limited[0] < total:
        total, free = limited[0], min(free, limited[1])
    return Memory(free=free, total=total)


def _visible_gpus(count: int) -> list[int]:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    ids = [int(x) for x in visible.split(",") if x.strip().isdigit()] if visible else list(range(count))
    return ids[:count]


def gpu_memory(count: int) -> Memory | None:
    """The least free memory (and its GPU's total) of the first ``count`` GPUs this process sees: from NVML (no
    CUDA context made here), else torch; None when neither can tell."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            infos = [pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)) for i in _visible_gpus(count)]
        finally:
            pynvml.nvmlShutdown()
        pairs = [(int(m.free), int(m.total)) for m in infos]
    except Exception:
        try:
            import torch

            pairs = [tuple(map(int, torch.cuda.mem_get_info(i))) for i in range(count)]  # type: ignore[misc]
        except Exception:
            return None
    if not pairs:
        return None
    free, total = min(pairs)
    return Memory(free=free, total=total)


def _model_file(source: str, name: str) -> Path | None:
    if Path(source).is_dir():
        path = Path(source) / name
        return path if path.is_file() else None
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(source, name))
    except Exception:
        return None


def _json(path: Path | None) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def safetensors_bytes(files: list[Path], dtype_bytes: int) -> int:
    """Bytes of the tensors in ``files`` once loaded: floating-point ones at ``dtype_bytes`` each, the others as
    stored (read from each file's header, not its data)."""
    total = 0
    for f in files:
        with open(f, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(n))
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            count = 1
            for dim in entry["shape"]:
                count *= int(dim)
            dt = entry["dtype"]
            if dt in _FLOATS:
                total += count * dtype_bytes
            else:
                start, end = entry["data_offsets"]
                total += int(end) - int(start)
    return total


def weight_bytes(source: str, dtype_bytes: int) -> int | None:
    """The model's weights at the dtype that runs: a directory's safetensors headers (its other weight files by
    size), a hub model's safetensors metadata (its parameter counts); None when unknown."""
    config = _model_file(source, "config.json")  # a hub model's files: the snapshot in the hub cache
    folder = Path(source) if Path(source).is_dir() else config.parent if config else None
    if folder is not None:
        files = sorted(folder.glob("*.safetensors"))
        if files:
            try:
                return safetensors_bytes(files, dtype_bytes)
            except (OSError, ValueError, KeyError, struct.error):
                pass
        others = [f for pattern in ("*.safetensors", "*.bin", "*.pt") for f in folder.glob(pattern)]
        if others or Path(source).is_dir():
            return sum(f.stat().st_size for f in others) or None
    try:
        from huggingface_hub import get_safetensors_metadata

        meta = get_safetensors_metadata(source)
        return sum(n * (dtype_bytes if dt in _FLOATS else _BYTES.get(dt, 1)) for dt, n in meta.parameter_count.items())
    except Exception:
        return None


def model_shape(source: str, dtype: str) -> ModelShape | None:
    """The shape of ``source`` (a directory or a hub id) from its config.json and weights; None when unknown."""
    config = _json(_model_file(source, "config.json"))
    text: dict[str, Any] = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    get = text.get
    layers = get("num_hidden_layers") or get("n_layer") or get("num_layers")
    heads = get("num_attention_heads") or get("n_head")
    hidden = get("hidden_size") or get("n_embd") or get("d_model")
    kv_heads = get("num_key_value_heads") or get("multi_query_group_num") or heads
    head_dim = get("head_dim") or (hidden // heads if hidden and heads else None)
    weights = weight_bytes(source, DTYPE_BYTES.get(dtype, 4))
    if not (layers and kv_heads and head_dim and weights):
        return None
    lengths = [int(v) for k in _LENGTH_KEYS if isinstance(v := get(k), (int, float)) and v > 0]
    tok_len = _json(_model_file(source, "tokenizer_config.json")).get("model_max_length")
    if isinstance(tok_len, (int, float)) and 0 < tok_len < 1e9:  # transformers writes 1e30 when there is none
        lengths.append(int(tok_len))
    return ModelShape(
        layers=int(layers),
        kv_heads=int(kv_heads),
        head_dim=int(head_dim),
        vocab=int(get("vocab_size") or config.get("vocab_size") or 32000),
        context=min(lengths) if lengths else 2048,  # vLLM's assumption when the config names none
        weight_bytes=weights,
    )


def size_engine(
    model: str,
    engine_args: Mapping[str, Any],
    *,
    cpu: bool,
    env: Mapping[str, str] | None = None,
    default_share: float = 0.92,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``engine_args`` with biaslab's sizes added where the user set none, and the record of the choice (empty
    when the model's shape or the memory cannot be read: vLLM's defaults then)."""
    env = os.environ if env is None else env
    args = dict(engine_args)
    world = int(args.get("tensor_parallel_size", 1)) * int(args.get("pipeline_parallel_size", 1))
    user_share, user_len = args.get("gpu_memory_utilization"), args.get("max_model_len")
    shape = model_shape(model, str(args.get("dtype", "float32")))
    plan: Plan | None = None
    if cpu:
        user_kv = env.get(KV_ENV, "").strip()
        if user_kv and not user_kv.isdigit():
            raise ConfigError(f"{KV_ENV} must be a whole number of GiB, got {user_kv!r}")
        try:
            memory: Memory | None = cpu_memory()
        except (OSError, KeyError, ValueError):  # no /proc/meminfo: vLLM's defaults
            memory = None
        if shape is not None and memory is not None:
            plan = plan_cpu(
                shape,
                str(args.get("dtype", "float32")),
                memory,
                world=world,
                user_kv_bytes=int(user_kv) << 30 if user_kv else None,
                user_share=user_share,
                user_len=user_len,
            )
    else:
        memory = gpu_memory(world)
        if memory is not None:
            plan = plan_gpu(
                memory,
                default_share,
                weight_bytes=shape.weight_bytes if shape else None,
                world=world,
                user_share=user_share,
                user_len=user_len,
            )
    if plan is None:
        return args, {}
    return {**args, **plan.args}, plan.record
