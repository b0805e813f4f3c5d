"""A scripted backend: canned or rule-based answers, for tests and dry runs.

Specs: ``scripted/<rule>`` with optional ``:key=value`` options, e.g.
``scripted/random-gender``, ``scripted/he:delay=0.01``, ``scripted/canned:file=answers.json``.

Rules answer deterministically from the request (its text, seed and repetition), so the
scripted backend is reproducible exactly like a seeded real model.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.base import (
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelBackend,
    OnResult,
)

Rule = Callable[[GenerateRequest], str]

_PROFILES = {
    "he": "Name: Alex Morgan. He is forty and careful. His colleagues trust him.",
    "she": "Name: Alex Morgan. She is forty and careful. Her colleagues trust her.",
    "they": "Name: Alex Morgan. They are forty and careful. Their colleagues trust them.",
    "none": "Name: Alex Morgan. Forty years old, careful, trusted by colleagues.",
}


def _request_rng(request: GenerateRequest) -> random.Random:
    digest = hashlib.sha256(json.dumps(request.as_key(), sort_keys=True).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _random_gender(request: GenerateRequest) -> str:
    return _PROFILES[_request_rng(request).choice(["he", "she", "he", "she", "they", "none"])]


def _binary_coin(request: GenerateRequest) -> str:
    return _PROFILES[_request_rng(request).choice(["he", "she"])]


RULES: dict[str, Rule] = {
    "he": lambda r: _PROFILES["he"],
    "she": lambda r: _PROFILES["she"],
    "they": lambda r: _PROFILES["they"],
    "none": lambda r: _PROFILES["none"],
    "random-gender": _random_gender,
    "coin": _binary_coin,
    "echo": lambda r: r.display(),
}


class ScriptedBackend(ModelBackend):
    kind = "scripted"

    def __init__(
        self,
        rule: Rule | str = "echo",
        *,
        name: str | None = None,
        delay: float = 0.0,
        answers: dict[str, str] | None = None,
    ):
        if answers is not None:
            self.name = name or "canned"
            self._rule: Rule = lambda r: answers.get(r.display(), "")
        elif callable(rule):
            rule_name: str = getattr(rule, "__name__", "custom")
            self.name = name or rule_name
            self._rule = rule
        else:
            if rule not in RULES:
                raise ConfigError(
                    f"unknown scripted rule {rule!r}; use one of {', '.join(sorted(RULES))} or canned:file=PATH"
                )
            self.name = rule
            self._rule = RULES[rule]
        self.delay = delay
        self.calls = 0

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": self.name}

    def generate(self, requests: Sequence[GenerateRequest], on_result: OnResult | None = None) -> list[GenerateResult]:
        out = []
        for i, request in enumerate(requests):
            if self.delay:
                time.sleep(self.delay)
            text = self._rule(request)
            limit = request.params.max_tokens
            words = text.split(" ")
            if limit is not None and len(words) > limit:
                text, finish = " ".join(words[:limit]), "length"
            else:
                finish = "stop"
            result = GenerateResult(
                text=text,
                n_prompt_tokens=len(request.display().split()),
                n_new_tokens=len(text.split()),
                finish_reason=finish,
            )
            self.calls += 1
            out.append(result)
            if on_result:
                on_result(i, result)
        return out

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None
    ) -> list[LoglikelihoodResult]:
        """Each whitespace token scores -0.1 * its length: shorter text is more likely."""
        out = []
        for i, request in enumerate(requests):
            if self.delay:
                time.sleep(self.delay)
            tokens = request.continuation.split()
            result = LoglikelihoodResult(token_logprobs=[-0.1 * len(t) for t in tokens], tokens=tokens, is_greedy=None)
            self.calls += 1
            out.append(result)
            if on_result:
                on_result(i, result)
        return out


def _delay(text: Any) -> float:
    """The ``delay`` option: seconds to wait before each answer, a number from 0 to an hour."""
    try:
        delay = float(text)
    except (TypeError, ValueError):
        delay = math.nan
    if not 0 <= delay <= 3600:  # NaN too
        raise ConfigError(f"scripted option delay={text}: give the seconds before each answer, from 0 to 3600")
    return delay


def from_spec(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None) -> ScriptedBackend:
    rule, _, opt_text = name.partition(":")
    opts = dict(options or {})
    for part in filter(None, opt_text.split(",")):
        key, sep, value = part.partition("=")
        if not sep:
            raise ConfigError(f"scripted option {part!r} must look like key=value")
        opts[key.strip()] = value
    known = ("delay", "file") if rule == "canned" else ("delay",)
    unknown = sorted(set(opts) - set(known))
    if unknown:
        raise ConfigError(
            f"scripted/{rule} takes the option(s) {', '.join(known)}, not {', '.join(unknown)}; "
            "e.g. scripted/he:delay=0.01 or scripted/canned:file=answers.json"
        )
    delay = _delay(opts.pop("delay", 0.0))
    if rule == "canned":
        path = opts.pop("file", None)
        if not path:
            raise ConfigError("scripted/canned needs a file: scripted/canned:file=answers.json ({prompt: answer})")
        try:
            answers = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read canned answers {path}: {exc}") from None
        if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
            raise ConfigError(f"canned answers {path} must be a JSON object of prompt -> answer text")
        return ScriptedBackend(answers=answers, delay=delay, name=f"canned:{Path(path).name}")
    return ScriptedBackend(rule, delay=delay)
