"""Run a probe against a model: items -> planned requests (through the cache) -> attempts ->
metrics -> results.json / attempts.jsonl / report.html.

One path for every probe: each planned request carries its kind (generation or
log-likelihood), the model answers them through the cache, and the probe scores the answers.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from biaslab.data.registry import checksums
from biaslab.errors import DataError
from biaslab.models.base import ContextLengthError, GenerateRequest, LoglikelihoodRequest
from biaslab.models.cache import CachedModel
from biaslab.probing.config import RunConfig, RunContext, validate_config
from biaslab.probing.core import Attempt, PlannedRequest, Probe, ProbeItem
from biaslab.probing.honest_results import no_zero_width
from biaslab.probing.manifest import run_manifest
from biaslab.probing.metric_ranges import declare_ranges
from biaslab.probing.results import build_results
from biaslab.probing.schema import RunResults
from biaslab.probing.system_prompt import apply_system_prompt, run_parameters, takes_system_prompt


def plan_run(probe: Probe, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
    """The model requests of a run over ``items`` (after the checks; the progress bar's total), with the run's
    system prompt in every one that has a chat (:mod:`biaslab.probing.system_prompt`)."""
    validate_config(cfg)
    probe.validate(cfg)
    planned = probe.plan(items, cfg)
    apply_system_prompt(planned, cfg.system_prompt)
    return planned


def answer(
    probe: Probe,
    model: CachedModel,
    planned: list[PlannedRequest],
    *,
    progress: Callable[[int, Any, bool], None] | None = None,
) -> list[Any]:
    """The model's answers to ``planned``, in order, each request down the path of its kind."""
    gen = [(i, p.request) for i, p in enumerate(planned) if isinstance(p.request, GenerateRequest)]
    ll = [(i, p.request) for i, p in enumerate(planned) if isinstance(p.request, LoglikelihoodRequest)]
    answers: list[Any] = [None] * len(planned)
    try:
        if gen:
            for (i, _), a in zip(gen, model.generate([r for _, r in gen], progress=progress), strict=True):
                answers[i] = a
        if ll:
            for (i, _), b in zip(ll, model.loglikelihood([r for _, r in ll], progress=progress), strict=True):
                answers[i] = b
    except ContextLengthError as exc:
        where = next((probe.describe(p) for p in planned if p.request == exc.request), "a request")
        raise DataError(f"{where}: {exc}; shorten the text or remove it") from None
    return answers


def threads_used(identity: dict[str, Any], model_calls: int) -> dict[str, Any] | None:
    """How many CPU threads a local torch model computed this run's answers with, and why
    (:mod:`biaslab.models.local.threads`); None when no answer came from one."""
    local = sys.modules.get("biaslab.models.local.threads")  # not imported: no local model ran here
    if local is None or model_calls == 0 or identity.get("backend") not in ("transformers", "masked-lm"):
        return None
    choice = local.applied()
    return None if choice is None else choice.record()


def run_probe(
    probe: Probe,
    model: CachedModel,
    cfg: RunConfig,
    *,
    progress: Callable[[int, Any, bool], None] | None = None,
    items: list[ProbeItem] | None = None,
) -> tuple[RunResults, list[Attempt]]:
    """Plan, answer (cached) and score. Returns (results, attempts); writes nothing.

    ``items``: the probe's items if the caller already loaded them (``--limit`` is applied here).
    """
    validate_config(cfg)
    items = probe.select_items(probe.load_items() if items is None else items, cfg)
    planned = plan_run(probe, items, cfg)
    started = time.time()
    before = model.counts()  # the model may have answered other runs already (a suite's probes)
    answers = answer(probe, model, planned, progress=progress)
    used = model.counts().since(before)
    reference, rechecked, recheck = model.reference(), frozenset[str](), None
    if reference is not None:  # reduced precision: the probe's close decisions re-scored at the reference one
        reference_before = reference.counts()
        answers, rechecked, recheck = probe.recheck(planned, answers, reference)
        if recheck is not None:
            recheck = {**recheck, "model_calls": reference.counts().since(reference_before).model_calls}
    ctx = RunContext(model=model.identity(), rechecked=rechecked)
    attempts = probe.score(planned, answers, ctx)
    summary = probe.summarize(attempts, seed=cfg.bootstrap_seed)
    run: dict[str, Any] = {"cache_hits": used.cache_hits, "model_calls": used.model_calls}
    run.update(used.retry_fields())  # a backend that calls a server: its faults retried, and why
    if recheck is not None:
        run["recheck"] = recheck
    if any(p.kind == "generate" for p in planned):
        run["new_tokens"] = used.new_tokens
    threads = threads_used(model.identity(), used.model_calls)
    if threads is not None:
        run["threads"] = threads
    if any(p.kind == "loglikelihood" for p in planned):
        run["requests"] = sum(p.kind == "loglikelihood" for p in planned)
    if cfg.system_prompt is not None:  # how many of the run's requests carried it
        run["system_prompt_requests"] = sum(takes_system_prompt(p.request) for p in planned)
    run["seconds"] = round(time.time() - started, 2)
    results = build_results(
        probe=probe.name,
        probe_version=probe.version,
        model=model.record() if hasattr(model, "record") else model.identity(),  # with the engine's sizes
        parameters=run_parameters(probe, cfg, ctx),
        data=checksums(probe.data_files),
        metrics=declare_ranges(no_zero_width(summary.metrics, len(items)), probe.metric_ranges),
        n_items=len(items),
        n_attempts=len(attempts),
        run=run,
        manifest=run_manifest([p.request for p in planned], model.identity()),
        details=summary.details,
    )
    return results, attempts
