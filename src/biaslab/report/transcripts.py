"""``biaslab view``: every attempt of one or more runs in one self-contained, filterable HTML page.

The page holds the attempts once, as JSON in a ``<script type="application/json">`` block whose ``<``, ``>``
and ``&`` are written as ``\\u003c``-style escapes (no answer can close the block), and one script
(``templates/transcripts.js``) that builds the filters and shows the matching attempts 200 to a page with
``textContent`` only: no answer is ever parsed as HTML. Its Content-Security-Policy allows that one script
alone (by its sha256), no network and no other script, so the file works offline and runs nothing else.

What each attempt shows:

* its run (folder, model, probe), item id, prompt and answer text (a chat prompt as its messages);
* its reading: the evaluation when it is a label (``male``, ``yes``, ``correct``), ``score`` for a number,
  ``detected`` for a structure (the evaluation itself is shown beside it), ``undetected`` when it is null;
* for an undetected attempt, why, from what the attempt records (:func:`undetected_reason`);
* its groups: the attempt fields the run's report offers as filters
  (:func:`biaslab.report.attempts_table.category_fields`), as ``field: value``;
* its other fields (the item's metadata and the evaluator's outputs), folded.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError, DataError
from biaslab.io import write_output
from biaslab.probing.results import read_attempts, read_results
from biaslab.probing.schema import RunResults
from biaslab.report.attempts_table import category_fields
from biaslab.report.style import CSS

PAGE_SIZE = 200  # attempts shown at once; the others are a page away
DEFAULT_NAME = "transcripts.html"
CORE = ("item_id", "prompt_index", "repetition", "seed", "prompt", "text", "evaluation")  # the others: fields
# undetected, and why: in the order they are checked (the first that fits is the reason)
EMPTY, REFUSAL, CUT_OFF, NOT_READ, NO_DECISION = (
    "empty answer",
    "refusal",
    "cut off at the token limit",
    "no answer recognised",
    "no decision (scores tied or missing)",
)
ENDED = ("stop", "end_turn", "eos", "stop_sequence")  # finish reasons of an answer that ended by itself


@dataclass
class Run:
    path: Path
    results: RunResults
    rows: list[dict[str, Any]]


def load_run(path: Path) -> Run:
    """A run folder (or its results.json) with its attempts; a one-line error when it is not one or has none."""
    path = Path(path)
    folder = path.parent if path.name == "results.json" and path.is_file() else path
    if not folder.is_dir():
        raise DataError(f"{path} is not a folder; pass run folders written by `biaslab run --out`")
    results = read_results(folder)
    rows = read_attempts(folder, results.recorded_attempts)
    if rows is None:
        raise DataError(f"{folder / 'attempts.jsonl'} is missing, so there are no attempts to show; re-run the probe")
    if not rows:
        raise DataError(f"{folder} holds no attempts (its attempts.jsonl is empty); pass a run that has some")
    return Run(folder, results, rows)


def model_name(results: RunResults, folder: Path) -> str:
    m = results.model
    return str(m.get("model") or m.get("name") or folder.name)


def reading(evaluation: Any) -> str:
    """What the probe read from the answer, as one filterable label (see the module)."""
    if evaluation is None:
        return "undetected"
    if isinstance(evaluation, bool):
        return "true" if evaluation else "false"
    if isinstance(evaluation, str | int):
        return str(evaluation)
    return "score" if isinstance(evaluation, float) else "detected"


def undetected_reason(row: dict[str, Any]) -> str:
    """Why an undetected attempt was not read, from what it records: no text, a refusal the evaluator flagged,
    an answer stopped by the token limit (or another finish reason than its own end), a likelihood comparison
    without a decision, else an answer in which the probe's reader found none of its answers."""
    likelihood = "score_more" in row or "score_less" in row
    text = row.get("text")
    if not likelihood and (not isinstance(text, str) or not text.strip()):
        return EMPTY
    if row.get("refusal") is True:
        return REFUSAL
    finish = row.get("finish_reason")
    if finish == "length":
        return CUT_OFF
    if isinstance(finish, str) and finish not in ENDED:
        return f"stopped: {finish}"
    return NO_DECISION if likelihood else NOT_READ


