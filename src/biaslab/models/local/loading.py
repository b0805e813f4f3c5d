"""Loading local models with transformers, once per process: causal LMs and masked LMs alike.

``load(source, gguf_file, device, dtype, objective=...)`` returns the model, its tokenizer and
its identity (:func:`.identity.local_identity`; masked LMs add ``"objective": "masked-lm"``);
loading the same model twice (e.g. in tests) reuses it. ``objective`` picks the transformers
class: ``"causal"`` (``AutoModelForCausalLM``, the default) or ``"masked-lm"``
(``AutoModelForMaskedLM``, :mod:`.masked_lm`). Transformers' progress bars are silenced while
loading.

A GGUF file is converted once and kept in the user cache (:mod:`.conversion`); later processes load
the converted checkpoint, while its files are verified in the background. One the engine runs (Llama,
Mistral, Qwen2, Qwen3, Phi-3, Gemma 3 text) on CPU loads without importing transformers at all
(:class:`.llama.light.LightCausalLM` for the engine, :class:`.light_tokenizer.LightTokenizer` when the
conversion checked it): about 2 s for SmolLM2 and 3-4 s for Gemma 3 270M (its tokenizer alone takes
1.4 s), torch import included, instead of 10-25 s.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch

from biaslab.errors import BackendError, ConfigError
from biaslab.models.device_info import BF16_MIN_CAPABILITY
from biaslab.models.local import conversion
from biaslab.models.local.gguf_parse import parsed_once
from biaslab.models.local.identity import local_identity
from biaslab.models.local.light_tokenizer import LightTokenizer, transformers_tokenizer
from biaslab.models.local.llama.engine import LlamaEngine
from biaslab.models.local.llama.light import LightCausalLM, light_supported
from biaslab.models.local.llama.runtime import limit_heap_retention
from biaslab.models.store import build_lock

Objective = Literal["causal", "masked-lm"]  # what the model predicts: the next token, or masked tokens

_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
}


@dataclass
class Loaded:
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    identity: dict[str, Any]
    engine: LlamaEngine | None = None
    engine_failed: bool = False
    reduced_engines: dict[str, LlamaEngine] = field(default_factory=dict)  # by precision (opt-in)


log = logging.getLogger(__name__)

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
    if dtype == "auto":  # the rule of :func:`biaslab.models.device_info.auto_dtype_name`, which needs no torch
        if device.type == "cuda":
            if torch.version.hip:
                return torch.bfloat16
            major = torch.cuda.get_device_capability(device)[0]
            return torch.bfloat16 if major >= BF16_MIN_CAPABILITY else torch.float16
        return torch.float32
    if dtype not in _DTYPES:
        raise ConfigError(f"unknown dtype {dtype!r}; use auto, float32, bfloat16 or float16")
    return _DTYPES[dtype]


@contextlib.contextmanager
def _quiet_loading(gguf: bool = False):
    """Silence transformers' progress bars while loading (the GGUF one is a bare tqdm)."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    gguf_utils: Any = None
    try:
        if gguf:
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


