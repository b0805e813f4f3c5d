"""One ``fsb generate`` run: plan the texts, open the model behind the response cache, generate,
and write the texts CSV with a ``<name>.meta.json`` provenance record beside it.

The pipeline itself is :mod:`biaslab.fsb.generate`; this module is what the command calls.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError, WriteError


@dataclass(frozen=True)
class GenerationSummary:
    """What a run wrote, for the command's closing lines."""

    out: Path
    meta_path: Path
    n_texts: int
    n_planned: int
    n_empty: int
    counts: dict[tuple[str, str], int]  # (seed type, prompt type) -> texts, in generation order
    model_calls: int
    cache_hits: int
    retries: int | None = None  # a server's faults retried (None: the backend calls no server)
    retry_causes: dict[str, int] | None = None


def meta_path_for(out: Path) -> Path:
    """``texts.csv`` -> ``texts.meta.json``."""
    return out.with_name(out.stem + ".meta.json")


def run_generation(
    out: Path,
    *,
    model: str | None = None,
    base_url: str | None = None,
    prompt_type: str = "both",
    seed_types: str = "explicit,implicit,neutral",
    limit: int | None = None,
    seed: int = 0,
    seeds_file: Path | None = None,
    examples_dir: Path | None = None,
    random_examples: str = "pooled",
    temperature: float = 0.0,
    max_tokens: int = 100,
    max_concurrency: int = 8,
    cache_dir: Path | None = None,
    quiet: bool = False,
    console: Any = None,
    model_options: dict[str, Any] | None = None,
) -> GenerationSummary:
    """Generate the planned texts (``limit`` of them evenly spread over the plan) and write ``out``
    and its ``.meta.json``. Progress and the model-loading note go to ``console`` unless ``quiet``.

    ``prompt_type`` and ``seed_types`` are the command's comma-separated values; every answer is
    cached, so a repeated or interrupted run finishes from the cache.
    """
    from biaslab import __version__
    from biaslab.app.execute import answers_kept
    from biaslab.atomic_write import check_writable_folder
    from biaslab.data.registry import FILES, sha256_of
    from biaslab.fsb.generate import (
        data_files_used,
        generate_texts,
        known_seed_types,
        parse_prompt_types,
        parse_seed_types,
        plan_texts,
        texts_csv,
    )
    from biaslab.io import all_or_nothing, atomic_write_text, json_safe
    from biaslab.models.base import GenerationParams
    from biaslab.models.open import open_cached_model
    from biaslab.models.registry import DEFAULT_MODEL
    from biaslab.probing.core import spread_subset
    from biaslab.progress import attempt_progress

    meta_path = meta_path_for(out)
    prompt_types = parse_prompt_types(prompt_type)
    wanted = parse_seed_types(seed_types, known_seed_types(seeds_file))
    plan = plan_texts(
        prompt_types,
        wanted,
        seed=seed,
        seeds_file=seeds_file,
        examples_dir=examples_dir,
        random_examples=random_examples,
    )
    if not plan:
        raise ConfigError(
            f"no seeds for seed type(s) {', '.join(wanted)} and prompt type(s) {', '.join(prompt_types)}; check --seeds"
        )
    rows = spread_subset(plan, limit)

    spec = model or DEFAULT_MODEL
    params = GenerationParams(temperature=temperature, max_tokens=max_tokens)

    check_writable_folder(out.parent, f"--out {out}")  # before any model call
    cached = open_cached_model(
        spec,
        base_url=base_url,
        cache_dir=cache_dir,
        max_concurrency=max_concurrency,
        console=None if quiet else console,
        model_options=model_options,
    )
    started = time.time()
    try:
        with attempt_progress(len(rows), f"fsb generate on {spec}", console=console, enabled=not quiet) as bar:
            texts = generate_texts(cached, rows, params, seed=seed, progress=bar)
    finally:
        cached.close()

    used = data_files_used(
        prompt_types, wanted, seeds_file=seeds_file, examples_dir=examples_dir, random_examples=random_examples
    )
    inputs = [seeds_file] if seeds_file else []
    if examples_dir:
        inputs += sorted(Path(examples_dir).glob("*_ic.json"))
    n_empty = sum(not t["response"] for t in texts)
    meta = {
        "command": "fsb generate",
        "biaslab_version": __version__,
        "model_spec": spec,
        "model": cached.identity(),
        "parameters": {
            "prompt_types": prompt_types,
            "seed_types": wanted,
            "limit": limit,
            "seed": seed,
            "random_examples": random_examples,
            "generation": params.as_key(),
            "seeds_file": str(seeds_file) if seeds_file else None,
            "examples_dir": str(examples_dir) if examples_dir else None,
        },
        "data": {k: FILES[k].sha256 for k in used},
        "inputs": {str(p): sha256_of(p) for p in inputs},
        "n_planned": len(plan),
        "n_texts": len(texts),
        "n_empty_responses": n_empty,
        "run": {
            "cache_hits": cached.stats.cache_hits,
            "model_calls": cached.stats.model_calls,
            "new_tokens": cached.stats.new_tokens,
            **cached.counts().retry_fields(),
            "seconds": round(time.time() - started, 2),
        },
    }
    try:
        with all_or_nothing():  # the texts and their provenance, or neither
            atomic_write_text(out, texts_csv(texts))
            atomic_write_text(meta_path, json.dumps(json_safe(meta), indent=2, ensure_ascii=False) + "\n")
    except WriteError as exc:
        raise answers_kept(exc) from None
    return GenerationSummary(
        out=out,
        meta_path=meta_path,
        n_texts=len(texts),
        n_planned=len(plan),
        n_empty=n_empty,
        counts=dict(Counter((t["seed_type"], t["prompt_type"]) for t in texts)),
        model_calls=cached.stats.model_calls,
        cache_hits=cached.stats.cache_hits,
        **cached.counts().retry_fields(),
    )
