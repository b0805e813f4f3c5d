"""A suite's results.json and report card, finished or partial (stopped part way: see
:mod:`biaslab.suite.partial`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from biaslab.probing.config import RunConfig


def totals(runs: list[dict[str, Any]]) -> dict[str, int]:
    """The suite's model calls, cache hits and retries: the sums of its runs' own."""
    keys = ("model_calls", "cache_hits") + (("retries",) if any("retries" in r for r in runs) else ())
    return {k: sum(int(r.get(k) or 0) for r in runs) for k in keys}


def settings_record(settings: RunConfig | None) -> dict[str, Any]:
    """The settings a suite gives every run, as its results.json records them (and an earlier suite in ``--out`` is
    compared by): ``generation`` (the decoding parameters given: ``--temperature``, ``--top-p``, ``--max-tokens``)
    and ``system_prompt`` (its text, sha256 and length), each None when not given (and then left out of the file)."""
    from biaslab.probing.system_prompt import record

    params = settings.params.as_key() if settings is not None and settings.params is not None else {}
    system = settings.system_prompt if settings is not None else None
    return {"generation": params or None, "system_prompt": None if system is None else record(system)}


def write_suite(
    models: list[str],
    chosen: list[str],
    out: Path,
    runs: list[dict[str, Any]],
    skipped: dict[str, str],
    asked_probes: list[str] | None,
    limit: int | None,
    seed: int,
    baseline: Path | None,
    *,
    partial: bool,
    options: dict[str, dict[str, Any]] | None = None,
    settings: RunConfig | None = None,
) -> dict[str, Any]:
    """results.json and the card of ``runs``: a partial suite compares only the probes finished on every model,
    and is not gated. ``options``: the options named sets ran their members with, by probe; ``settings``: the
    decoding parameters and system prompt every run was given (:func:`settings_record`)."""
    import json

    from biaslab.compare.paired import compare_all
    from biaslab.io import all_or_nothing, atomic_write_text, json_safe
    from biaslab.suite.card import write_card
    from biaslab.suite.partial import mark_partial

    comparisons = []
    if len(models) > 1:
        for name in chosen:
            dirs = [out / r["dir"] for m in models for r in runs if r["model"] == m and r["probe"] == name]
            if len(dirs) == len(models):  # a partial suite: only the probes finished on every model
                comparisons.append({"probe": name, **compare_all(dirs, seed=seed)})
    suite: dict[str, Any] = {
        "models": models,
        "probes": chosen,
        "asked": list(asked_probes or []),
        "skipped": skipped,
        "options": dict(options or {}),
        "limit": limit,
        **{k: v for k, v in settings_record(settings).items() if v is not None},  # given ones only
        "partial": partial,
        "runs": runs,
        "totals": totals(runs),
        "comparisons": comparisons,
    }
    if partial:
        mark_partial(suite, models, chosen, gated=baseline is not None)
    atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
    if baseline is not None and not partial:  # every model against the baseline suite (read from out)
        from biaslab.gate.decide import run_gate

        suite["gates"] = [run_gate(Path(baseline), out, candidate_model=m, seed=seed) for m in models]
    with all_or_nothing():  # the card and the results it shows, or neither
        if suite.get("gates"):
            atomic_write_text(out / "results.json", json.dumps(json_safe(suite), indent=2, ensure_ascii=False) + "\n")
        write_card(suite, out / "report.html")
    return suite
