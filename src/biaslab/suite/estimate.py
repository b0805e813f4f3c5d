"""``biaslab suite --dry-run`` and the time a suite of local models will take: the dry run of each probe the suite
would run (:mod:`biaslab.app.dry_run`) on each model, with the suite's choice of probes, their options and sizes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from biaslab.app.dry_run import Estimate, estimate, prices_from
from biaslab.app.time_estimate import duration, is_local
from biaslab.errors import ConfigError
from biaslab.models.open import cache_path
from biaslab.models.registry import parse_spec
from biaslab.models.spec import ModelSpec
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import plan_run
from biaslab.suite.sets import build_probe, choose_probes, member_options


def estimate_suite(
    models: Sequence[str | ModelSpec],
    probes: list[str] | None,
    *,
    limit: int | None = None,
    cache_dir: Path | None = None,
    model_options: dict[str, Any] | None = None,
    base_url: str | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    prices_file: Path | None = None,
    settings: RunConfig | None = None,
) -> list[Estimate]:
    """``biaslab suite --dry-run``: one estimate per model and probe the suite would run (same choice and sizes);
    ``model_options`` (``-P``) go to every model; ``settings``: the suite's decoding parameters and system prompt
    (:func:`biaslab.suite.run.suite_config`); ``models``: their specs, as text or parsed."""
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive number of items (got {limit})")
    chosen, _ = choose_probes([str(m) for m in models], probes, limit)
    options = member_options(probes)  # a set's members with the options they declare for it, as the suite runs them
    prices_for = prices_from(price_in, price_out, prices_file)
    out = []
    parsed: dict[str | ModelSpec, ModelSpec] = {}  # each model's spec parsed once
    for name in chosen:
        probe = build_probe(name, options.get(name))
        asked = limit if limit is not None else probe.suite_size
        cfg = replace(settings or RunConfig(), limit=max(asked, probe.min_limit))  # a balanced design's smallest size
        planned = plan_run(probe, probe.select_items(probe.load_items(), cfg), cfg)
        for model in models:
            if model not in parsed:
                parsed[model] = parse_spec(model, base_url=base_url)
            out.append(
                estimate(
                    probe,
                    planned,
                    parsed[model],
                    cache_db=cache_path(cache_dir),
                    model_options=dict(model_options or {}),
                    prices_for=prices_for,
                )
            )
    return out


def suite_estimates(models: list[str], probes: list[str] | None, out: Any, **kwargs: Any) -> dict[str, float] | None:
    """Before a suite of local models starts: its estimated time printed to ``out`` (a console), and each probe's
    seconds per model run (for the suite's ETA); None when no model is local (nothing printed)."""
    specs = [parse_spec(m, base_url=kwargs.get("base_url")) for m in models]  # parsed once, here
    if not any(is_local(s.prefix) for s in specs):
        return None
    found = [e for e in estimate_suite(specs, probes, **kwargs) if e.seconds is not None]
    if not found:
        return None
    total = sum(e.seconds or 0.0 for e in found)
    sending = [e for e in found if e.to_send]
    note = sending[0].seconds_note if sending else "every answer is cached"
    out.print(f"estimated time on local models: about {duration(total)} ({note})", highlight=False)
    per: dict[str, list[float]] = {}
    for e in found:
        per.setdefault(e.probe, []).append(e.seconds or 0.0)
    return {probe: sum(s) / len(models) for probe, s in per.items()}
