"""Run a probe against a model: items -> planned requests (through the cache) -> attempts ->
metrics -> results.json / attempts.jsonl / report.html.

One path for every probe: each planned request carries its kind (generation or
log-likelihood), the model answers them through the cache, and the probe scores the answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaslab.data.registry import checksums
from biaslab.errors import ConfigError, DataError
from biaslab.models.base import ContextLengthError, GenerateRequest, GenerationParams, LoglikelihoodRequest
from biaslab.models.cache import CachedModel
from biaslab.probing.core import Attempt, PlannedRequest, Probe, ProbeItem
from biaslab.probing.manifest import run_manifest
from biaslab.probing.results import build_results, write_jsonl, write_results


@dataclass
class RunConfig:
    repetitions: int = 1
    limit: int | None = None
    seed: int = 0
    params: GenerationParams | None = None  # overrides of the probe's defaults (None fields keep them)
    bootstrap_seed: int = 0


def validate_config(cfg: RunConfig) -> None:
    if cfg.repetitions < 1:
        raise ConfigError(f"--repetitions must be at least 1 (got {cfg.repetitions})")
    if cfg.limit is not None and cfg.limit < 1:
        raise ConfigError(f"--limit must be a positive number of items (got {cfg.limit}); omit it to run all items")
    p = cfg.params
    if p is not None:
        if p.temperature is not None and p.temperature < 0:
            raise ConfigError(f"--temperature must be >= 0 (got {p.temperature})")
        if p.top_p is not None and not 0 < p.top_p <= 1:
            raise ConfigError(f"--top-p must be in (0, 1] (got {p.top_p})")
        if p.max_tokens is not None and p.max_tokens < 1:
            raise ConfigError(f"--max-tokens must be at least 1 (got {p.max_tokens})")


def plan_run(probe: Probe, items: list[ProbeItem], cfg: RunConfig) -> list[PlannedRequest]:
    """The model requests of a run over ``items`` (after the checks; the progress bar's total)."""
    validate_config(cfg)
    probe.validate(cfg)
    return probe.plan(items, cfg)


def answer(probe: Probe, model: CachedModel, planned: list[PlannedRequest], *,
           progress: Callable[[int, Any, bool], None] | None = None) -> list[Any]:
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


def run_probe(
    probe: Probe,
    model: CachedModel,
    cfg: RunConfig,
    *,
    progress: Callable[[int, Any, bool], None] | None = None,
    items: list[ProbeItem] | None = None,
) -> tuple[dict[str, Any], list[Attempt]]:
    """Plan, answer (cached) and score. Returns (results, attempts); writes nothing.

    ``items``: the probe's items if the caller already loaded them (``--limit`` is applied here).
    """
    validate_config(cfg)
    items = probe.select_items(probe.load_items() if items is None else items, cfg)
    planned = plan_run(probe, items, cfg)
    started = time.time()
    answers = answer(probe, model, planned, progress=progress)
    reference, recheck = model.reference(), None
    if reference is not None:  # reduced precision: the probe's close decisions re-scored at the reference one
        answers, recheck = probe.recheck(planned, answers, reference)
    attempts = probe.score(planned, answers, model.identity())
    metrics, extra = probe.summarize(attempts, seed=cfg.bootstrap_seed)
    run: dict[str, Any] = {"cache_hits": model.stats.cache_hits, "model_calls": model.stats.model_calls}
    if recheck is not None:
        run["recheck"] = {**recheck, "model_calls": reference.stats.model_calls}
    if any(p.kind == "generate" for p in planned):
        run["new_tokens"] = model.stats.new_tokens
    if any(p.kind == "loglikelihood" for p in planned):
        run["requests"] = sum(p.kind == "loglikelihood" for p in planned)
    run["seconds"] = round(time.time() - started, 2)
    results = build_results(
        probe=probe.name,
        probe_version=probe.version,
        model=model.identity(),
        parameters=probe.parameters(cfg),
        data=checksums(probe.data_files),
        metrics=metrics,
        n_items=len(items),
        n_attempts=len(attempts),
        run=run,
        manifest=run_manifest([p.request for p in planned], model.identity()),
        **extra,
    )
    return results, attempts


def write_run(out_dir: Path, probe: Probe, results: dict[str, Any], attempts: list[Attempt]) -> list[Path]:
    """Write every output file atomically (only called once the run has fully succeeded)."""
    from biaslab.report.html import write_report

    out_dir = Path(out_dir)
    rows = [a.to_json() for a in attempts]
    paths = [write_jsonl(out_dir / "attempts.jsonl", rows)]
    paths += probe.write_extra(out_dir, attempts, results)
    paths.append(write_results(out_dir, results))
    paths.append(write_report(out_dir, results, rows, probe))
    return paths
