"""Probes scored from log-likelihoods instead of generated text.

A :class:`LikelihoodProbe` plans :class:`~biaslab.models.base.LoglikelihoodRequest` s for each
item (by default one per prompt: the prompt's text as the continuation of an empty context),
and turns each item's results into one :class:`~.core.Attempt`. :func:`run_likelihood_probe` is
the runner's path for them: every request goes through :class:`~biaslab.models.cache.CachedModel`
(identical texts are scored once, each answer is committed as it arrives, a killed run resumes),
and results.json has the same schema as a generation run's.

A request longer than the model's context is reported as a one-line error naming the item
(:meth:`LikelihoodProbe.describe`), before anything is written.
"""

from __future__ import annotations

import abc
import time
from typing import Any, Callable

from biaslab.data.registry import checksums
from biaslab.errors import ConfigError, DataError
from biaslab.models.base import ContextLengthError, LoglikelihoodRequest, LoglikelihoodResult
from biaslab.models.cache import CachedModel
from biaslab.probing.core import Attempt, Probe, ProbeItem, spread_subset
from biaslab.probing.results import build_results


class LikelihoodProbe(Probe):
    request_kind = "loglikelihood"

    def requests(self, item: ProbeItem) -> list[LoglikelihoodRequest]:
        """The item's requests (default: each prompt scored on its own)."""
        return [LoglikelihoodRequest(continuation=p.text) for p in item.prompts]

    @abc.abstractmethod
    def score_item(self, item: ProbeItem, results: list[LoglikelihoodResult], model: dict[str, Any]) -> Attempt:
        """One attempt from the item's results (``model`` is the model's identity)."""

    def evaluate(self, attempt: Attempt) -> None:  # scoring happens in score_item
        pass

    def parameters(self) -> dict[str, Any]:
        """Probe settings recorded in results.json."""
        return {}

    def describe(self, item: ProbeItem, request_index: int) -> str:
        """Where a request comes from, for error messages."""
        return f"item {item.id}, request {request_index + 1}"


def run_likelihood_probe(probe: LikelihoodProbe, model: CachedModel, cfg: Any, *,
                         progress: Callable[[int, Any, bool], None] | None = None,
                         items: list[ProbeItem] | None = None) -> tuple[dict[str, Any], list[Attempt]]:
    if cfg.repetitions != 1:
        raise ConfigError(f"--repetitions has no meaning for {probe.name} (log-likelihoods are deterministic); omit it")
    items = spread_subset(probe.load_items() if items is None else items, cfg.limit)
    planned = [probe.requests(item) for item in items]
    flat = [r for reqs in planned for r in reqs]
    started = time.time()
    try:
        answers = model.loglikelihood(flat, progress=progress)
    except ContextLengthError as exc:
        where = next((probe.describe(item, j) for item, reqs in zip(items, planned)
                      for j, r in enumerate(reqs) if r == exc.request), "a request")
        raise DataError(f"{where}: {exc}; shorten the text or remove it") from None
    ident = model.identity()
    attempts, k = [], 0
    for item, reqs in zip(items, planned):
        attempts.append(probe.score_item(item, answers[k:k + len(reqs)], ident))
        k += len(reqs)
    results = build_results(
        probe=probe.name, probe_version=probe.version, model=ident,
        parameters={"limit": cfg.limit, **probe.parameters()},
        data=checksums(probe.data_files), metrics=probe.metrics(attempts, seed=cfg.bootstrap_seed),
        n_items=len(items), n_attempts=len(attempts),
        run={"cache_hits": model.stats.cache_hits, "model_calls": model.stats.model_calls,
             "requests": len(flat), "seconds": round(time.time() - started, 2)},
        **probe.extra_results(attempts),
    )
    return results, attempts
