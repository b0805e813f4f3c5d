"""Local model specs, options and identity, without importing torch.

The response cache keys every answer by the model's identity, so a run whose answers are all
cached needs the identity and nothing else. Computing it from the files (name, size, sha256 of
a GGUF file; a digest of a checkpoint directory's file names, sizes and configs) lets biaslab
answer such a run without loading the model, or even importing torch (:mod:`.lazy`).

The device and the dtype are decided without torch too (:mod:`biaslab.models.device_info`): ``auto``
is ``cpu`` unless the machine shows a CUDA or ROCm driver and torch is built for it; on a GPU the dtype
is bfloat16 (float16 on NVIDIA GPUs older than Ampere), read from NVML. Only when that cannot be told
(GPUs of mixed generations, an unreadable ``CUDA_VISIBLE_DEVICES``) does the model load to find out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models import device_info
from biaslab.models.device_info import gpu_driver_present  # noqa: F401  (re-exported)

SAMPLER_VERSION = 1  # bump when the sampling algorithm changes (part of the identity)

DEFAULTS: dict[str, Any] = {
    "device": "auto",
    "dtype": "auto",
    "batch_size": None,  # these four: sized to the device (local/sizing.py) unless given
    "max_slots": None,
    "kv_budget_mb": None,
    "engine": "auto",
    "chat_template": "auto",
    "threads": None,
    "workers": None,
    "batch_tokens": None,  # tokens per scoring batch (masked LMs; causal scoring with the fast engine)
    "precision": "float32",  # bf16: the engine's matrix products in bfloat16 (opt-in, faster; llama/precision.py)
}
_INT_OPTIONS = ("batch_size", "max_slots", "kv_budget_mb", "threads", "workers", "batch_tokens")
_CHOICES = {
    "engine": ("auto", "continuous", "static"),
    "chat_template": ("auto", "none"),
    "precision": ("float32", "bf16"),
}


def parse_options(options: dict[str, Any]) -> dict[str, Any]:
    """The local backend's options with defaults filled in; a ConfigError for unknown or bad ones."""
    opts = dict(DEFAULTS)
    for key, value in options.items():
        if value is None:
            continue
        if key not in DEFAULTS:
            raise ConfigError(f"unknown option {key!r} for local models; known: {', '.join(sorted(DEFAULTS))}")
        if key in _INT_OPTIONS:
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ConfigError(f"option {key} must be a whole number, got {value!r}") from None
            if value < 1:
                raise ConfigError(f"option {key} must be at least 1, got {value}")
        else:
            value = str(value).strip().lower()
            if key in _CHOICES and value not in _CHOICES[key]:
                raise ConfigError(f"option {key} must be one of {', '.join(_CHOICES[key])}, got {value!r}")
        opts[key] = value
    return opts


def hf_source(name: str, base_url: str | None) -> tuple[str, None]:
    """``hf/<hub id or dir>`` -> (source, no GGUF file)."""
    if base_url:
        raise ConfigError("--base-url is for openai/ models; hf/ models run locally")
    name = name.strip()
    if not name:
        raise ConfigError("the hf backend needs a hub id or a local directory: hf/<org>/<model> or hf/<dir>")
    from biaslab.models.local.hub import check_hf_source

    check_hf_source(name)  # one-line errors for a missing directory or an unreachable model, before loading
    return name, None


def gguf_source(name: str, base_url: str | None) -> tuple[str, str]:
    """``gguf/<path.gguf>`` -> (directory, file); ``gguf/<org>/<repo>/<file.gguf>`` -> (repo, file)."""
    if base_url:
        raise ConfigError("--base-url is for openai/ models; gguf/ models run locally")
    name = name.strip()
    path = Path(name).expanduser()
    if path.is_file():
        return str(path.parent.resolve()), path.name
    parts = name.split("/")
    if len(parts) >= 3 and name.endswith(".gguf") and not name.startswith(("/", ".", "~")):
        return "/".join(parts[:2]), "/".join(parts[2:])
    raise ConfigError(f"GGUF file not found: {name} (use gguf/<path to a .gguf file>)")


