"""The olympics commands on results files: score a pair of annotated files (the paper's Tables 1,
6 and 2) into a results folder, and extract medalists from the generated texts of one file."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaslab.errors import ConfigError

if TYPE_CHECKING:
    from biaslab.probing.schema import RunResults


@dataclass(frozen=True)
class ScoredFiles:
    """What :func:`score_annotated_files` wrote and computed."""

    results: RunResults  # as written to results.json
    scored: dict[str, Any]  # score_annotated()'s metrics, tests, counts and disciplines
    unknown_codes: dict[str, int]  # code -> cells, for codes scored as written
    paths: list[Path]  # results.json, disciplines.tsv, disciplines.md


@dataclass(frozen=True)
class ExtractedFile:
    """What :func:`extract_file` wrote: rows, rows with flags, unmapped country strings."""

    out: Path
    kind: str
    n_rows: int
    n_flagged: int
    unmapped: Counter[str]


def model_name(specified: Path, underspecified: Path) -> str:
    """The run's model name: the files' common stem, else both stems joined by ``+``."""
    return specified.stem if specified.stem == underspecified.stem else f"{specified.stem}+{underspecified.stem}"


def disciplines_markdown(rows: list[dict[str, Any]], title: str) -> str:
    """The per-discipline table (paper Table 2) as Markdown."""
    lines = [
        f"# {title}",
        "",
        "Mean per-text bias score on underspecified prompts by discipline (paper Table 2); positive favours men.",
        "",
        "| Discipline | mean score | share positive | scores | explicit | implicit | texts |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        share = (
            "-"
            if r["share_positive"] is None or not math.isfinite(r["share_positive"])
            else f"{100 * r['share_positive']:.1f}%"
        )
        mean = "-" if r["mean_score"] is None or not math.isfinite(r["mean_score"]) else f"{r['mean_score']:.2f}"
        lines.append(
            f"| {r['Discipline']} | {mean} | {share} | {r['n_scores']} | {r['n_explicit']} | "
            f"{r['n_implicit']} | {r['n_texts']} |"
        )
    return "\n".join(lines) + "\n"


def score_annotated_files(
    specified: Path,
    underspecified: Path,
    out: Path,
    *,
    permutations: int = 10_000,
    seed: int = 0,
    drop_unsure: bool = False,
    allow_unknown_codes: bool = False,
) -> ScoredFiles:
    """Score the annotated results files of the specified and underspecified prompts and write
    results.json, disciplines.tsv and disciplines.md to the folder ``out``."""
    import pandas as pd

    from biaslab.data.registry import sha256_of
    from biaslab.io import all_or_nothing, atomic_write_text
    from biaslab.probes.olympics.annotated import read_annotated
    from biaslab.probes.olympics.score import score_annotated
    from biaslab.probing.results import build_results, write_results

    spec_df = read_annotated(specified, "specified", allow_unknown_codes=allow_unknown_codes)
    und_df = read_annotated(underspecified, "underspecified", allow_unknown_codes=allow_unknown_codes)
    unknown = spec_df.attrs["unknown_codes"] + und_df.attrs["unknown_codes"]
    scored = score_annotated(
        spec_df,
        und_df,
        drop_unsure=drop_unsure,
        n_permutations=permutations,
        seed=seed,
        validate=False,
    )

    results = build_results(
        probe="olympics",
        probe_version="1",
        model={"name": model_name(specified, underspecified), "source": "annotated"},
        parameters=scored["parameters"],
        data={str(specified): sha256_of(specified), str(underspecified): sha256_of(underspecified)},
        metrics=scored["metrics"],
        n_items=scored["counts"]["n_events"],
        n_attempts=scored["counts"]["n_texts"],
        details={
            "tests": scored["tests"],
            "paper_tests": scored["paper_tests"],
            "counts": scored["counts"],
            "unknown_codes": dict(sorted(unknown.items())),
            "disciplines": scored["disciplines"],
            "metrics_without_unsure": scored["metrics_without_unsure"],
            "tests_without_unsure": scored["tests_without_unsure"],
            "paper_tests_without_unsure": scored["paper_tests_without_unsure"],
            "counts_without_unsure": scored["counts_without_unsure"],
        },
    )
    disc = pd.DataFrame(scored["disciplines"])
    disc_tsv = disc.to_csv(sep="\t", index=False, float_format="%.6g", lineterminator="\n")
    disc_md = disciplines_markdown(scored["disciplines"], f"olympics: {results.model['name']}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with all_or_nothing():  # every file, or none: an earlier scoring stays whole
            atomic_write_text(out / "disciplines.tsv", disc_tsv)
            atomic_write_text(out / "disciplines.md", disc_md)
            path = write_results(out, results)
    except OSError as exc:
        raise ConfigError(
            f"cannot write results to {out} ({exc.strerror or type(exc).__name__}); pass a writable --out directory"
        ) from None
    return ScoredFiles(
        results=results,
        scored=scored,
        unknown_codes=dict(unknown),
        paths=[path, out / "disciplines.tsv", out / "disciplines.md"],
    )


def unmapped_items(value: Any) -> list[str]:
    """The unmapped country strings of one row (a list, or a string joined by ';', '|' or tabs)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value).strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            parsed = json.loads(text)
            if isinstance(parsed, list):
                return [str(v).strip() for v in parsed if str(v).strip()]
        except ValueError:
            pass
    for sep in (";", "|", "\t"):
        if sep in text:
            return [t.strip() for t in text.split(sep) if t.strip()]
    return [text]


def flagged(value: Any) -> bool:
    """Whether a row's flags cell holds any flag."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return len(value) > 0
    return bool(str(value).strip())


def extract_file(input_path: Path, out: Path, *, allow_unknown_codes: bool = False) -> ExtractedFile:
    """Extract the medalist NOCs of every generated text in ``input_path`` (a results TSV in the
    public format) and write the file with gen_*, status, flags and unmapped filled to ``out``."""
    from biaslab.probes.olympics.annotated import read_annotated, write_annotated

    df = read_annotated(input_path, check_generated=False, allow_unknown_codes=allow_unknown_codes)
    kind = df.attrs["kind"]
    try:
        from biaslab.probes.olympics.extract import extract_frame
    except ImportError as exc:  # pragma: no cover - only while the extractor is missing
        raise ConfigError(f"the medal extractor is not available ({exc})") from None
    result = extract_frame(df)
    try:
        write_annotated(out, result, kind)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {out} ({exc.strerror or type(exc).__name__}); pass a writable --out file"
        ) from None

    n_flagged = sum(flagged(v) for v in result["flags"]) if "flags" in result.columns else 0
    unmapped: Counter[str] = Counter()
    if "unmapped" in result.columns:
        for v in result["unmapped"]:
            unmapped.update(unmapped_items(v))
    return ExtractedFile(out=out, kind=kind, n_rows=len(result), n_flagged=n_flagged, unmapped=unmapped)
