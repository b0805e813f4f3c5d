"""Probes scored from log-likelihoods instead of generated text.

A :class:`LikelihoodProbe` plans :class:`~biaslab.models.base.LoglikelihoodRequest` s for each
item (by default one per prompt: the prompt's text as the continuation of an empty context),
and turns each item's results into one :class:`~biaslab.probing.core.Attempt`
(:meth:`LikelihoodProbe.score_item`). Like every request, they go through
:class:`~biaslab.models.cache.CachedModel`: identical texts are scored once, each answer is
committed as it arrives, and a killed run resumes.

Every likelihood probe takes ``-P chat_template=none|user|assistant`` (:data:`CHAT_TEMPLATE_OPTION`,
recorded in results.json's parameters unless ``none``): ``none`` (the default) scores the plain text, the
papers' rule; ``user``
/ ``assistant`` scores each text as that turn of the model's chat template, for instruction-tuned
models (:mod:`biaslab.models.likelihood_rule`), locally and over HTTP alike.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from biaslab.errors import ConfigError
from biaslab.models.base import LoglikelihoodRequest, LoglikelihoodResult
from biaslab.models.likelihood_rule import CHAT_TEMPLATE_CHOICES
from biaslab.probing.core import Attempt, PlannedRequest, Probe, ProbeItem, ProbeOption

if TYPE_CHECKING:
    from biaslab.models.cache import CachedModel
    from biaslab.probing.config import RunConfig, RunContext
    from biaslab.probing.recheck import Contrast


CHAT_TEMPLATE_OPTION = ProbeOption(
    "Score each text as plain text (none, the default: the papers' rule) or as the "
    "user / assistant turn of the model's chat template (user, assistant)."
)


def parse_chat_template(value: str | None) -> str:
    value = (value or "none").strip().lower()
    if value not in CHAT_TEMPLATE_CHOICES:
        raise ConfigError(f"-P chat_template must be one of {', '.join(CHAT_TEMPLATE_CHOICES)}, got {value!r}")
    return value


class LikelihoodProbe(Probe):
    chat_template: str = "none"  # set by subclasses from their chat_template option (parse_chat_template)

    def text_request(self, text: str) -> LoglikelihoodRequest:
        """``text`` scored on its own (no context), as plain text or in the chat template."""
        chat = None if self.chat_template == "none" else self.chat_template
        return LoglikelihoodRequest(continuation=text, chat=chat)

    def requests(self, item: ProbeItem) -> list[LoglikelihoodRequest]:
        """The item's requests (default: each prompt scored on its own)."""
        return [self.text_request(p.text) for p in item.prompts]

    @abc.abstractmethod
    def score_item(self, item: ProbeItem, results: list[LoglikelihoodResult], ctx: RunContext) -> Attempt:
        """One attempt from the item's results."""

    def settings(self, ctx: RunContext) -> dict[str, Any]:
        """Probe settings recorded in results.json."""
        return {}

    def validate(self, cfg: RunConfig) -> None:
        if cfg.repetitions != 1:
            raise ConfigError(
                f"--repetitions has no meaning for {self.name} (log-likelihoods are deterministic); omit it"
            )

    def plan(self, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
        return [
            PlannedRequest(item, j, 0, item.prompts[min(j, len(item.prompts) - 1)], request)
            for item in items
            for j, request in enumerate(self.requests(item))
        ]

    recheck_unit = "items"  # what a re-scored item is called in results.json's run.recheck ("pairs": a pair)

    def pair_difference(self, item: ProbeItem, results: list[LoglikelihoodResult], *, masked: bool) -> float:
        """For a probe that decides an item by which of two scores is higher: their difference (its sign is the
        decision); the default :meth:`decision_difference`."""
        raise NotImplementedError

    def decision_difference(
        self, item: ProbeItem, results: list[LoglikelihoodResult], *, masked: bool
    ) -> Callable[[Sequence[LoglikelihoodResult]], float] | None:
        """The signed score difference the item's decision follows, as a function of the item's results at
        either precision, with what it compares fixed from ``results`` (the reduced-precision ones: e.g. the
        best option minus the runner-up of these results); None: the item decides nothing. Default: the
        :meth:`pair_difference` of a probe that has one."""
        if type(self).pair_difference is LikelihoodProbe.pair_difference:
            return None
        return lambda res: self.pair_difference(item, list(res), masked=masked)

    def contrasts(
        self, items: list[ProbeItem], results: list[list[LoglikelihoodResult]], *, masked: bool
    ) -> list[Contrast]:
        """The run's decisions that a reduced precision could flip (:class:`~biaslab.probing.recheck.Contrast`),
        from its reduced-precision results (one list per item). Default: each item's
        :meth:`decision_difference`; a probe whose decisions compare several items overrides this."""
        from biaslab.probing.recheck import Contrast

        out = []
        for i, (item, res) in enumerate(zip(items, results, strict=True)):
            value = self.decision_difference(item, res, masked=masked)
            if value is not None:
                out.append(Contrast((i,), _of_first(value)))
        return out

    def recheck(
        self, planned: list[PlannedRequest], answers: list[Any], reference: CachedModel
    ) -> tuple[list[Any], frozenset[str], dict[str, Any] | None]:
        """Decisions too close to call at the model's reduced precision, their items re-scored at its
        reference precision (:mod:`biaslab.probing.recheck`); the others keep their scores. Nothing for a
        probe (or run) with no :meth:`contrasts`."""
        if not planned or not all(isinstance(a, LoglikelihoodResult) for a in answers):
            return answers, frozenset(), None  # e.g. a probe's generation mode
        from biaslab.probing.recheck import recheck_items

        masked = reference.identity().get("objective") == "masked-lm"
        answers, outcome, rechecked = recheck_items(
            planned, answers, reference, lambda items, res: self.contrasts(items, res, masked=masked)
        )
        if outcome is None:
            return answers, frozenset(), None
        return answers, frozenset(rechecked), outcome.summary(self.recheck_unit)

    @staticmethod
    def precision_of(item: ProbeItem, ctx: RunContext) -> dict[str, str]:
        """For an attempt of a reduced-precision run: the precision its scores come from (re-scored at float32,
        or the run's); nothing at the reference precision."""
        if not ctx.model.get("precision"):
            return {}
        return {"precision": "float32" if item.id in ctx.rechecked else str(ctx.model["precision"])}

    def score(self, planned: list[PlannedRequest], answers: list[Any], ctx: RunContext) -> list[Attempt]:
        attempts: list[Attempt] = []
        k = 0
        while k < len(planned):
            item = planned[k].item
            n = 1
            while k + n < len(planned) and planned[k + n].item is item:
                n += 1
            attempts.append(self.score_item(item, answers[k : k + n], ctx))
            k += n
        return attempts

    def parameters(self, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
        chat = {} if self.chat_template == "none" else {"chat_template": self.chat_template}  # none: as before
        return {"limit": cfg.limit, **chat, **self.settings(ctx)}


def _of_first(value: Callable[[Sequence[LoglikelihoodResult]], float]) -> Callable[[Sequence[Any]], float]:
    """A one-item contrast's value: ``value`` of the first (only) item's results."""
    return lambda results: value(results[0])
