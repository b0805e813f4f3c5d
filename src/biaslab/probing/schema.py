"""The result files, typed: ``results.json`` is a :class:`RunResults`, each line of ``attempts.jsonl`` an
:class:`AttemptRecord`. Both are validated when written and when read; ``biaslab schema results`` and
``biaslab schema attempts`` print their JSON Schema for other tools.

Schema version 2 (this one) keeps a probe's own results (tables, counts, notes) under ``details``; version
1 kept them at the top level and is read as version 2 (:func:`upgrade`), so every earlier run still loads.
A metric is ``{"value", "ci_low", "ci_high", "n", ...}``; the keys a probe adds to a metric (``p``, ``q``,
counts) are kept, in the order the probe wrote them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_serializer, model_validator

from biaslab.errors import DataError

SCHEMA_VERSION = 2
Number = int | float


class Metric(BaseModel):
    """One metric of a run: its value, 95% interval and the units it is over; further keys are allowed."""

    model_config = ConfigDict(extra="allow")

    value: Number | None = Field(None, description="The metric (null: not defined on this run).")
    ci_low: Number | None = Field(None, description="Lower end of the 95% interval (null: no interval).")
    ci_high: Number | None = Field(None, description="Upper end of the 95% interval.")
    n: int | None = Field(None, description="The units the interval is over (items, pairs, clusters).")
    p: Number | None = Field(None, description="p value of the metric's test against its unbiased value.")
    q: Number | None = Field(None, description="Benjamini-Hochberg q value within the metric's family.")
    interval: str | None = Field(
        None, description="How the interval was made when not by the bootstrap, e.g. clopper-pearson."
    )
    too_small: bool | None = Field(None, description="Too few units to interpret: no interval.")
    degenerate: bool | None = Field(None, description="The bootstrap could not tell the spread: no interval.")
    reason: str | None = Field(None, description="Why the metric or its interval is missing.")
    range: list[Number] | None = Field(
        None,
        min_length=2,
        max_length=2,
        description="[low, high]: the values a bounded metric can take; its interval lies within them.",
    )
    _order: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: Any) -> Metric:
        metric = handler(data)
        if isinstance(data, dict):
            metric._order = list(data)
        return metric

    @model_serializer(mode="wrap")
    def _in_order(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        written = self.model_fields_set | set(self.model_extra or {})  # the keys the probe gave, no defaults
        keys = [k for k in self._order if k in out] + [k for k in out if k not in self._order]
        return {k: out[k] for k in keys if k in written}


class RunStats(BaseModel):
    """How the run went: cache hits, model calls, time."""

    model_config = ConfigDict(extra="allow")

    cache_hits: int = 0
    model_calls: int = 0
    seconds: float | None = None
    new_tokens: int | None = None
    requests: int | None = None
    retries: int | None = None  # a server's faults retried (None: the backend calls no server)
    retry_causes: dict[str, int] | None = None  # those retries by cause: {"HTTP 429": 2, "timeout": 1}
    recheck: dict[str, Any] | None = None
    system_prompt_requests: int | None = None  # the requests that carried --system-prompt (None: none given)

    @model_serializer(mode="wrap")
    def _without_nulls(self, handler: Any) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class RunResults(BaseModel):
    """results.json of one run of one probe on one model."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    probe: str
    probe_version: str = "1"
    model: dict[str, Any] = Field(default_factory=dict, description="The model's identity (backend, model, ...).")
    parameters: dict[str, Any] = Field(default_factory=dict, description="The run's settings.")
    data: dict[str, str] = Field(default_factory=dict, description="sha256 of each data file read.")
    biaslab_version: str = Field("", description="The biaslab that wrote the file.")
    metrics: dict[str, Metric]
    n_items: int = 0
    n_attempts: int = 0
    run: RunStats = Field(default_factory=RunStats)
    manifest: dict[str, Any] = Field(
        default_factory=dict, description="command, created_at, library versions, decoding parameters"
    )
    details: dict[str, Any] = Field(default_factory=dict, description="The probe's own further results.")

    def metric(self, name: str) -> dict[str, Any]:
        """A metric as a plain dict (empty when the run has no such metric)."""
        m = self.metrics.get(name)
        return m.model_dump(mode="json") if m is not None else {}

    @property
    def recorded_attempts(self) -> int | None:
        """``n_attempts`` as the file records it (None when it does not: the attempts then go unchecked)."""
        return self.n_attempts if "n_attempts" in self.model_fields_set else None

    def metric_dicts(self) -> dict[str, dict[str, Any]]:
        return {k: v.model_dump(mode="json") for k, v in self.metrics.items()}

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class AttemptRecord(BaseModel):
    """One line of attempts.jsonl: one answer to one prompt and the probe's evaluation of it. A probe adds
    its own fields (the item's metadata and its evaluator's outputs) beside these."""

    model_config = ConfigDict(extra="allow")

    item_id: str
    prompt_index: int = 0
    repetition: int = 0
    seed: int | None = None
    prompt: Any = Field("", description="The prompt's text (or, for chat probes, its messages).")
    text: str = ""
    evaluation: Any = Field(None, description="The probe's evaluation; null: undetected.")
    n_new_tokens: int | None = None
    finish_reason: str | None = None


