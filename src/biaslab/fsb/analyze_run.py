"""One ``fsb analyze`` run: read a texts table and a scores table, join them, run the paper's
analyses (:mod:`biaslab.fsb.analysis`) and write results.json, the CSV tables and report.html
(:mod:`biaslab.fsb.report`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.fsb.analysis import AnalysisConfig

TITLE = "Graded texts: bins, themes and distinguishing n-grams"


@dataclass(frozen=True)
class AnalysisRun:
    """What a run wrote: the results record (as in results.json), the files, the texts left out."""

    out: Path
    results: dict[str, Any]
    paths: list[Path]
    n_unscored: int


def first_present(columns, candidates: Sequence[str], flag: str, source: str) -> str:
    """The first of ``candidates`` among ``columns``; an error naming ``flag`` when none is."""
    for c in candidates:
        if c in columns:
            return c
    raise ConfigError(
        f"{source}: none of the columns {', '.join(candidates)} found (have: "
        f"{', '.join(map(str, columns))}); name it with {flag}"
    )


def run_analysis(
    out: Path,
    cfg: AnalysisConfig,
    *,
    texts: Path | None = None,
    scores: Path | None = None,
    id_column: str | None = None,
    text_column: str | None = None,
    score_column: str = "score_normalized",
    by: Sequence[str] | None = None,
) -> AnalysisRun:
    """Analyse ``texts`` (default: the released FSB_text.csv) graded by ``scores`` (default: the
    released fsb_final_scores.csv) with ``cfg`` and write the outputs to the folder ``out``.

    The id column defaults to uid, else id; the text column to response, else text; ``by`` (the
    metadata columns cross-tabulated with the bins) to the columns with 2-20 distinct values.
    """
    from biaslab.bws.data import read_items, read_table
    from biaslab.data import data_path
    from biaslab.data.registry import sha256_of
    from biaslab.fsb.analysis import analyze, guess_group_columns, join_texts_scores
    from biaslab.fsb.report import build_results, write_outputs

    cfg.check()
    texts_path = texts or data_path("fsb/FSB_text.csv")
    scores_path = scores or data_path("fsb/fsb_final_scores.csv")
    raw = read_table(texts_path, "texts")
    id_col = id_column or first_present(raw.columns, ["uid", "id"], "--id-column", str(texts_path))
    txt_col = text_column or first_present(raw.columns, ["response", "text"], "--text-column", str(texts_path))
    texts_df = read_items(texts_path, id_col)
    scores_df = read_table(scores_path, "scores")
    groups = list(by) if by else guess_group_columns(texts_df, exclude=[id_col, txt_col])
    for g in groups:
        if g not in texts_df.columns:
            raise ConfigError(f"--by {g}: no such column in {texts_path} (have: {', '.join(texts_df.columns)})")
    merged, unscored = join_texts_scores(
        texts_df,
        scores_df,
        id_column=id_col,
        text_column=txt_col,
        score_column=score_column,
        texts_source=str(texts_path),
        scores_source=str(scores_path),
    )
    analysis = analyze(merged, text_column=txt_col, cfg=cfg, group_columns=groups)
    parameters = {
        "id_column": id_col,
        "text_column": txt_col,
        "score_column": score_column,
        "thresholds": list(cfg.thresholds),
        "group_columns": groups,
        "pmi_min_count": cfg.pmi_min_count,
        "top": cfg.top,
        "compare": [[c["a"], c["b"]] for c in analysis["log_odds"]],
        "prior": cfg.prior,
        "prior_value": cfg.prior_value,
        "prior_scale": cfg.prior_scale,
        "min_df": cfg.min_df,
        "max_df": cfg.max_df,
        "max_features": cfg.max_features,
        "ngram_range": list(cfg.ngram_range),
        "min_words": cfg.min_words,
    }
    inputs = {
        "texts": {"path": str(texts_path), "sha256": sha256_of(Path(texts_path))},
        "scores": {"path": str(scores_path), "sha256": sha256_of(Path(scores_path))},
    }
    results = build_results(analysis, inputs=inputs, parameters=parameters, n_unscored=len(unscored), top=cfg.top)
    try:
        paths = write_outputs(out, analysis, results, title=TITLE)
    except OSError as exc:
        raise ConfigError(
            f"cannot write to {out} ({exc.strerror or type(exc).__name__}); pass a writable --out"
        ) from None
    return AnalysisRun(out=out, results=results, paths=paths, n_unscored=len(unscored))
