"""Loading local models with transformers, once per process: causal LMs and masked LMs alike.

``load(source, gguf_file, device, dtype, objective=...)`` returns the model, its tokenizer and
its identity (:func:`.identity.local_identity`; masked LMs add ``"objective": "masked-lm"``);
loading the same model twice (e.g. in tests) reuses it. ``objective`` picks the transformers
class: ``"causal"`` (``AutoModelForCausalLM``, the default) or ``"masked-lm"``
(``AutoModelForMaskedLM``, :mod:`.masked_lm`). Transformers' progress bars are silenced while
loading.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from biaslab.errors import BackendError, ConfigError
from biaslab.models.local.identity import local_identity
from biaslab.models.local.llama.engine import LlamaEngine
from biaslab.models.local.llama.runtime import limit_heap_retention

Objective = Literal["causal", "masked-lm"]  # what the model predicts: the next token, or masked tokens

_DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
           "float16": torch.float16, "fp16": torch.float16, "half": torch.float16}


@dataclass
class Loaded:
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    identity: dict[str, Any]
    engine: LlamaEngine | None = None
    engine_failed: bool = False


_LOADED: dict[tuple[str, str | None, str, str, str], Loaded] = {}
_LOAD_LOCK = threading.Lock()


def pick_device(device: str) -> torch.device:
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ConfigError(f"unknown device {device!r}; use cpu, cuda, cuda:N or mps") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device cuda was asked for but torch sees no CUDA GPU; use device=cpu")
    return dev


def pick_dtype(dtype: str, device: torch.device) -> torch.dtype:
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if dtype not in _DTYPES:
        raise ConfigError(f"unknown dtype {dtype!r}; use auto, float32, bfloat16 or float16")
    return _DTYPES[dtype]


@contextlib.contextmanager
def _quiet_loading():
    """Silence transformers' progress bars while loading (the GGUF one is a bare tqdm)."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # pragma: no cover - transformers without GGUF support
        gguf_utils = None
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None:
        gguf_utils.tqdm = lambda iterable=None, *a, **k: iterable
    try:
        yield
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar
        if was:
            hf_logging.enable_progress_bar()


def load(source: str, gguf_file: str | None, device: torch.device, dtype: torch.dtype,
         objective: Objective = "causal") -> Loaded:
    """The model at ``source`` (and ``gguf_file``) on ``device`` in ``dtype``, loaded once per process."""
    key = (source, gguf_file, str(device), str(dtype), objective)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        try:
            from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer
        except ImportError:
            raise ConfigError("local models need transformers; install it with: pip install 'biaslab[local]'") from None
        masked = objective == "masked-lm"
        model_class = AutoModelForMaskedLM if masked else AutoModelForCausalLM
        if not masked:
            limit_heap_retention()  # before loading: see its docstring
        local = Path(source).is_dir()
        kw: dict[str, Any] = {"local_files_only": True} if local else {}
        if gguf_file is not None:
            kw["gguf_file"] = gguf_file
        what = f"{source}/{gguf_file}" if gguf_file else source
        try:
            with _quiet_loading():
                tokenizer = AutoTokenizer.from_pretrained(source, **kw)
                model = model_class.from_pretrained(source, dtype=dtype, **kw)
        except (OSError, ValueError, KeyError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BackendError(f"could not load the {'masked LM' if masked else 'model'} {what}: {first}") from None
        model.to(device).eval()
        model.requires_grad_(False)
        identity = local_identity(source, gguf_file, str(dtype).replace("torch.", ""),
                                  revision=getattr(getattr(model, "config", None), "_commit_hash", None))
        if masked:
            identity["objective"] = "masked-lm"  # scored by pseudo-log-likelihood, also for hub models
        loaded = Loaded(model, tokenizer, device, dtype, identity)
        _LOADED[key] = loaded
        return loaded
