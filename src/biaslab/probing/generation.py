"""Probes scored from generated text.

A :class:`GenerationProbe` plans one :class:`~biaslab.models.base.GenerateRequest` per prompt and
repetition, each with its own seed derived from the run seed (so a run is reproducible and a
repetition is a fresh sample), and evaluates each answer on its own (:meth:`evaluate`).
"""

from __future__ import annotations

import abc
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from biaslab.models.base import GenerateRequest, GenerateResult, GenerationParams
from biaslab.probing.config import check_run_size
from biaslab.probing.core import Attempt, PlannedRequest, Probe, ProbeItem, Prompt, derive_seed

if TYPE_CHECKING:
    from biaslab.probing.config import RunConfig, RunContext


class GenerationProbe(Probe):
    def default_params(self) -> GenerationParams:
        """Decoding parameters used unless the user overrides them."""
        return GenerationParams()

    def params(self, override: GenerationParams | None) -> GenerationParams:
        """The probe's decoding defaults with the user's overrides (``None`` fields keep the default)."""
        base = self.default_params()
        return base if override is None else replace(base, **override.as_key())

    def request_prompt(self, item: ProbeItem, prompt_index: int, repetition: int, run_seed: int) -> Prompt | None:
        """The prompt sent for this repetition of ``item.prompts[prompt_index]``; ``None`` skips it.

        Default: the item's prompt unchanged. Probes whose prompt depends on the repetition
        (e.g. in-context examples drawn afresh per repetition) override this.
        """
        return item.prompts[prompt_index]

    @abc.abstractmethod
    def evaluate(self, attempt: Attempt) -> None:
        """Set ``attempt.evaluation`` (JSON-safe; ``None`` = undetected) and ``attempt.extra``."""

    def evaluate_all(self, attempts: list[Attempt]) -> None:
        """Evaluate a run's attempts (default: one by one; a probe whose evaluator works in batches overrides it)."""
        for attempt in attempts:
            self.evaluate(attempt)

    def plan(self, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
        check_run_size(sum(len(item.prompts) for item in items), cfg)
        params = self.params(cfg.params)
        planned = []
        for item in items:
            for p_idx in range(len(item.prompts)):
                for rep in range(cfg.repetitions):
                    prompt = self.request_prompt(item, p_idx, rep, cfg.seed)
                    if prompt is None:
                        continue
                    seed = derive_seed(cfg.seed, self.name, item.id, p_idx, rep)
                    request = GenerateRequest(
                        messages=prompt.messages(), params=replace(params, seed=seed), repetition=rep
                    )
                    planned.append(PlannedRequest(item, p_idx, rep, prompt, request))
        return planned

    def score(self, planned: list[PlannedRequest], answers: list[Any], ctx: RunContext) -> list[Attempt]:
        attempts = []
        for p, answer in zip(planned, answers, strict=True):
            if not isinstance(answer, GenerateResult) or not isinstance(p.request, GenerateRequest):
                raise TypeError(f"{self.name}: a generation probe got {type(answer).__name__} for {self.describe(p)}")
            attempt = Attempt(
                item_id=p.item.id,
                prompt_index=p.prompt_index,
                repetition=p.repetition,
                seed=p.request.params.seed,
                prompt=p.prompt.text,
                text=answer.text,
                metadata={**p.item.metadata, **p.prompt.metadata},
                n_new_tokens=answer.n_new_tokens,
                finish_reason=answer.finish_reason,
            )
            attempts.append(attempt)
        self.evaluate_all(attempts)
        return attempts

    def parameters(self, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
        return {
            "repetitions": cfg.repetitions,
            "limit": cfg.limit,
            "seed": cfg.seed,
            "generation": self.params(cfg.params).as_key(),
        }


def answer_plan(
    probe: str, items: list[ProbeItem], cfg: RunConfig, defaults: GenerationParams, *, all_prompts: bool = True
) -> list[PlannedRequest]:
    """The generate mode of a probe that also scores by likelihood (bbq, mbbq, kobbq): one request per prompt (every
    prompt of an item, or its first) and repetition, with ``defaults`` under the user's overrides and each request's
    seed derived as :class:`GenerationProbe` derives it."""
    params = defaults if cfg.params is None else replace(defaults, **cfg.params.as_key())
    planned = []
    for item in items:
        for p, prompt in enumerate(item.prompts if all_prompts else item.prompts[:1]):
            for rep in range(cfg.repetitions):
                seed = derive_seed(cfg.seed, probe, item.id, p, rep)
                request = GenerateRequest(messages=prompt.messages(), params=replace(params, seed=seed), repetition=rep)
                planned.append(PlannedRequest(item, p, rep, prompt, request))
    return planned
