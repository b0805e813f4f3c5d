"""Which ``-P`` keys are model options, and for which backends: known without importing any backend.

``biaslab run PROBE -P key=value`` gives a key the probe does not take to the model
(:func:`biaslab.probing.options.split_model_options`); :func:`check_model_options` then refuses a key the
chosen backend does not take, naming the backends that do.
"""

from __future__ import annotations

from typing import Any

from biaslab.errors import ConfigError

# The names only; each backend checks the values (local.identity.parse_options, vllm.options.parse_options,
# openai.options.parse_options, batch.options.split_batch_options).
_OPENAI = ("tokenizer", "likelihood")
# the hosted APIs' request settings that their errors tell users to change (max_concurrency is --max-concurrency)
_REQUESTS = ("max_retries", "timeout", "retry_base_delay", "retry_max_delay", "max_retry_after")
_DESCRIBED = {
    "hf": "local models (smollm2, gemma3-270m, hf/..., gguf/...)",
    "vllm": "vllm/ models",
    "openai": "openai/ models",
    "anthropic": "anthropic/ models",
}


def option_names(prefix: str) -> frozenset[str]:
    """The ``-P`` model options of the backend ``prefix`` (``hf``, ``gguf``, ``vllm``, ``openai``...)."""
    if prefix in ("hf", "gguf"):
        from biaslab.models.local.identity import DEFAULTS

        return frozenset(DEFAULTS)
    if prefix == "vllm":
        from biaslab.models.vllm.options import DEFAULTS as VLLM_DEFAULTS

        return frozenset(VLLM_DEFAULTS)
    if prefix in ("openai", "anthropic"):
        from biaslab.models.batch.options import BATCH_OPTIONS  # the hosted APIs' batch endpoints

        return frozenset(BATCH_OPTIONS) | frozenset(_REQUESTS) | frozenset(_OPENAI if prefix == "openai" else ())
    return frozenset()


def all_option_names() -> frozenset[str]:
    return option_names("hf") | option_names("vllm") | option_names("openai") | option_names("anthropic")


def check_model_options(prefix: str, spec: str, options: dict[str, Any]) -> None:
    """A ConfigError for options the backend ``prefix`` does not take, or for a request setting out of its range
    (checked here too, so a dry run, which builds no backend, refuses what the run would)."""
    foreign = sorted(set(options) - option_names(prefix))
    if not foreign:
        if prefix in ("openai", "anthropic"):
            from biaslab.models.openai.options import call_option

            for key in set(options) & set(_REQUESTS):
                call_option(key, options[key])
        return
    takers = [text for key, text in _DESCRIBED.items() if set(foreign) & option_names(key)]
    raise ConfigError(
        f"model options ({', '.join(foreign)}) apply to {' and '.join(takers) or 'other models'}, not {spec}"
    )
