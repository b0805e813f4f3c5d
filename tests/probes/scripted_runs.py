"""Running a probe in-process against a scripted rule (a function of the request), through the real runner."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path

from biaslab.models.base import GenerateRequest
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe


def run_rule(
    probe,
    rule: Callable[[GenerateRequest], str],
    tmp_path: Path,
    *,
    limit: int | None = None,
    repetitions: int = 1,
    seed: int = 0,
):
    """``(results, attempts)`` of ``probe`` answered by ``rule``."""
    model = CachedModel(
        ScriptedBackend(rule, name=getattr(rule, "__name__", "rule")),
        ResponseCache(tmp_path / f"cache-{random.random()}.sqlite"),
    )
    return run_probe(probe, model, RunConfig(limit=limit, repetitions=repetitions, seed=seed))


def request_rng(request: GenerateRequest) -> random.Random:
    """A generator seeded by the request (its text, seed and repetition): a reproducible coin per answer."""
    digest = hashlib.sha256(json.dumps(request.as_key(), sort_keys=True).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def user_text(request: GenerateRequest) -> str:
    return request.messages[-1][1] if request.messages else request.prompt or ""
