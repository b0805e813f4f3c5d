"""Run a suite: every chosen probe on every model through the runner and the answer cache, each
run written like ``biaslab run`` writes it, then one results.json and one report card.

Default probes: every registered probe that needs no file of yours (``pairs`` does), whose data
is available offline (``BIASLAB_DATA_DIR`` or the download cache), and whose requests the model
kind can answer (``openai/`` servers and ``anthropic/``: generation probes only). Default size per probe: the
probe's ``suite_size`` (``--limit`` overrides it for every probe). Re-running the
same suite answers every request from the cache.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from biaslab.errors import ConfigError
from biaslab.probing.schema import RunResults


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:60] or "model"


def data_available(files: list[str]) -> bool:
    from biaslab.data.registry import FILES, cache_dir

    for local in files:
        df = FILES.get(local)
        if df is None:
            return False
        data_dir = os.environ.get("BIASLAB_DATA_DIR")
        here = [Path(data_dir).expanduser() / df.local] if data_dir else []
        if not any(p.is_file() for p in [*here, cache_dir() / "data" / df.local]):
            return False
    return True


def default_probes(model_specs: list[str]) -> list[str]:
    from biaslab.probes import PROBES, create_probe, get_probe_class
    from biaslab.probing.likelihood import LikelihoodProbe

    generation_only = any(s.startswith(("openai/", "anthropic/")) for s in model_specs)
    out = []
    for name in PROBES:
        if get_probe_class(name).input_option is not None:  # needs a file of yours (pairs)
            continue
        try:
            probe = create_probe(name)
        except ConfigError:
            continue
        if generation_only and isinstance(probe, LikelihoodProbe):
            continue
        if data_available(list(probe.data_files)):
            out.append(name)
    return out


def run_one(probe: Any, cached: Any, out_dir: Path, limit: int | None, console: Console | None,
            quiet: bool) -> RunResults:
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
    return json.dumps({"model": identity, "probe": probe.name, "version": probe.version, "limit": limit,
                       "parameters": parameters, "data": list(probe.data_files),
                       "biaslab": __version__}, sort_keys=True, default=str)


def headline_entries(probe: Any, results: RunResults) -> dict[str, Any]:
    """A run's headline metrics as the suite records them: each with its interval, reading and mark; the first
    one's value also at the top level (``metric``, ``value``, ``ci_low``, ``ci_high``, ``p``, ``reading``)."""
    entries = []
    for h, reading in zip(probe.headlines, probe.readings(results), strict=True):
        m = results.metric(h.metric)
        mark = h.mark(m)
        entries.append({"metric": h.metric, "value": m.get("value"), "ci_low": m.get("ci_low"),
                        "ci_high": m.get("ci_high"), "p": m.get("p"), "reading": reading, "worse": h.worse,
                        "unbiased": h.unbiased, "mark": mark.letter if mark else None,
                        "mark_reason": mark.reason if mark else None})
    first = entries[0] if entries else {"metric": None, "value": None, "ci_low": None, "ci_high": None, "p": None,
                                        "reading": "the probe declares no headline metric"}
    return {k: first[k] for k in ("metric", "value", "ci_low", "ci_high", "p", "reading")} | {"headlines": entries}


def _previous(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    import json

    try:
        old = json.loads((out / "results.json").read_text(encoding="utf-8"))
        return {(r["model"], r["probe"]): r for r in old.get("runs", []) if r.get("key")}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def run_suite(models: list[str], probes: list[str] | None, out: Path, *, limit: int | None = None,
              cache_dir: Path | None = None, console: Console | None = None, quiet: bool = False,
              seed: int = 0, baseline: Path | None = None) -> dict[str, Any]:
    from biaslab.compare.paired import compare_all
    from biaslab.io import atomic_write_text, json_safe
    from biaslab.models.open import open_cached_model
    from biaslab.probes import PROBES
    from biaslab.suite.card import write_card

    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive number of items (got {limit})")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory")
    unknown = [p for p in probes or [] if p not in PROBES]
    if unknown:
        raise ConfigError(f"unknown probe(s) {', '.join(unknown)}; available: {', '.join(sorted(PROBES))}")
    chosen = list(probes) if probes else default_probes(models)
    if not chosen:
        raise ConfigError("no probe can run offline here; set BIASLAB_DATA_DIR or name probes with --probes")
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
                size = limit if limit is not None else probe_objs[name].suite_size
                d = out / "runs" / _slug(spec) / name
                key = run_key(probe_objs[name], cached.identity(), size)
                old = previous.get((spec, name))
                reused = bool(old and old["key"] == key and (d / "results.json").exists()
                              and (d / "attempts.jsonl").exists())
                results = read_results(d) if reused else run_one(probe_objs[name], cached, d, size, console, quiet)
                runs.append({"model": spec, "probe": name, "dir": str(d.relative_to(out)),
                             **headline_entries(probe_objs[name], results), "n_items": results.n_items,
                             "model_calls": 0 if reused else results.run.model_calls,
                             "cache_hits": results.run.cache_hits, "reused": reused, "key": key})
        finally:
            cached.close()
    comparisons = []
    if len(models) > 1:
        for name in chosen:
            dirs = [out / r["dir"] for m in models for r in runs if r["model"] == m and r["probe"] == name]
            cmp = compare_all(dirs, seed=seed)
            comparisons.append({"probe": name, **cmp})
    suite = {"models": models, "probes": chosen, "limit": limit, "runs": runs, "comparisons": comparisons}
    import json

    atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
    if baseline is not None:  # every model against the baseline suite, each headline at its default margin
        from biaslab.gate.decide import run_gate

        suite["gates"] = [run_gate(Path(baseline), out, candidate_model=m, seed=seed) for m in models]
        atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
    write_card(suite, out / "report.html")
    return suite