TOP_LEVEL = set(RunResults.model_fields)


def upgrade(raw: dict[str, Any]) -> dict[str, Any]:
    """A results.json of schema version 1 as version 2: the probe's own top-level keys move to ``details``."""
    if raw.get("schema_version") != 1:
        return raw
    out = {k: v for k, v in raw.items() if k in TOP_LEVEL}
    out["details"] = {k: v for k, v in raw.items() if k not in TOP_LEVEL}
    out["schema_version"] = SCHEMA_VERSION
    return out


def validate_results(raw: dict[str, Any], where: str = "results") -> RunResults:
    """``raw`` (version 1 or 2) as :class:`RunResults`; a one-line :class:`DataError` when it does not fit."""
    version = raw.get("schema_version")
    if version not in (1, SCHEMA_VERSION):
        raise DataError(f"{where} has schema_version {version!r}; this biaslab reads 1 and {SCHEMA_VERSION}")
    try:
        return RunResults.model_validate(upgrade(raw))
    except ValidationError as exc:
        raise DataError(f"{where} does not fit the results schema: {_first_error(exc)}") from None


def validate_attempt(row: dict[str, Any], where: str = "attempt") -> None:
    try:
        AttemptRecord.model_validate(row)
    except ValidationError as exc:
        raise DataError(f"{where} does not fit the attempts schema: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{loc}: {err['msg']}"


def read_results(path: Path) -> RunResults:
    """results.json of a run directory (or the file itself), validated (:func:`biaslab.probing.results.read_results`
    also makes the probe of a run of a file probe known)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    text = read_run_file(path, "results.json", "pass a run directory written by `biaslab run`")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON (line {exc.lineno}); re-run the probe to rewrite it") from None
    if not isinstance(raw, dict):
        raise DataError(f"{path} is not a results object; pass a run directory written by `biaslab run`")
    return validate_results(raw, str(path))


def read_attempts(run_dir: Path, n_attempts: int | None = None) -> list[dict[str, Any]] | None:
    """The rows of a run's attempts.jsonl, validated (None when the run has none): each a JSON object of the
    attempts schema, no attempt (item, prompt, repetition) twice, and, given the run's ``n_attempts`` (from its
    results.json), as many rows as that. Lines end at a newline only (an answer may hold other line breaks)."""
    path = Path(run_dir) / "attempts.jsonl"
    if not path.exists():
        return None
    rewrite = "re-run the probe to rewrite it"
    text = read_run_file(path, "attempts.jsonl", rewrite)
    rows = []
    first_line: dict[tuple[str, Any, Any], int] = {}
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise DataError(f"{path}, line {n} is not valid JSON; {rewrite}") from None
        validate_attempt(row, f"{path}, line {n}")
        key = (str(row["item_id"]), row.get("prompt_index", 0), row.get("repetition", 0))
        if key in first_line:
            raise DataError(
                f"{path}, line {n}: the attempt of item {key[0]!r}, prompt {key[1]}, repetition {key[2]} is also on "
                f"line {first_line[key]}; the file is damaged: {rewrite}"
            )
        first_line[key] = n
        rows.append(row)
    if n_attempts is not None and len(rows) != n_attempts:
        raise DataError(
            f"{path} holds {len(rows)} attempts but results.json records {n_attempts}; the run folder is "
            f"incomplete or damaged: {rewrite}"
        )
    return rows


def read_run_file(path: Path, what: str, fix: str) -> str:
    """The UTF-8 text of a run's (or a suite's) file ``path``, its role in the folder ``what``; a one-line DataError
    naming it and ending in ``fix`` when it is missing, a directory, unreadable or not UTF-8."""
    from biaslab.io import read_utf8

    return read_utf8(path, what=f"the run's {what}", fix=fix)


def json_schema(which: str) -> dict[str, Any]:
    """The JSON Schema of ``results`` (results.json) or ``attempts`` (a line of attempts.jsonl)."""
    models: dict[str, type[BaseModel]] = {"results": RunResults, "attempts": AttemptRecord}
    if which not in models:
        from biaslab.errors import ConfigError

        raise ConfigError(f"unknown schema {which!r}; choose results or attempts")
    schema = models[which].model_json_schema()
    schema["$id"] = f"https://biaslab/schema/{which}/v{SCHEMA_VERSION}"
    return schema
