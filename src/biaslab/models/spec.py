"""A model spec parsed once: :class:`ModelSpec`, what ``--model`` (and ``--base-url``) name.

:func:`biaslab.models.registry.parse_spec` makes one from the text (aliases resolved, the backend's prefix
checked, "did you mean" for a mistyped one); every layer below the command line takes the parsed value, so a
run parses its spec once: the application layer checks it, opens it behind the cache
(:func:`biaslab.models.open.open_cached_model`), builds its backend (:func:`biaslab.models.registry.load_model`)
and keys a dry run's cache look-ups (:func:`biaslab.models.spec_identity.spec_identity`) from the same value.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelSpec:
    text: str  # as given (an alias stays its name: "smollm2"), for messages and the default --out folder
    prefix: str  # the backend: hf, gguf, vllm, openai, anthropic, scripted, ...
    name: str  # what follows the prefix once an alias is resolved ("org/model", a file's path, "gpt-4o-mini")
    base_url: str | None = None  # --base-url: the server of an openai/ model (or anthropic/'s)

    def __str__(self) -> str:
        return self.text
