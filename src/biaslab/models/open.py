"""Open a model for a command: the backend for a spec, wrapped in the response cache.

Every command that calls a model (``biaslab run``, ``fsb generate``, ``wino extract-predicates``)
opens it here, so they share the cache location rule, the HTTP concurrency option and the lazy
loading of local models (a model loads only when the cache lacks an answer).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.cache import CachedModel, ResponseCache, default_cache_path
from biaslab.models.registry import DEFAULT_MODEL, load_model, split_spec

LOCAL_PREFIXES = ("hf", "gguf")  # backends that take local model options
HOSTED_PREFIXES = ("openai", "anthropic")  # backends that take the batch options (-P batch=true ...)


def cache_path(cache_dir: Path | str | None) -> Path:
    """The response cache file: ``<cache_dir>/responses.sqlite``, or the user cache's."""
    return Path(cache_dir) / "responses.sqlite" if cache_dir else default_cache_path()


def check_model_options(spec: str, model_options: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the batch options, the local model options) of ``model_options``; a ConfigError for those ``spec``'s
    backend does not take."""
    from biaslab.models.batch.options import BATCH_OPTIONS

    prefix = split_spec(spec)[0]
    batch = {k: v for k, v in (model_options or {}).items() if k in BATCH_OPTIONS}
    other = {k: v for k, v in (model_options or {}).items() if k not in BATCH_OPTIONS}
    if batch and prefix not in HOSTED_PREFIXES:
        raise ConfigError(f"-P {', '.join(sorted(batch))} appl{'y' if len(batch) > 1 else 'ies'} to the hosted APIs' "
                          f"batch endpoints (openai/..., anthropic/...), not {spec}")
    if other and prefix not in LOCAL_PREFIXES:
        raise ConfigError(f"model options ({', '.join(sorted(other))}) apply to local models "
                          f"(smollm2, gemma3-270m, hf/..., gguf/...), not {spec}")
    return batch, other


def open_cached_model(spec: str | None, *, base_url: str | None = None, cache_dir: Path | str | None = None,
                      max_concurrency: int = 8, on_load: Callable[[str], None] | None = None,
                      console: Any = None, model_options: dict[str, Any] | None = None) -> CachedModel:
    """``spec`` (default: the embedded model) behind the response cache; close it when done.

    ``on_load(spec)`` is called just before a local model loads (at the first uncached request);
    with ``console`` (a Rich console) and no ``on_load``, that moment is announced there.
    ``model_options``: options of a local model (``precision``, ``threads``, ...) or the batch options of a
    hosted API's (``batch``, ``batch_poll_seconds``, ...; :mod:`biaslab.models.batch.options`); a ConfigError
    for options the model does not take.
    """
    spec = spec or DEFAULT_MODEL
    prefix = split_spec(spec)[0]
    batch, other = check_model_options(spec, model_options)
    if on_load is None and console is not None:
        def on_load(what: str) -> None:
            console.print(f"loading model [bold]{what}[/] ...")

    cache = ResponseCache(cache_path(cache_dir))
    if prefix in HOSTED_PREFIXES:
        options: dict[str, Any] = {"max_concurrency": max_concurrency, **batch}
        if batch:
            options["batch_dir"] = cache.path.parent / "batches"  # the journal beside the answers
    else:
        options = dict(other)
    try:
        backend = load_model(spec, base_url=base_url, on_load=on_load, **options)
    except BaseException:
        cache.close()
        raise
    return CachedModel(backend, cache)
