"""The study's commands as functions (the CLI in ``biaslab/cli/wino.py`` only parses flags and prints)."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biaslab import __version__
from biaslab.errors import ConfigError, DataError
from biaslab.io import atomic_write_text, json_safe
from biaslab.wino.predicates.flags import EVIDENCE, FLAGS, flag_predicates, flag_rates
from biaslab.wino.predicates.formats import check_ids, read_predicates, read_survey, write_csv

MODEL_COLUMNS = ["response_id", "group", "predicate", "iteration", *FLAGS, *EVIDENCE, "raw_answer", "truncated"]
SCHEMA_VERSION = 1


def sha256(path: Path) -> str:
    from biaslab.data.registry import sha256_of

    return sha256_of(Path(path))


def make_embedder(name: str):
    """An Embedder, or None for ``none`` (flags then use word overlap only)."""
    if name.strip().lower() == "none":
        return None
    from biaslab.wino.predicates.embeddings import Embedder

    return Embedder(name)


def _check_out_file(out: Path) -> None:
    if out.exists() and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name such as predicates.csv")


def _check_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory")


def _write_json(path: Path, data: dict[str, Any]) -> Path:
    atomic_write_text(path, json.dumps(json_safe(data), indent=2, ensure_ascii=False) + "\n")
    return path


# -- extraction ---------------------------------------------------------------------------------
def run_extract(
    *,
    survey_path: Path,
    model_spec: str | None,
    per_response: str,
    human_path: Path | None,
    out: Path,
    seed: int,
    temperature: float,
    max_tokens: int,
    max_per_response: int,
    embedding: str,
    base_url: str | None,
    cache_dir: Path | None,
    max_concurrency: int,
    quiet: bool,
    console: Any,
    model_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from biaslab.models.base import GenerationParams
    from biaslab.models.open import open_cached_model
    from biaslab.models.registry import DEFAULT_MODEL
    from biaslab.progress import attempt_progress
    from biaslab.wino.predicates.extraction import PROMPT, extract, parse_mode, plan

    mode, n = parse_mode(per_response)
    _check_out_file(out)
    if temperature < 0 or max_tokens < 1:
        raise ConfigError("--temperature must be >= 0 and --max-tokens >= 1")
    survey = read_survey(survey_path)
    counts = None
    if human_path is not None:
        human = read_predicates(human_path, what="human predicates")
        check_ids(human, survey, human_path)
        counts = dict(Counter(h.response_id for h in human))
    limits, skipped = plan(survey, mode, n, counts, max_per_response)
    if not limits:
        raise DataError(f"{human_path}: no survey answer has a human predicate, so --per-response human asks nothing")
    embedder = make_embedder(embedding)  # resolves the model files now: a missing model fails before any call
    spec = model_spec or DEFAULT_MODEL

    model = open_cached_model(
        spec,
        base_url=base_url,
        cache_dir=cache_dir,
        max_concurrency=max_concurrency,
        console=None if quiet else console,
        model_options=model_options,
    )
    started = time.time()
    params = GenerationParams(temperature=temperature, max_tokens=max_tokens)
    try:
        with attempt_progress(
            sum(limits.values()), f"extract-predicates on {spec}", console=console, enabled=not quiet
        ) as bar:
            run = extract(
                survey,
                model,
                limits,
                until_none=mode == "until-none",
                seed=seed,
                params=params,
                progress=bar,
                on_stop=lambda k: bar.progress.update(bar.task, advance=k),
            )
    finally:
        model.close()
    by_id = {a.response_id: a for a in survey}
    if not quiet and embedder is not None:
        console.print(f"flagging with {embedder.name} ...")
    flags = flag_predicates([r.as_row() for r in run.rows], by_id, embedder, truncated=[r.truncated for r in run.rows])
    rows = [
        {
            "response_id": r.response_id,
            "group": r.group,
            "predicate": r.predicate,
            "iteration": r.iteration,
            "raw_answer": r.raw_answer,
            "truncated": r.truncated,
            **f,
        }
        for r, f in zip(run.rows, flags)
    ]
    write_csv(out, MODEL_COLUMNS, rows)
    meta = {
        "schema_version": SCHEMA_VERSION,
        "kind": "extract-predicates",
        "biaslab_version": __version__,
        "model": model.identity(),
        "prompt": PROMPT,
        "parameters": {
            "per_response": per_response,
            "max_per_response": max_per_response if mode == "until-none" else None,
            "seed": seed,
            "generation": params.as_key(),
            "embedding": embedding,
        },
        "data": {
            str(survey_path): sha256(survey_path),
            **({str(human_path): sha256(human_path)} if human_path else {}),
        },
        "n_answers": len(survey),
        "n_asked": len(limits),
        "skipped_without_human_predicates": skipped,
        "n_predicates": len(rows),
        "stops": run.stops,
        "flag_rates": flag_rates(flags),
        "run": {
            "model_calls": model.stats.model_calls,
            "cache_hits": model.stats.cache_hits,
            "new_tokens": model.stats.new_tokens,
            **model.counts().retry_fields(),
            "seconds": round(time.time() - started, 2),
        },
    }
    _write_json(meta_path(out), meta)
    return meta


def meta_path(out: Path) -> Path:
    return Path(out).with_name(Path(out).stem + ".meta.json")


def run_flags(*, survey_path: Path, predicates_path: Path, out: Path, embedding: str) -> dict[str, Any]:
    """Recompute the flags of an existing model predicates file."""
    _check_out_file(out)
    survey = read_survey(survey_path)
    rows = read_predicates(predicates_path, what="model predicates", keep_empty=True)
    check_ids(rows, survey, predicates_path)
    truncated = [str(r.extra.get("truncated", "")).strip() in ("1", "true", "True") for r in rows]
    flags = flag_predicates(rows, {a.response_id: a for a in survey}, make_embedder(embedding), truncated=truncated)
    out_rows = [
        {**r.extra, "response_id": r.response_id, "group": r.group, "predicate": r.predicate, **f}
        for r, f in zip(rows, flags)
    ]
    extra_cols = [c for c in (rows[0].extra if rows else {}) if c not in MODEL_COLUMNS]
    write_csv(out, MODEL_COLUMNS + extra_cols, out_rows)
    return flag_rates(flags)


# -- predicate quality --------------------------------------------------------------------------
def run_quality(
    *,
    human_path: Path | str,
    model_path: Path | str,
    match_by: str,
    embedding: str,
    prefix: str,
    out_dir: Path,
    survey_path: Path | None = None,
    seed: int = 0,
    note: Callable[[str], None] = lambda s: None,
) -> dict[str, Any]:
    from biaslab.wino.predicates.embeddings import Embedder
    from biaslab.wino.predicates.quality import match_predicates, model_exact_rows, quality_metrics
    from biaslab.wino.predicates.reports import write_quality_report

    if match_by not in ("response", "group"):
        raise ConfigError(f"--match-by must be response or group, got {match_by!r}")
    _check_out_dir(Path(out_dir))
    by_response = match_by == "response"
    human = read_predicates(human_path, what="human predicates", need_ids=by_response)
    model = read_predicates(model_path, what="model predicates", need_ids=by_response)
    if not human:
        raise DataError(f"{human_path}: no human predicates")
    if survey_path is not None:
        survey = read_survey(survey_path)
        check_ids(human, survey, human_path)
        check_ids(model, survey, model_path)
    if by_response:
        human_ids = {h.response_id for h in human}
        unmatched = [m for m in model if m.response_id not in human_ids]
        if model and len(unmatched) == len(model):
            raise DataError(
                f"{model_path}: none of its response ids is in {human_path}; the two files must come "
                "from the same survey (or use --match-by group)"
            )
        if unmatched:
            note(f"{len(unmatched)} model predicate(s) belong to answers without human predicates; left out")
            model = [m for m in model if m.response_id in human_ids]
    embedder = Embedder(embedding)
    per = match_predicates(human, model, embedder, match_by=match_by, prefix=prefix)
    metrics, table = quality_metrics(per, model_exact_rows(human, model, match_by), match_by=match_by, seed=seed)
    out_dir = Path(out_dir)
    write_csv(
        out_dir / "per_predicate.csv",
        ["response_id", "group", "human_predicate", "best_model_predicate", "exact", "pcs", "scs"],
        per,
    )
    results = {
        "schema_version": SCHEMA_VERSION,
        "kind": "predicate-quality",
        "biaslab_version": __version__,
        "parameters": {
            "match_by": match_by,
            "embedding": embedder.name,
            "sentence_prefix": prefix,
            "bootstrap": {
                "resamples": 1000,
                "seed": seed,
                "unit": "survey answer" if by_response else "human predicate",
            },
        },
        "data": {str(p): (sha256(Path(p)) if Path(p).is_file() else "released") for p in (human_path, model_path)},
        "n_human": len(human),
        "n_model": len(model),
        "metrics": metrics,
        "table": table,
    }
    _write_json(out_dir / "results.json", results)
    write_quality_report(out_dir / "report.html", results, per)
    return results


# -- review loop --------------------------------------------------------------------------------
def run_review_export(*, predicates_path: Path, survey_path: Path, out: Path, embedding: str) -> int:
    from biaslab.wino.predicates.review import REVIEW_COLUMNS, export_rows

    _check_out_file(out)
    survey = read_survey(survey_path)
    rows = read_predicates(predicates_path, what="model predicates", keep_empty=True)
    check_ids(rows, survey, predicates_path)
    by_id = {a.response_id: a for a in survey}
    if rows and not all(f in rows[0].extra for f in FLAGS):  # a file without flags: compute them
        for r, f in zip(rows, flag_predicates(rows, by_id, make_embedder(embedding))):
            r.extra.update({k: (int(v) if isinstance(v, bool) else v) for k, v in f.items()})
    write_csv(out, REVIEW_COLUMNS, export_rows(rows, by_id))
    return len(rows)


def run_review_import(
    *,
    reviewed_path: Path,
    out_dir: Path,
    components_from: Path | None = None,
    skip_unreviewed: bool = False,
    seed: int = 0,
) -> dict[str, Any]:
    from biaslab.wino.predicates.reports import write_review_report
    from biaslab.wino.predicates.review import accepted_predicates, category_table, flag_agreement, parse_reviewed

    _check_out_dir(Path(out_dir))
    rows = read_predicates(reviewed_path, what="reviewed predicates", need_ids=False, keep_empty=True)
    reviewed = parse_reviewed(rows, reviewed_path, skip_unreviewed=skip_unreviewed)
    table, metrics = category_table(reviewed, seed=seed)
    agreement = flag_agreement(reviewed)
    accepted, left_out = accepted_predicates(reviewed)
    out_dir = Path(out_dir)
    if components_from is not None:
        copy_components(Path(components_from), out_dir, {p["group"] for p in accepted})
    write_csv(out_dir / "predicates.csv", ["group", "plural", "singular", "response_ids", "category"], accepted)
    summary = {
        "schema_version": SCHEMA_VERSION,
        "kind": "predicate-review",
        "biaslab_version": __version__,
        "data": {str(reviewed_path): sha256(reviewed_path)},
        "n_reviewed": len(reviewed),
        "n_unreviewed_skipped": len(rows) - len(reviewed),
        "metrics": metrics,
        "table": table,
        "flags": agreement,
        "accepted": len(accepted),
        "left_out": left_out,
        "components": str(out_dir) if components_from is not None else None,
    }
    _write_json(out_dir / "review_summary.json", summary)
    write_review_report(out_dir / "review.html", summary)
    return summary


def copy_components(src: Path, dst: Path, groups: set[str]) -> None:
    """Copy a components folder (all but its predicates) and check the groups have identities."""
    from biaslab.wino.build.tables import records

    if not src.is_dir():
        raise DataError(
            f"--components-from {src}: not a directory (give a components folder, e.g. one written by "
            "`biaslab wino example DIR`)"
        )
    ident = next((src / f"identities{ext}" for ext in (".csv", ".xlsx") if (src / f"identities{ext}").is_file()), None)
    if ident is None:
        raise DataError(f"--components-from {src}: missing identities.csv")
    known = {(r["group"].value.strip() if r["group"] else "") for r in records(ident, ["group", "form", "identity"])}
    missing = sorted(groups - known)
    if missing:
        raise DataError(
            f"{ident}: no identity for the reviewed group(s) {', '.join(map(repr, missing))}; add rows "
            "(group, form, identity) for them, or use the survey's group names"
        )
    dst.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.is_file() and item.stem != "predicates" and not item.name.startswith("."):
            shutil.copy2(item, dst / item.name)
