"""The registry's factories for local models (``hf/`` and ``gguf/`` specs), without importing torch first.

A GGUF model loads from its converted copy in the cache (:mod:`.conversion`); verifying that
copy (hashing about 540 MB for the embedded model) starts here, in a background thread, before
the backend module imports torch and transformers, so the two overlap. Versions of torch, transformers
and tokenizers older than biaslab was tested with are a one-line error here (:mod:`biaslab.models.versions`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaslab.models.base import ModelBackend
from biaslab.models.local import conversion
from biaslab.models.local.identity import gguf_source
from biaslab.models.versions import check_installed


def from_hf_spec(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None) -> ModelBackend:
    """``hf/<hub id or dir>``: see :func:`.backend.from_hf_spec`."""
    check_installed("torch", "transformers", "tokenizers")  # a one-line error for versions older than tested
    from biaslab.models.local.backend import from_hf_spec as build

    return build(name, base_url=base_url, options=options)


def from_gguf_spec(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None) -> ModelBackend:
    """``gguf/<path.gguf>`` or ``gguf/<org>/<repo>/<file.gguf>``: see :func:`.backend.from_gguf_spec`."""
    source, gguf_file = gguf_source(name, base_url)
    check_installed("torch", "transformers", "tokenizers")
    path = Path(source) / gguf_file
    if path.is_file():
        conversion.prefetch(path.resolve())
    from biaslab.models.local.backend import from_gguf_spec as build

    return build(name, base_url=base_url, options=options)
