"""Open a model for a command: the backend for a spec, wrapped in the response cache.

Every command that calls a model (``biaslab run``, ``fsb generate``, ``wino extract-predicates``)
opens it here, so they share the cache location rule, the HTTP concurrency option and the lazy
loading of local models (a model loads only when the cache lacks an answer).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from biaslab.models.batch.options import BATCH_OPTIONS
from biaslab.models.cache import CachedModel, ResponseCache, default_cache_path
from biaslab.models.model_options import check_model_options
from biaslab.models.registry import load_model, parse_spec
from biaslab.models.spec import ModelSpec

LOCAL_PREFIXES = ("hf", "gguf")  # backends that take local model options
HOSTED_PREFIXES = ("openai", "anthropic")  # backends that take the batch options (-P batch=true ...)


def cache_path(cache_dir: Path | str | None) -> Path:
    """The response cache file: ``<cache_dir>/responses.sqlite``, or the user cache's."""
    return Path(cache_dir) / "responses.sqlite" if cache_dir else default_cache_path()


def open_cached_model(
    spec: str | ModelSpec | None,
    *,
    base_url: str | None = None,
    cache_dir: Path | str | None = None,
    max_concurrency: int = 8,
    on_load: Callable[[str], None] | None = None,
    console: Any = None,
    model_options: dict[str, Any] | None = None,
) -> CachedModel:
    """``spec`` (default: the embedded model) behind the response cache; close it when done.

    ``on_load(spec)`` is called just before a local model loads (at the first uncached request);
    with ``console`` (a Rich console) and no ``on_load``, that moment is announced there.
    ``model_options``: the model's ``-P`` options (a local model's ``precision``, ``threads``, ...; a vLLM model's
    ``tensor_parallel_size``, ...; a server's ``tokenizer``); a ConfigError for options the backend does not take.
    ``spec``: a parsed :class:`~biaslab.models.spec.ModelSpec` (its ``base_url`` is the one used), or the text,
    parsed here with ``base_url``.
    """
    parsed = parse_spec(spec, base_url=base_url)
    prefix = parsed.prefix
    check_model_options(prefix, parsed.text, model_options or {})
    if on_load is None and console is not None:

        def on_load(what: str) -> None:
            console.print(f"loading model [bold]{what}[/] ...")

    cache = ResponseCache(cache_path(cache_dir))
    options = dict(model_options or {})
    if prefix in HOSTED_PREFIXES:
        options["max_concurrency"] = max_concurrency
        if any(key in BATCH_OPTIONS for key in options):
            options["batch_dir"] = cache.path.parent / "batches"  # the journal beside the answers
    try:
        backend = load_model(parsed, on_load=on_load, **options)
    except BaseException:
        cache.close()
        raise
    return CachedModel(backend, cache)