def _text(value: Any) -> str:
    """A prompt or field as text: a chat as its messages, a structure as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(m, dict) and "content" in m for m in value):
        return "\n\n".join(f"[{m.get('role', '?')}] {m['content']}" for m in value)
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _evaluation_text(evaluation: Any) -> str | None:
    """The evaluation beside its reading, where the reading does not already say it."""
    if evaluation is None or isinstance(evaluation, str | bool | int):
        return None
    if isinstance(evaluation, float):
        return f"{evaluation:.4g}"
    return _text(evaluation)


def _group_fields(run: Run) -> list[str]:
    """The fields of ``run``'s attempts shown as its groups: the ones its report filters by."""
    from biaslab.errors import BiaslabError
    from biaslab.probes import create_probe

    try:
        fields = list(create_probe(run.results.probe).example_fields())
    except (BiaslabError, TypeError):  # a probe this biaslab does not know: every field of its own
        fields = [k for k in run.rows[0] if k not in CORE]
    return category_fields(run.rows, fields)


def _labels(runs: list[Run]) -> list[str]:
    """A short, distinct name per run: its folder's name, with more of its path where two share one."""
    for depth in (1, 2):
        labels = ["/".join(r.path.resolve().parts[-depth:]) for r in runs]
        if len(set(labels)) == len(labels):
            return labels
    return [str(r.path.resolve()) for r in runs]


def transcript_data(runs: list[Run]) -> dict[str, Any]:
    """What the page embeds: the runs, the group and prompt tables, and one compact row per attempt (``r`` run,
    ``i`` item id, ``n`` [prompt index, repetition], ``p`` prompt (an index into ``prompts``), ``t`` answer,
    ``d`` reading, ``w`` why undetected, ``e`` evaluation, ``g`` groups (indices into ``groups``), ``x`` other
    fields)."""
    groups: dict[str, int] = {}
    prompts: dict[str, int] = {}
    out_rows = []
    for k, run in enumerate(runs):
        shown_as_group = _group_fields(run)
        for row in run.rows:
            ev = row.get("evaluation")
            prompt, text = _text(row.get("prompt", "")), str(row.get("text") or "")
            g = [groups.setdefault(f"{f}: {row[f]}", len(groups)) for f in shown_as_group]
            other = {f: _text(v) for f, v in row.items() if f not in CORE and f not in shown_as_group and v is not None}
            out_rows.append(
                {
                    "r": k,
                    "i": str(row["item_id"]),
                    "n": [row.get("prompt_index", 0), row.get("repetition", 0)],
                    "p": prompts.setdefault(prompt, len(prompts)),
                    "t": text,
                    "d": reading(ev),
                    "w": undetected_reason(row) if ev is None else None,
                    "e": _evaluation_text(ev),
                    "g": g,
                    "x": {f: v for f, v in other.items() if v not in (prompt, text)},  # not the texts again
                }
            )
    return {
        "runs": [
            {"label": label, "model": model_name(r.results, r.path), "probe": r.results.probe, "n": len(r.rows)}
            for label, r in zip(_labels(runs), runs, strict=True)
        ],
        "groups": list(groups),
        "prompts": list(prompts),
        "page_size": PAGE_SIZE,
        "rows": out_rows,
    }


def embedded_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` block: no ``<``, ``>`` or ``&`` as themselves."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _script() -> str:
    return files("biaslab.report").joinpath("templates").joinpath("transcripts.js").read_text(encoding="utf-8")


def csp(script: str) -> str:
    """The page's Content-Security-Policy: its one script (by hash), inline styles, nothing from anywhere."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def render_transcripts(runs: list[Run]) -> str:
    from jinja2 import Environment, PackageLoader

    env = Environment(loader=PackageLoader("biaslab.report", "templates"), autoescape=True)
    data = transcript_data(runs)
    script = _script()
    probes = sorted({r.results.probe for r in runs})
    return env.get_template("transcripts.html.j2").render(
        csp=csp(script),
        css=CSS,
        script=script,
        data_json=embedded_json(data),
        title=f"Transcripts: {', '.join(probes)}",
        n_runs=len(runs),
        n_attempts=len(data["rows"]),
    )


def write_transcripts(run_dirs: list[Path], out: Path | None = None) -> Path:
    """Write the page of ``run_dirs`` to ``out`` (default: transcripts.html in the first run's folder)."""
    if not run_dirs:
        raise ConfigError("give at least one run folder: biaslab view RUN_DIR [RUN_DIR ...]")
    runs: list[Run] = []
    seen: set[Path] = set()
    for d in run_dirs:
        run = load_run(Path(d))
        if run.path.resolve() not in seen:  # the same run twice is shown once
            seen.add(run.path.resolve())
            runs.append(run)
    path = Path(out) if out is not None else runs[0].path / DEFAULT_NAME
    write_output(path, render_transcripts(runs), "--out")
    return path
