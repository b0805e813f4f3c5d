"""``biaslab fsb generate``: graded gender-biased texts from seed sentences (see :mod:`.generate`)."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from biaslab.errors import ConfigError

MODEL_HELP = "Model spec (smollm2, gemma3-270m, hf/..., gguf/..., openai/..., scripted/...; see `biaslab models`)."


def generate_command(
    out: Path = typer.Option(..., "--out", "-o", help="CSV to write (FSB_text.csv layout + example_ids, model, "
                             "raw_response); a <name>.meta.json with the model identity and settings goes beside it."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help=MODEL_HELP, envvar="BIASLAB_MODEL"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Base URL of an OpenAI-compatible server.",
                                           envvar="BIASLAB_BASE_URL"),
    prompt_type: str = typer.Option("both", "--prompt-type", help="completion, conversion or both."),
    seed_types: str = typer.Option("explicit,implicit,neutral", "--seed-types",
                                   help="Comma-separated seed types: explicit, implicit, neutral, random "
                                        "(or the seed types of --seeds)."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Generate only N texts, evenly spread over "
                                        "the plan (uids stay those of the full plan)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the in-context example draws and request seeds."),
    seeds_file: Optional[Path] = typer.Option(None, "--seeds", help="Your own seeds: CSV with seed_type,query"
                                              "[,prompt_type] (default: the released seed files)."),
    examples_dir: Optional[Path] = typer.Option(None, "--examples-dir", help="Folder with <seed type>_<prompt "
                                                "type>_ic.json example files (default: the released ones)."),
    random_examples: str = typer.Option("pooled", "--random-examples", help="Examples for the random seed type, "
                                        "which has no file: pooled (explicit+implicit+neutral files of the prompt "
                                        "type), explicit, implicit or neutral."),
    temperature: float = typer.Option(0.0, "--temperature", help="Sampling temperature (paper: 0)."),
    max_tokens: int = typer.Option(100, "--max-tokens", help="Maximum new tokens per answer (paper: 100)."),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Parallel requests to an HTTP server."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Where the response cache lives."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Generate graded gender-biased texts the way Fifty Shades of Bias was made (paper section 3).

    Each seed gets the prompt type's system prompt, two in-context examples drawn (seeded) from the
    matching examples file, then the seed; greedy decoding, at most 100 new tokens, first line kept.
    Every answer is cached: re-running finishes from the cache and an interrupted run resumes.
    """
    from rich.console import Console

    from biaslab import __version__
    from biaslab.data.registry import FILES, sha256_of
    from biaslab.models.base import GenerationParams
    from biaslab.models.cache import CachedModel, ResponseCache, default_cache_path
    from biaslab.models.registry import DEFAULT_MODEL, load_model
    from biaslab.probing.core import spread_subset
    from biaslab.probing.results import atomic_write_text, json_safe
    from biaslab.progress import attempt_progress
    from biaslab.fsb.generate import (data_files_used, generate_texts, known_seed_types, parse_prompt_types, parse_seed_types,
                           plan_texts, texts_csv)

    console, out_console = Console(stderr=True), Console(highlight=False)
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive number of texts (got {limit}); omit it to generate all")
    if max_tokens < 1:
        raise ConfigError(f"--max-tokens must be at least 1 (got {max_tokens})")
    if temperature < 0:
        raise ConfigError(f"--temperature must be >= 0 (got {temperature})")
    if out.exists() and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name such as {out / 'texts.csv'}")
    meta_path = out.with_name(out.stem + ".meta.json")
    prompt_types = parse_prompt_types(prompt_type)
    wanted = parse_seed_types(seed_types, known_seed_types(seeds_file))
    plan = plan_texts(prompt_types, wanted, seed=seed, seeds_file=seeds_file, examples_dir=examples_dir,
                      random_examples=random_examples.strip().lower())
    if not plan:
        raise ConfigError(f"no seeds for seed type(s) {', '.join(wanted)} and prompt type(s) "
                          f"{', '.join(prompt_types)}; check --seeds")
    rows = spread_subset(plan, limit)  # type: ignore[arg-type]

    spec = model or DEFAULT_MODEL
    params = GenerationParams(temperature=temperature, max_tokens=max_tokens)
    cache = ResponseCache(Path(cache_dir) / "responses.sqlite" if cache_dir else default_cache_path())
    options = {"max_concurrency": max_concurrency} if spec.startswith("openai/") else {}

    def announce(what: str) -> None:  # local models load at the first answer the cache lacks
        if not quiet:
            console.print(f"loading model [bold]{what}[/] ...")

    cached = CachedModel(load_model(spec, base_url=base_url, on_load=announce, **options), cache)
    started = time.time()
    try:
        with attempt_progress(len(rows), f"fsb generate on {spec}", console=console, enabled=not quiet) as bar:
            texts = generate_texts(cached, rows, params, seed=seed, progress=bar)
    finally:
        cached.close()

    random_examples = random_examples.strip().lower()
    used = data_files_used(prompt_types, wanted, seeds_file=seeds_file, examples_dir=examples_dir,
                           random_examples=random_examples)
    inputs = ([seeds_file] if seeds_file else []) + (sorted(Path(examples_dir).glob("*_ic.json")) if examples_dir else [])
    meta = {
        "command": "fsb generate", "biaslab_version": __version__, "model_spec": spec, "model": cached.identity(),
        "parameters": {"prompt_types": prompt_types, "seed_types": wanted, "limit": limit, "seed": seed,
                       "random_examples": random_examples, "generation": params.as_key(),
                       "seeds_file": str(seeds_file) if seeds_file else None,
                       "examples_dir": str(examples_dir) if examples_dir else None},
        "data": {k: FILES[k].sha256 for k in used},
        "inputs": {str(p): sha256_of(p) for p in inputs},
        "n_planned": len(plan), "n_texts": len(texts),
        "n_empty_responses": sum(not t["response"] for t in texts),
        "run": {"cache_hits": cached.stats.cache_hits, "model_calls": cached.stats.model_calls,
                "new_tokens": cached.stats.new_tokens, "seconds": round(time.time() - started, 2)},
    }
    try:
        atomic_write_text(out, texts_csv(texts))
        atomic_write_text(meta_path, json.dumps(json_safe(meta), indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {out} ({exc.strerror or type(exc).__name__}); pass a writable --out") from None

    counts = Counter((t["seed_type"], t["prompt_type"]) for t in texts)
    summary = ", ".join(f"{s}/{p} {n}" for (s, p), n in counts.items())
    out_console.print(f"{len(texts)} texts of {len(plan)} planned ({summary}); {meta['n_empty_responses']} empty; "
                      f"model calls {cached.stats.model_calls}, cache hits {cached.stats.cache_hits}")
    out_console.print(f"wrote {out} and {meta_path}")
