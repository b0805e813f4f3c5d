"""A run's settings (:class:`RunConfig`, from the command line) and what a probe learns about the run
while it scores it (:class:`RunContext`: the model, the answers re-scored at another precision).

Both are passed to the probe's hooks; a probe keeps no per-run state of its own, so one probe object
serves every model of a suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.base import GenerationParams


@dataclass
class RunConfig:
    repetitions: int = 1
    limit: int | None = None
    seed: int = 0
    params: GenerationParams | None = None  # overrides of the probe's defaults (None fields keep them)
    bootstrap_seed: int = 0
    system_prompt: str | None = None  # put first in every chat request (biaslab.probing.system_prompt)


@dataclass(frozen=True)
class RunContext:
    """The model a run is scored for (its identity) and the items whose answers were re-scored at the
    model's reference precision (:meth:`biaslab.probing.core.Probe.recheck`)."""

    model: Mapping[str, Any] = field(default_factory=dict)
    rechecked: frozenset[str] = frozenset()

    @property
    def masked(self) -> bool:
        """Whether the model is a masked LM (scored by pseudo-log-likelihood)."""
        return self.model.get("objective") == "masked-lm"


MAX_REQUESTS = 2_000_000  # the requests one run plans at most (about 1.5 GB planned; 2,000 x the largest probe)


def check_run_size(n_prompts: int, cfg: RunConfig) -> None:
    """A one-line ConfigError, before anything is planned, for a run of more than :data:`MAX_REQUESTS` requests:
    ``n_prompts`` prompts asked ``--repetitions`` times each (the count is arithmetic, so that an absurd
    ``--repetitions 100000000`` is refused at once instead of being planned one request at a time)."""
    total = n_prompts * cfg.repetitions
    if total > MAX_REQUESTS:
        raise ConfigError(
            f"--repetitions {cfg.repetitions:,} of {n_prompts:,} prompts is {total:,} requests, more than one run "
            f"plans ({MAX_REQUESTS:,}); lower --repetitions or --limit"
        )


def validate_config(cfg: RunConfig) -> None:
    if cfg.repetitions < 1:
        raise ConfigError(f"--repetitions must be at least 1 (got {cfg.repetitions})")
    if cfg.limit is not None and cfg.limit < 1:
        raise ConfigError(f"--limit must be a positive number of items (got {cfg.limit}); omit it to run all items")
    check_system_prompt(cfg.system_prompt)
    p = cfg.params
    if p is not None:
        if p.temperature is not None and p.temperature < 0:
            raise ConfigError(f"--temperature must be >= 0 (got {p.temperature})")
        if p.top_p is not None and not 0 < p.top_p <= 1:
            raise ConfigError(f"--top-p must be in (0, 1] (got {p.top_p})")
        if p.max_tokens is not None and p.max_tokens < 1:
            raise ConfigError(f"--max-tokens must be at least 1 (got {p.max_tokens})")


def check_system_prompt(text: str | None) -> None:
    """A one-line error for a blank system prompt given from Python (the command line checks it when reading it)."""
    if text is not None and not text.strip():
        raise ConfigError("the system prompt is empty; give its text or leave it out")
