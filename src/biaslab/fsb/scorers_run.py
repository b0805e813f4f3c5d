"""One ``fsb scorers`` run: read the rated texts, score them with each scorer (through the disk
cache), compare with the human scores (:mod:`biaslab.fsb.scorers_study`), measure the ceiling
from the annotations' split-half reliability, and write results.json, scores.csv and report.html."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.errors import ConfigError, DataError
from biaslab.fsb.scorers_study import ScoredTexts, ceiling_from_split_half, scorer_summary
from biaslab.spreadsheet_cells import safe_cell

SCHEMA = "biaslab.fsb.scorers/1"
TITLE = "Scorers against human ratings"
ANNOTATIONS_FILE = "fsb/fsb-tuples-annotations.csv"
SCORES_FILE = "fsb/fsb_final_scores.csv"
# the paper's Table 6: Pearson's r of each model's or API's scores with the normalised BWS scores
PAPER_TABLE6 = {
    "CORGI-PM classifier (gender bias)": 0.406,
    "HateBERT fine-tuned on Ruddit (offensiveness)": 0.375,
    "GPT-3.5-Turbo judge": 0.706,
    "GPT-4 judge": 0.813,
    "Perspective toxicity": 0.321,
    "Perspective identity attack": 0.444,
    "Perspective insult": 0.26,
    "Perspective threat": 0.041,
    "Perspective severe toxicity": 0.181,
    "Perspective profanity": 0.138,
}


@dataclass(frozen=True)
class ScorersRun:
    out: Path
    results: dict[str, Any]
    paths: list[Path]


def load_rated_texts(
    texts: Path | None = None,
    scores: Path | None = None,
    *,
    id_column: str | None = None,
    text_column: str | None = None,
    score_column: str = "score_normalized",
) -> ScoredTexts:
    """Texts joined with their human scores (default: the released FSB texts and scores)."""
    from biaslab.bws.data import read_items, read_table
    from biaslab.data import data_path
    from biaslab.data.registry import sha256_of
    from biaslab.fsb.analysis import join_texts_scores
    from biaslab.fsb.analyze_run import first_present

    texts_path = Path(texts) if texts else data_path("fsb/FSB_text.csv")
    scores_path = Path(scores) if scores else data_path(SCORES_FILE)
    raw = read_table(texts_path, "texts")
    id_col = id_column or first_present(raw.columns, ["uid", "id"], "--id-column", str(texts_path))
    txt_col = text_column or first_present(raw.columns, ["response", "text"], "--text-column", str(texts_path))
    merged, _ = join_texts_scores(
        read_items(texts_path, id_col),
        read_table(scores_path, "scores"),
        id_column=id_col,
        text_column=txt_col,
        score_column=score_column,
        texts_source=str(texts_path),
        scores_source=str(scores_path),
    )
    source = {
        "texts": {
            "path": str(texts_path),
            "sha256": sha256_of(texts_path),
            "id_column": id_col,
            "text_column": txt_col,
        },
        "scores": {"path": str(scores_path), "sha256": sha256_of(scores_path), "score_column": score_column},
    }
    return ScoredTexts(
        ids=[str(x) for x in merged[id_col]],
        texts=[str(t).strip() for t in merged[txt_col]],
        human=merged["_score"].to_numpy(dtype=float),
        source=source,
    )


def reliability_ceiling(annotations: Path | None, ids: Sequence[str], *, trials: int, seed: int) -> dict[str, Any]:
    """Split-half reliability of ``annotations`` and the ceiling it implies, or why there is none."""
    from biaslab.bws.data import index_annotations, read_annotations
    from biaslab.bws.reliability import split_half_reliability
    from biaslab.data.registry import sha256_of

    if annotations is None:
        return {
            "available": False,
            "reason": "no annotations: pass --annotations with the best-worst annotations "
            "(Item1..ItemK, BestItem, WorstItem) the scores were counted from",
        }
    data = index_annotations(read_annotations(annotations))
    annotated = set(map(str, data.ids))
    missing = [i for i in ids if i not in annotated]
    if missing:
        raise DataError(
            f"{annotations}: {len(missing)} rated text id(s) never appear in the annotations (first: "
            f"{missing[0]}); pass the annotations the --scores were counted from"
        )
    rel = split_half_reliability(data, trials=trials, seed=seed)
    if not math.isfinite(rel.pearson_mean):  # too few judgements for a split-half figure
        return {
            "available": False,
            "reason": f"split-half reliability: {rel.reason}",
            "split_half": rel.as_dict(),
            "n_annotations": data.n_annotations,
            "n_tuples": data.n_tuples,
        }
    return {
        "available": True,
        "annotations": {"path": str(annotations), "sha256": sha256_of(Path(annotations))},
        "n_annotations": data.n_annotations,
        "n_tuples": data.n_tuples,
        "split_half": rel.as_dict(),
        "ceiling": {
            "pearson": _none(ceiling_from_split_half(rel.pearson_mean)),
            "spearman": _none(ceiling_from_split_half(rel.spearman_mean)),
        },
    }


def _released_scores_sha256() -> str:
    from biaslab.data.registry import FILES

    sha256 = FILES[SCORES_FILE].sha256
    assert sha256 is not None  # the released scores are pinned in the registry
    return sha256


def _none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def run_scorers(
    out: Path,
    specs: Sequence[str],
    *,
    texts: Path | None = None,
    scores: Path | None = None,
    annotations: Path | None = None,
    id_column: str | None = None,
    text_column: str | None = None,
    score_column: str = "score_normalized",
    seed: int = 0,
    trials: int = 100,
    cache_dir: Path | None = None,
    scorer_options: dict[str, Any] | None = None,
    on_scorer: Callable[[str], None] | None = None,
) -> ScorersRun:
    """Score the rated texts with every scorer in ``specs`` and write the study into ``out``."""
    from biaslab import __version__
    from biaslab.data import data_path
    from biaslab.fsb.scorers_report import render_scorers_report
    from biaslab.io import all_or_nothing, atomic_write_text, json_safe
    from biaslab.scorers import cached_scorer, get_scorer

    if not specs:
        raise ConfigError("give at least one --scorer, e.g. --scorer vader")
    if len(set(specs)) != len(specs):
        raise ConfigError("a --scorer is given twice; name each scorer once")
    rated = load_rated_texts(texts, scores, id_column=id_column, text_column=text_column, score_column=score_column)
    is_release = rated.source["scores"]["sha256"] == _released_scores_sha256()
    if annotations is None and is_release:
        annotations = data_path(ANNOTATIONS_FILE)  # the released scores were counted from the released annotations
    scorers = [cached_scorer(get_scorer(spec, **(scorer_options or {}).get(spec, {})), cache_dir) for spec in specs]
    columns: dict[str, list[float]] = {}
    summaries = []
    for spec, scorer in zip(specs, scorers):
        if on_scorer:
            on_scorer(spec)
        values = scorer.score(rated.texts)
        columns[spec] = values
        summary = scorer_summary(rated.human, values, seed=seed)
        summaries.append(
            {
                "scorer": spec,
                "name": scorer.name,
                "identity": scorer.identity,
                **summary,
                "cache": {"hits": scorer.hits, "computed": scorer.computed, "path": str(scorer.path)},
            }
        )
    reliability = reliability_ceiling(annotations, rated.ids, trials=trials, seed=seed)
    metrics: dict[str, Any] = {}
    for s in summaries:
        for name in ("pearson", "spearman", "mae_fit"):
            m = s[name]
            metrics[f"{name}:{s['scorer']}"] = {
                "value": m["value"],
                "ci_low": m["ci_low"],
                "ci_high": m["ci_high"],
                "n": s["n"],
                **({"p": m.get("p"), "null": m.get("null")} if name != "mae_fit" else {}),
            }
    results = json_safe(
        {
            "schema": SCHEMA,
            "biaslab_version": __version__,
            "inputs": rated.source,
            "parameters": {
                "scorers": list(specs),
                "seed": seed,
                "split_half_trials": trials,
            },
            "n_items": len(rated.ids),
            "metrics": metrics,
            "scorers": summaries,
            "reliability": reliability,
            "paper_table6_pearson": PAPER_TABLE6 if is_release else None,
        }
    )
    table = ["id,human_score," + ",".join(_csv_cell(s) for s in specs)]
    for k, item_id in enumerate(rated.ids):
        cells = [_num(columns[s][k]) for s in specs]
        table.append(",".join([_csv_cell(item_id), repr(float(rated.human[k]))] + cells))
    files = {
        "scores.csv": "\n".join(table) + "\n",
        "report.html": render_scorers_report(results, rated, columns, TITLE),
        "results.json": json.dumps(results, indent=2, ensure_ascii=False) + "\n",
    }
    paths = []
    try:
        with all_or_nothing():  # every file, or (one cannot be written) none: an earlier study stays whole
            for name, text in files.items():
                atomic_write_text(Path(out) / name, text)
                paths.append(Path(out) / name)
    except OSError as exc:
        raise ConfigError(
            f"cannot write to {out} ({exc.strerror or type(exc).__name__}); pass a writable --out"
        ) from None
    return ScorersRun(out=Path(out), results=results, paths=paths)


def _num(value: float) -> str:
    return repr(float(value)) if np.isfinite(value) else ""


def _csv_cell(text: str) -> str:
    text = safe_cell(text)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text
