"""``judge-run:<DIR>``: the scores of a finished fsb-judge run, as a scorer.

A text's score is the mean of the judge's usable scores for it over the run's repetitions; a
text the run did not rate, or rated with no usable score, gets NaN (left out of the
comparison and counted). Texts are matched after trimming and collapsing whitespace.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path

from biaslab.errors import ConfigError
from biaslab.probing.results import read_attempts, read_results


def _norm(text: str) -> str:
    return " ".join(str(text).split())


def _rated_text(row: dict) -> str | None:
    if row.get("rated_text"):
        return row["rated_text"]
    prompt = row.get("prompt")
    if isinstance(prompt, list) and prompt:  # the whole chat: the rated text is the last user message
        return prompt[-1].get("content")
    return prompt if isinstance(prompt, str) else None


class JudgeRunScorer:
    def __init__(self, run_dir: str):
        folder = Path(str(run_dir).strip()).expanduser()
        if not str(run_dir).strip():
            raise ConfigError(
                "the judge-run scorer needs a run folder: judge-run:<DIR> (the --out of `biaslab run fsb-judge`)"
            )
        attempts, results = folder / "attempts.jsonl", folder / "results.json"
        if not attempts.is_file() or not results.is_file():
            raise ConfigError(
                f"judge-run: {folder} is not a finished run folder (needs results.json and "
                "attempts.jsonl); run `biaslab run fsb-judge --out DIR` first"
            )
        run = read_results(folder)  # both files read and checked as every reader of a run folder checks them
        if run.probe != "fsb-judge":
            raise ConfigError(f"judge-run: {folder} is a run of {run.probe!r}, not of fsb-judge")
        sums: dict[str, list[float]] = {}
        for row in read_attempts(folder, run.recorded_attempts) or []:
            text = _rated_text(row)
            if text is None:
                continue
            values = sums.setdefault(_norm(text), [])
            if row.get("judge_score") is not None:
                values.append(float(row["judge_score"]))
        raw = attempts.read_bytes()
        self._by_text = {t: (sum(v) / len(v) if v else math.nan) for t, v in sums.items()}
        self.name = f"judge-run:{folder.name}"
        self.identity = f"judge-run:{folder.resolve()}:{hashlib.sha256(raw).hexdigest()[:16]}"

    def score(self, texts: Sequence[str]) -> list[float]:
        return [self._by_text.get(_norm(t), math.nan) for t in texts]


def make_judge_run(rest: str = "", **options) -> JudgeRunScorer:
    if options:
        raise ConfigError(f"the judge-run scorer takes no options (got {', '.join(sorted(options))})")
    return JudgeRunScorer(rest)
