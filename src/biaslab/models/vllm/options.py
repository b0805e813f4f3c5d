"""Options of ``vllm/`` models (``-P key=value`` on the command line), checked without importing vLLM.

The options themselves are documented with the backend (:mod:`.backend`).
"""

from __future__ import annotations

from typing import Any

from biaslab.errors import ConfigError

DEFAULTS: dict[str, Any] = {
    "tensor_parallel_size": 1,
    "pipeline_parallel_size": 1,
    "data_parallel_size": 1,
    "gpu_memory_utilization": None,  # vLLM's default (0.9 or so)
    "max_model_len": None,  # the model's context
    "max_num_seqs": None,  # vLLM's default
    "enforce_eager": False,
    "dtype": "auto",
    "chat_template": "auto",
    "distributed_executor_backend": None,  # vLLM's choice: mp on one node, ray when a Ray cluster is asked for
}
_INT = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len", "max_num_seqs")
_CHOICES = {
    "dtype": ("auto", "float32", "bfloat16", "float16"),
    "chat_template": ("auto", "none"),
    "distributed_executor_backend": ("mp", "ray", "uni"),
}
_DTYPE_ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def parse_options(options: dict[str, Any]) -> dict[str, Any]:
    """The vLLM backend's options with defaults filled in; a ConfigError for unknown or bad ones."""
    opts = dict(DEFAULTS)
    for key, value in options.items():
        if value is None:
            continue
        if key not in DEFAULTS:
            raise ConfigError(f"unknown option {key!r} for vllm/ models; known: {', '.join(sorted(DEFAULTS))}")
        if key in _INT:
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ConfigError(f"option {key} must be a whole number, got {value!r}") from None
            if value < 1:
                raise ConfigError(f"option {key} must be at least 1, got {value}")
        elif key == "gpu_memory_utilization":
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ConfigError(f"option gpu_memory_utilization must be a fraction, got {value!r}") from None
            if not 0 < value <= 1:
                raise ConfigError(f"option gpu_memory_utilization must be in (0, 1], got {value}")
        elif key == "enforce_eager":
            text = str(value).strip().lower()
            if text not in _TRUE | _FALSE:
                raise ConfigError(f"option enforce_eager must be true or false, got {value!r}")
            value = text in _TRUE
        else:
            value = str(value).strip().lower()
            value = _DTYPE_ALIASES.get(value, value) if key == "dtype" else value
            if value not in _CHOICES[key]:
                raise ConfigError(f"option {key} must be one of {', '.join(_CHOICES[key])}, got {value!r}")
        opts[key] = value
    return opts


def engine_args(opts: dict[str, Any], dtype: str) -> dict[str, Any]:
    """Keyword arguments of ``vllm.LLM`` (besides the model) for one replica."""
    args: dict[str, Any] = {
        "dtype": dtype,
        "tensor_parallel_size": opts["tensor_parallel_size"],
        "pipeline_parallel_size": opts["pipeline_parallel_size"],
        "enforce_eager": opts["enforce_eager"],
        "seed": 0,
    }
    for key in ("gpu_memory_utilization", "max_model_len", "max_num_seqs", "distributed_executor_backend"):
        if opts[key] is not None:
            args[key] = opts[key]
    return args
