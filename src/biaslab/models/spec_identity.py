"""What keys a model spec's answers in the cache, known without building a backend or loading a model.

:func:`spec_identity` gives the identity and base URL that :class:`~biaslab.models.cache.CachedModel`
puts in every key (and the backend's log-likelihood rule), so a dry run can count cached answers
with nothing sent and nothing loaded: local models through the registry's identity hooks (computed
from the model files), ``openai/`` and ``anthropic/`` from the name and server, ``scripted/`` from
the backend itself (it has no model). The tests hold each against the built backend's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biaslab.models.cache import model_cache_key
from biaslab.models.registry import BACKENDS, import_target, parse_spec
from biaslab.models.spec import ModelSpec


@dataclass(frozen=True)
class SpecIdentity:
    spec: str
    prefix: str  # hf, gguf, openai, anthropic, scripted
    name: str  # what follows the prefix
    identity: dict[str, Any] | None  # None: only loading the model could tell (a hub model, a GPU's dtype...)
    base_url: str | None
    rule: str | None = None  # the log-likelihood rule keying log-likelihood answers

    @property
    def model_key(self) -> str | None:
        return None if self.identity is None else model_cache_key(self.identity, self.base_url)


def spec_identity(
    spec: str | ModelSpec, *, base_url: str | None = None, model_options: dict[str, Any] | None = None
) -> SpecIdentity:
    """``spec``: a parsed :class:`~biaslab.models.spec.ModelSpec` (its ``base_url`` is the one used), or the text,
    parsed here with ``base_url``."""
    parsed = parse_spec(spec, base_url=base_url)
    prefix, name, base_url, spec = parsed.prefix, parsed.name, parsed.base_url, parsed.text
    entry = BACKENDS[prefix]
    if prefix == "openai":
        from biaslab.models.openai.options import OPENAI_BASE_URL
        from biaslab.models.openai.prompt_logprobs import RULE

        url = (base_url or "").strip().rstrip("/") or OPENAI_BASE_URL
        return SpecIdentity(
            spec, prefix, name, {"backend": "openai", "model": name.strip(), "base_url": url}, url, RULE
        )
    if prefix == "anthropic":
        from biaslab.models.anthropic.backend import anthropic_identity, normalize_base_url

        return SpecIdentity(
            spec, prefix, name, anthropic_identity(name.strip(), base_url), normalize_base_url(base_url)
        )
    if entry.identity:
        ident = import_target(entry.identity, entry)(name, base_url=base_url, options=dict(model_options or {}))
        return SpecIdentity(spec, prefix, name, ident, None)
    backend = import_target(entry.target, entry)(name, base_url=base_url, options=dict(model_options or {}))
    return SpecIdentity(
        spec, prefix, name, backend.identity(), backend.base_url, getattr(backend, "loglikelihood_rule", None)
    )
