"""Wall time estimates for local models, before a run starts: the requests a dry run counts, at this machine's
measured speed for the model (:mod:`biaslab.models.local.calibration`, measured once and kept).

A run of a local model spends its time starting (Python, torch and the model's load: :data:`START_SECONDS` plus
the measured load), reading prompts and scoring texts (at the measured scoring rate) and decoding (the engine's
schedule replayed at the measured step times). Generations count the cached answers' mean length where the cache
holds answers of the model to the same kind of request, else every answer's ``max_tokens`` (an upper bound: the
estimate says so).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from biaslab.models.spec import ModelSpec

LOCAL_PREFIXES = ("gguf", "hf")  # model specs that run in this process
START_SECONDS = 4.0  # Python, biaslab and torch imported before the model loads (2 cores)


def is_local(prefix: str) -> bool:
    return prefix in LOCAL_PREFIXES


def calibration_for(spec: ModelSpec, model_options: dict[str, Any], say: Any = None) -> tuple[Any, bool]:
    """The model's calibration on this machine at the thread count a run would use now: kept from an earlier
    measurement (nothing loads), else measured now (the model loads: seconds to a minute); ``say(text)`` is told
    before a measurement starts. Also whether it was measured now."""
    from biaslab.models.local import calibration
    from biaslab.models.local import threads as local_threads
    from biaslab.models.local.identity import parse_options
    from biaslab.models.registry import load_model

    lazy = load_model(spec, **model_options)
    identity = lazy.identity()
    threads = local_threads.choose(parse_options(model_options)["threads"]).torch_threads
    found = calibration.cached(identity, threads)
    if found is not None:
        return found, False
    if say is not None:
        say(f"measuring {spec} on this machine for the time estimate (once; kept in the model store)")
    t0 = time.perf_counter()
    backend = lazy.backend() if hasattr(lazy, "backend") else lazy
    loaded = time.perf_counter() - t0
    return calibration.calibrate(backend, identity, loaded if loaded < 30 else 10.0), True  # longer: converted too


def estimate_seconds(cal: Any, generations: list[tuple[int, int]], scored_tokens: int, *, repeat: float = 1.0) -> float:
    """Seconds for a run: start-up, the model's load, and ``generations`` ((prompt tokens, new tokens) each) and
    ``scored_tokens`` answered ``repeat`` times over (repetitions counted, not planned)."""
    from biaslab.models.local.calibration import predict

    work = predict(cal, generations, scored_tokens) if generations or scored_tokens else 0.0
    return START_SECONDS + cal.load_seconds + work * repeat if work else START_SECONDS


def downloaded(spec: ModelSpec) -> bool:
    """Whether the model's files are on this machine (a hub model not yet downloaded is not fetched for a dry run)."""
    from pathlib import Path

    prefix, name = spec.prefix, spec.name
    if prefix != "hf" or Path(name).expanduser().is_dir():
        return True
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    return isinstance(try_to_load_from_cache(name, "config.json"), str)


def local_estimate(
    est: Any,
    spec: ModelSpec,
    options: dict[str, Any],
    counted: list[tuple[int, Any]],
    mean_new: float | None,
    repeat: float,
) -> None:
    """Fill ``est.seconds`` and ``est.seconds_note`` for a local model: ``counted`` holds each request to send with
    its input tokens; ``mean_new``: the cached answers' mean length (None: none cached, ``max_tokens`` counts)."""
    import sys

    from biaslab.models.base import GenerateRequest

    if not counted:
        est.seconds, est.seconds_note = 0.0, "every answer is cached"
        return
    from biaslab.errors import BiaslabError

    if not downloaded(spec):
        est.seconds_note = "unknown until the model is downloaded (the run downloads it first)"
        return
    try:
        cal, est.measured = calibration_for(spec, options, say=lambda text: print(text, file=sys.stderr, flush=True))
    except (BiaslabError, OSError, RuntimeError) as exc:  # the dry run's counts stand without a time
        est.seconds_note = f"unknown: the model could not be loaded to measure its speed ({exc})"
        return
    gens, scored, capped = [], 0, False
    for tokens, r in counted:
        if isinstance(r, GenerateRequest):
            limit = r.params.max_tokens or cal.default_max_tokens
            new = limit if mean_new is None else min(limit, round(mean_new))
            capped = capped or mean_new is None
            gens.append((tokens, new))
        else:
            scored += tokens
    est.seconds = estimate_seconds(cal, gens, scored, repeat=repeat)
    how = "at most: every answer as long as max_tokens allows" if capped else "answers as long as the cached ones"
    est.seconds_note = f"{how}; speed measured {cal.measured_at}, {cal.threads} thread(s)"


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 20 s``, ``2 h 05 min``."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
