"""Run a probe against a model: items -> requests (through the cache) -> attempts ->
evaluations -> metrics -> results.json / attempts.jsonl / report.html."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from biaslab.data.registry import checksums
from biaslab.errors import ConfigError
from biaslab.models.base import GenerateRequest, GenerationParams
from biaslab.models.cache import CachedModel
from biaslab.probing.core import Attempt, Probe, ProbeItem, Prompt, derive_seed, spread_subset
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


def merged_params(probe: Probe, override: GenerationParams | None) -> GenerationParams:
    base = probe.default_params()
    if override is None:
        return base
    changes = {k: v for k, v in override.as_key().items()}
    return replace(base, **changes)


def plan_requests(probe: Probe, items: list[ProbeItem], cfg: RunConfig) -> tuple[list[GenerateRequest], list[tuple[ProbeItem, int, int, Prompt]]]:
    params = merged_params(probe, cfg.params)
    requests, slots = [], []
    for item in items:
        for p_idx in range(len(item.prompts)):
            for rep in range(cfg.repetitions):
                prompt = probe.request_prompt(item, p_idx, rep, cfg.seed)
                if prompt is None:
                    continue
                seed = derive_seed(cfg.seed, probe.name, item.id, p_idx, rep)
                requests.append(GenerateRequest(messages=prompt.messages(), params=replace(params, seed=seed),
                                                repetition=rep))
                slots.append((item, p_idx, rep, prompt))
    return requests, slots


def count_requests(probe: Probe, items: list[ProbeItem], cfg: RunConfig) -> int:
    """How many model requests a run of ``items`` plans (the progress bar's total)."""
    if getattr(probe, "request_kind", "generate") == "loglikelihood":
        return sum(len(probe.requests(item)) for item in items)  # type: ignore[attr-defined]
    return len(plan_requests(probe, items, cfg)[0])


def run_probe(
    probe: Probe,
    model: CachedModel,
    cfg: RunConfig,
    *,
    progress: Callable[[int, Any, bool], None] | None = None,
    items: list[ProbeItem] | None = None,
) -> tuple[dict[str, Any], list[Attempt]]:
    """Generate (cached), evaluate and score. Returns (results, attempts); writes nothing.

    ``items``: the probe's items if the caller already loaded them (``--limit`` is applied here).
    """
    validate_config(cfg)
    if getattr(probe, "request_kind", "generate") == "loglikelihood":  # scored, not generated
        from biaslab.probing.likelihood import run_likelihood_probe

        return run_likelihood_probe(probe, model, cfg, progress=progress, items=items)  # type: ignore[arg-type]
    items = spread_subset(probe.load_items() if items is None else items, cfg.limit)
    requests, slots = plan_requests(probe, items, cfg)
    started = time.time()
    answers = model.generate(requests, progress=progress)
    attempts = []
    for request, (item, p_idx, rep, prompt), answer in zip(requests, slots, answers):
        attempt = Attempt(
            item_id=item.id, prompt_index=p_idx, repetition=rep, seed=request.params.seed,
            prompt=prompt.text, text=answer.text, metadata={**item.metadata, **prompt.metadata},
            n_new_tokens=answer.n_new_tokens, finish_reason=answer.finish_reason,
        )
        probe.evaluate(attempt)
        attempts.append(attempt)
    params = merged_params(probe, cfg.params)
    results = build_results(
        probe=probe.name,
        probe_version=probe.version,
        model=model.identity(),
        parameters={"repetitions": cfg.repetitions, "limit": cfg.limit, "seed": cfg.seed,
                    "generation": params.as_key()},
        data=checksums(probe.data_files),
        metrics=probe.metrics(attempts, seed=cfg.bootstrap_seed),
        n_items=len(items),
        n_attempts=len(attempts),
        run={"cache_hits": model.stats.cache_hits, "model_calls": model.stats.model_calls,
             "new_tokens": model.stats.new_tokens, "seconds": round(time.time() - started, 2)},
        **probe.extra_results(attempts),
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