class _LazyAuto:
    """``AutoModelForCausalLM`` / ``AutoModelForMaskedLM`` by name, imported when first used
    (importing them imports every model's configuration: seconds)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def from_pretrained(self, *args: Any, **kwargs: Any) -> Any:
        import transformers

        return getattr(transformers, self.__name__).from_pretrained(*args, **kwargs)


def _auto_class(masked: bool) -> Any:
    import importlib.util

    if importlib.util.find_spec("transformers") is None:
        raise ConfigError("local models need transformers; install it with: pip install 'biaslab[local]'") from None
    return _LazyAuto("AutoModelForMaskedLM" if masked else "AutoModelForCausalLM")


def load(
    source: str, gguf_file: str | None, device: torch.device, dtype: torch.dtype, objective: Objective = "causal"
) -> Loaded:
    """The model at ``source`` (and ``gguf_file``) on ``device`` in ``dtype``, loaded once per process."""
    key = (source, gguf_file, str(device), str(dtype), objective)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        masked = objective == "masked-lm"
        model_class = _auto_class(masked)
        if not masked:
            limit_heap_retention()  # before loading: see its docstring
        what = f"{source}/{gguf_file}" if gguf_file else source
        try:
            if gguf_file is not None:
                tokenizer, model = _load_gguf(source, gguf_file, model_class, dtype, device)
            else:
                from transformers import AutoTokenizer

                kw: dict[str, Any] = {"local_files_only": True} if Path(source).is_dir() else {}
                with _quiet_loading():
                    tokenizer = AutoTokenizer.from_pretrained(source, **kw)
                    model = model_class.from_pretrained(source, dtype=dtype, **kw)
        except (OSError, ValueError, KeyError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BackendError(f"could not load the {'masked LM' if masked else 'model'} {what}: {first}") from None
        model.to(device).eval()
        model.requires_grad_(False)
        identity = local_identity(
            source,
            gguf_file,
            str(dtype).replace("torch.", ""),
            revision=getattr(getattr(model, "config", None), "_commit_hash", None),
        )
        if masked:
            identity["objective"] = "masked-lm"  # scored by pseudo-log-likelihood, also for hub models
        loaded = Loaded(model, tokenizer, device, dtype, identity)
        _LOADED[key] = loaded
        return loaded


def _load_gguf(
    source: str, gguf_file: str, model_class: Any, dtype: torch.dtype, device: torch.device
) -> tuple[Any, Any]:
    """(tokenizer, model) of a GGUF file: from its converted copy in the cache (:mod:`.conversion`),
    converted first if there is none (or it fails verification). A hub file is downloaded first."""
    path = conversion.local_gguf(source, gguf_file)
    if path is None:  # not on disk and not downloadable: transformers says why
        from transformers import AutoTokenizer

        with _quiet_loading(gguf=True):
            kw: dict[str, Any] = {"gguf_file": gguf_file}
            return AutoTokenizer.from_pretrained(source, **kw), model_class.from_pretrained(source, dtype=dtype, **kw)
    loaded = load_cached(path, model_class, dtype, device)
    if loaded is not None:
        return loaded
    sha256 = conversion.source_sha256(path)
    with build_lock(f"convert-{sha256[:16]}"):  # another process converting it: wait, then load its copy
        loaded = load_cached(path, model_class, dtype, device)
        return loaded if loaded is not None else _convert(path, sha256, model_class, dtype, device)


def _convert(path: Path, sha256: str, model_class: Any, dtype: torch.dtype, device: torch.device) -> tuple[Any, Any]:
    """Convert the GGUF file ``path`` into the model store and load the copy (the model as converted where the
    store cannot be written)."""
    from transformers import AutoTokenizer

    with _quiet_loading(gguf=True), parsed_once(path):
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = model_class.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    try:
        entry = conversion.write_entry(model, tokenizer, source=path, sha256=sha256)
    except (OSError, ValueError) as exc:  # read-only or full cache: use the model as loaded
        log.warning("could not keep the converted model in the cache (%s); the next run converts it again", exc)
        return tokenizer, (model if dtype == torch.float32 else model.to(dtype))
    del model, tokenizer
    return load_checkpoint(entry, model_class, dtype, device)


def load_cached(path: Path, model_class: Any, dtype: torch.dtype, device: torch.device) -> tuple[Any, Any] | None:
    """(tokenizer, model) of the cached conversion of the GGUF file ``path``, loaded while its files are hashed
    (:func:`.conversion.pending_entry`) and kept only if they are intact; None if there is none or it is broken."""
    pending = conversion.pending_entry(path)
    if pending is None:
        return None
    entry, check = pending
    try:
        loaded = load_checkpoint(entry, model_class, dtype, device)
    except Exception:
        if check.result() is None:  # an intact entry that does not load: not a cache problem
            raise
        loaded = None
    problem = check.result()
    if problem is not None:
        log.warning("the cached conversion %s is broken (%s): converting again", entry, problem)
        return None
    return loaded


def load_checkpoint(directory: Path, model_class: Any, dtype: torch.dtype, device: torch.device) -> tuple[Any, Any]:
    """(tokenizer, model) of a converted checkpoint; one the engine runs (:mod:`.llama.architecture`) without
    transformers' modeling code (:class:`.llama.light.LightCausalLM`), its tokenizer by its own class (not the
    Auto classes, which import every model's configuration)."""
    if model_class.__name__ == "AutoModelForCausalLM" and device.type == "cpu" and light_supported(directory):
        if conversion.light_tokenizer_ok(directory):
            tokenizer = LightTokenizer(directory, full_loader=transformers_tokenizer)
        else:
            with _quiet_loading():
                tokenizer = transformers_tokenizer(directory)
        return tokenizer, LightCausalLM(directory, dtype, model_class)
    with _quiet_loading():
        model = model_class.from_pretrained(str(directory), dtype=dtype, local_files_only=True)
        return transformers_tokenizer(directory), model
