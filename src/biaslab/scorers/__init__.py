"""Text scorers: a small interface that turns texts into floats.

A scorer is anything with a ``name``, an ``identity`` (a string that changes whenever its
numbers could change: package version, checkpoint, label) and ``score(texts) -> list[float]``.
Scorers are named by spec (``vader``, ``profanity``, ``hf/<dir>``, ...) and imported lazily from
``SCORERS`` so that importing biaslab loads no scorer package. The BOLD probe scores its
continuations with one; ``biaslab fsb scorers`` compares them with human ratings.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from biaslab.errors import ConfigError


@runtime_checkable
class Scorer(Protocol):
    name: str
    identity: str

    def score(self, texts: Sequence[str]) -> list[float]: ...


# spec prefix -> ("module:factory", one-line summary); factory(spec_rest: str, **options) -> Scorer
SCORERS: dict[str, tuple[str, str]] = {
    "vader": ("biaslab.scorers.vader:make_vader", "VADER compound sentiment in [-1, 1] (offline, vaderSentiment)"),
}


def register_scorer(prefix: str, target: str, summary: str) -> None:
    SCORERS[prefix] = (target, summary)


def get_scorer(spec: str, **options) -> Scorer:
    """The scorer a spec names: ``name`` or ``name/<argument>`` (e.g. ``hf/<checkpoint dir>``)."""
    prefix, _, rest = spec.partition("/")
    if prefix not in SCORERS:
        known = ", ".join(sorted(SCORERS))
        raise ConfigError(f"unknown scorer {spec!r}; choose one of: {known}")
    module_name, _, attr = SCORERS[prefix][0].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or str(exc)
        raise ConfigError(
            f"the {prefix} scorer needs {missing!r}, which is not installed; pip install {missing}"
        ) from None
    return getattr(module, attr)(rest, **options)