def lazy_identity(source: str, gguf_file: str | None, options: dict[str, Any]) -> dict[str, Any] | None:
    """The identity the loaded backend will report, or None when only loading can tell.

    None for hub models (the revision comes from the download), for ``chat_template=none``
    (whether it changes prompts depends on the tokenizer) and when a GPU may pick the dtype.
    """
    opts = parse_options(options)
    if not is_local_source(source, gguf_file) or opts["chat_template"] != "auto":
        return None
    dtype = resolved_dtype_name(opts["dtype"], opts["device"])
    if dtype is None:
        return None
    ident = local_identity(source, gguf_file, dtype)
    if opts["precision"] != DEFAULTS["precision"]:
        ident["precision"] = opts["precision"]  # other numbers: never mixed with float32 answers in the cache
    return ident


_DTYPE_NAMES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}


def resolved_dtype_name(dtype: str, device: str) -> str | None:
    """The dtype a model would be loaded with, as a name; None when only torch can tell.

    Mirrors the loader: float32 on CPU, bfloat16 (float16 on NVIDIA GPUs before Ampere) on a GPU.
    """
    if dtype != "auto":
        return _DTYPE_NAMES.get(dtype)
    return device_info.auto_dtype_name(device)


_SHA_MEMO: dict[tuple[str, int, int], str] = {}


def _sha256_file(path: Path) -> str:
    from biaslab.models.local.conversion import source_sha256

    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_MEMO:
        _SHA_MEMO[key] = source_sha256(path)  # remembered across processes (by path, size, mtime)
    return _SHA_MEMO[key]


def local_identity(source: str, gguf_file: str | None, dtype_name: str, revision: str | None = None) -> dict[str, Any]:
    """Identity of a model loaded from ``source`` (a directory or hub id) and ``gguf_file``."""
    ident: dict[str, Any] = {"backend": "transformers", "dtype": dtype_name, "sampler": SAMPLER_VERSION}
    local = Path(source)
    if gguf_file is not None:
        ident["model"] = gguf_file if not local.is_dir() else Path(gguf_file).name
        path = local / gguf_file
        if path.is_file():
            ident["file_size"] = path.stat().st_size
            ident["sha256"] = _sha256_file(path)
        else:
            ident["repo"] = source
    elif local.is_dir():
        ident["model"] = local.resolve().name
        if is_masked_lm_dir(local):
            ident["objective"] = "masked-lm"  # scored by pseudo-log-likelihood (local/masked_lm.py)
        files = sorted(p for p in local.iterdir() if p.is_file() and p.suffix in (".safetensors", ".bin", ".json"))
        h = hashlib.sha256()
        for p in files:
            h.update(f"{p.name}:{p.stat().st_size}\n".encode())
            if p.suffix == ".json":
                h.update(p.read_bytes())
        ident["files_digest"] = h.hexdigest()
        ident["file_size"] = sum(p.stat().st_size for p in files)
    else:
        ident["model"] = source
        if revision:
            ident["revision"] = revision
    return ident


def is_local_source(source: str, gguf_file: str | None) -> bool:
    """True when the model's files are on disk (its identity needs no hub lookup)."""
    local = Path(source)
    if gguf_file is not None:
        return (local / gguf_file).is_file()
    return local.is_dir()


def hf_identity(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None):
    """Registry hook: the identity of ``hf/<name>`` without loading it (None if unknown)."""
    source, gguf_file = hf_source(name, base_url)
    return lazy_identity(source, gguf_file, options or {})


def gguf_identity(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None):
    """Registry hook: the identity of ``gguf/<name>`` without loading it (None if unknown)."""
    source, gguf_file = gguf_source(name, base_url)
    return lazy_identity(source, gguf_file, options or {})


MASKED_LM_TYPES = (
    "bert",
    "roberta",
    "albert",
    "distilbert",
    "xlm-roberta",
    "camembert",
    "electra",
    "deberta",
    "deberta-v2",
    "mpnet",
    "ernie",
    "megatron-bert",
    "modernbert",
)


def is_masked_lm_config(config: dict[str, Any]) -> bool:
    """Whether a checkpoint's config.json describes a masked LM (BERT-like) rather than a causal one."""
    archs = [str(a) for a in config.get("architectures") or []]
    if any(a.endswith("ForMaskedLM") for a in archs):
        return True
    if any(a.endswith(("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")) for a in archs):
        return False
    return not archs and config.get("model_type") in MASKED_LM_TYPES and not config.get("is_decoder", False)


def is_masked_lm_dir(path: Path) -> bool:
    import json

    try:
        return is_masked_lm_config(json.loads((Path(path) / "config.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return False
