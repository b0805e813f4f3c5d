"""Text scorers: a small interface that turns texts into floats.

A scorer is anything with a ``name``, an ``identity`` (a string that changes whenever its
numbers could change: package version, checkpoint, label) and ``score(texts) -> list[float]``
(NaN where a text got no usable score). Scorers are named by spec and imported lazily from
``SCORERS`` so that importing biaslab loads no scorer package:

* ``vader``, ``profanity``: no argument;
* ``hf/<checkpoint dir>``, ``openai/<model>``: an argument after ``/``;
* ``judge-run:<run dir>``: an argument after ``:``;
* options after a last ``:`` as ``key=value[,key=value]``, e.g. ``hf/models/corgi:label=biased``.

:func:`cached_scorer` wraps any scorer in a disk cache keyed by its identity and the text. The
BOLD probe scores its continuations with one; ``biaslab fsb scorers`` compares them with human ratings.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from biaslab.errors import ConfigError

if TYPE_CHECKING:
    from biaslab.scorers.cache import DiskCachedScorer


@runtime_checkable
class Scorer(Protocol):
    name: str
    identity: str

    def score(self, texts: Sequence[str]) -> list[float]: ...


# spec prefix -> ("module:factory", one-line summary); factory(spec_rest: str, **options) -> Scorer
SCORERS: dict[str, tuple[str, str]] = {
    "vader": ("biaslab.scorers.vader:make_vader", "VADER compound sentiment in [-1, 1] (offline, vaderSentiment)"),
    "profanity": (
        "biaslab.scorers.profanity:make_profanity",
        "probability of profanity in [0, 1] (offline, alt-profanity-check)",
    ),
    "hf": (
        "biaslab.scorers.hf:make_hf",
        "a transformers sequence-classification checkpoint dir: a label's "
        "probability (default) or logit; options label=, output=prob|logit",
    ),
    "openai": (
        "biaslab.scorers.openai_scorer:make_openai",
        "an OpenAI-compatible server: mode=judge (default; a "
        "0-1 gender-bias rating) or mode=moderation "
        "(category=, default the highest category score)",
    ),
    "judge-run": (
        "biaslab.scorers.judge_run:make_judge_run",
        "the judge scores of a finished fsb-judge run (mean over its repetitions), by text",
    ),
}
# package a scorer module needs -> the pip name to install
PIP_NAMES = {"profanity_check": "alt-profanity-check", "sklearn": "scikit-learn", "vaderSentiment": "vaderSentiment"}
_OPTION_LIST = r"[A-Za-z_][\w-]*=[^,:]*(?:,[A-Za-z_][\w-]*=[^,:]*)*"
_ONLY_OPTIONS = re.compile(rf"^(?P<opts>{_OPTION_LIST})$")
_TRAILING_OPTIONS = re.compile(rf"^(?P<rest>.*?):(?P<opts>{_OPTION_LIST})$", re.S)


def register_scorer(prefix: str, target: str, summary: str) -> None:
    SCORERS[prefix] = (target, summary)


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``(prefix, argument, options)`` of a scorer spec (see the module docstring)."""
    spec = spec.strip()
    cut = min((i for i in (spec.find("/"), spec.find(":")) if i >= 0), default=len(spec))
    prefix, rest = spec[:cut], spec[cut + 1 :]
    options: dict[str, str] = {}
    sep = spec[cut] if cut < len(spec) else ""
    match = _ONLY_OPTIONS.match(rest) if sep == ":" else None
    if match:
        rest = ""
    else:
        match = _TRAILING_OPTIONS.match(rest)
    if match:
        if "rest" in match.groupdict():
            rest = match.group("rest")
        for pair in match.group("opts").split(","):
            key, _, value = pair.partition("=")
            options[key.strip().replace("-", "_")] = value.strip()
    return prefix, rest, options


def get_scorer(spec: str, **options) -> Scorer:
    """The scorer a spec names: ``name``, ``name/<argument>`` or ``name:<argument>`` (e.g.
    ``hf/<checkpoint dir>``, ``judge-run:<run dir>``), with ``options`` added to the spec's own."""
    prefix, rest, spec_options = parse_spec(spec)
    if prefix not in SCORERS:
        known = ", ".join(sorted(SCORERS))
        raise ConfigError(f"unknown scorer {spec!r}; choose one of: {known}")
    module_name, _, attr = SCORERS[prefix][0].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = (getattr(exc, "name", None) or str(exc)).split(".")[0]
        pip_name = PIP_NAMES.get(missing, missing)
        raise ConfigError(
            f"the {prefix} scorer needs the package {pip_name!r}, which is not installed or does not import; "
            f"pip install {pip_name}"
        ) from None
    return getattr(module, attr)(rest, **{**spec_options, **options})


def cached_scorer(scorer: Scorer, cache_dir: Path | None = None) -> DiskCachedScorer:
    """``scorer`` with its scores kept on disk (default: the biaslab cache dir), keyed by identity + text."""
    from biaslab.scorers.cache import DiskCachedScorer

    return DiskCachedScorer(scorer, cache_dir)
