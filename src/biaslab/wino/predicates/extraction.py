"""LLM-assisted predicate extraction with the paper's prompt and ``<PREV>`` iteration.

For each survey answer the model is asked repeatedly; each call shows the predicates it already
gave for that answer ("Previously Extracted"), "None" on the first call. How many calls:

* ``human`` -- as many as the humans extracted from that answer (the paper's setting, which tells
  the model how many stereotypes there are); answers without human predicates are skipped, as in
  the paper;
* ``N`` -- a fixed number per answer;
* ``until-none`` -- until the model answers NONE, repeats itself or reaches ``max_per_response``
  (the realistic setting: nobody tells the model how many there are). This mode adds one line to
  the prompt saying that NONE is an allowed answer.

Calls go through the response cache (one round of requests per iteration, every still-active
answer in one batch), so a killed run resumes and a finished run re-runs with no model call.
Every request's sampling seed derives from ``--seed``, the answer's id and the iteration.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.base import GenerateRequest, GenerationParams
from biaslab.probing.core import derive_seed
from biaslab.wino.predicates.flags import normalise
from biaslab.wino.predicates.formats import PredicateRow, SurveyAnswer

PROMPT = (
    "From the following sentence, extract a statement of one discrete stereotype about <IDENTITY NOUN>. \n"
    "Stereotypes should be in the form of a predicate that would fit in the sentence "
    "'All <IDENTITY NOUN> <predicate>.' \n"
    "The predicate should start with a verb and SHOULD NOT inlcude individual characters separated by commas.\n"
    "Do not respond with a full sentence.\n"
    "There may be multiple stereotypes in the sentence, so extract one that is not already in the list.\n"
    "\n"
    "Sentence: <SENTENCE>\n"
    "\n"
    "Previously Extracted: <PREV>\n"
    "\n"
    "Predicate: "
)
NONE_LINE = "If every stereotype in the sentence is already in the list, answer NONE.\n"
TEMPERATURE = 0.3
MAX_TOKENS = 40
MODES = ("human", "until-none")
_LABEL = re.compile(r"^\s*(?:predicate|answer|stereotype)\s*:\s*", re.IGNORECASE)
_QUOTES = "\"'`\u201c\u201d\u2018\u2019*"


def build_prompt(identity_noun: str, sentence: str, previous: Sequence[str], *, until_none: bool = False) -> str:
    template = PROMPT
    if until_none:
        template = template.replace("not already in the list.\n", "not already in the list.\n" + NONE_LINE, 1)
    prev = ", ".join(previous) if previous else "None"
    return template.replace("<IDENTITY NOUN>", identity_noun).replace("<SENTENCE>", sentence).replace("<PREV>", prev)


def clean_answer(text: str) -> str:
    """The predicate in a model answer: its first non-empty line, without a "Predicate:" label,
    list bullet or surrounding quotes. Nothing else is changed (final periods stay: exact match
    ignores them, and the flags look at the text as the model gave it)."""
    for line in text.splitlines():
        line = _LABEL.sub("", line.strip())
        line = re.sub(r"^(?:[-*\u2022]|\d+[.)])\s+", "", line)
        line = line.strip().strip(_QUOTES).strip()
        if line:
            return line
    return ""


def is_none(predicate: str) -> bool:
    words = normalise(predicate).split()
    return not words or (words[0] == "none" and len(words) <= 3) or words[:2] == ["no", "stereotype"]


def parse_mode(value: str) -> tuple[str, int | None]:
    """``--per-response`` -> ``("human", None)``, ``("fixed", N)`` or ``("until-none", None)``."""
    v = value.strip().lower()
    if v in MODES:
        return v, None
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        raise ConfigError(f"--per-response must be human, until-none or a whole number >= 1, got {value!r}")
    return "fixed", n


@dataclass
class Extracted:
    response_id: str
    group: str
    predicate: str
    iteration: int
    raw_answer: str
    truncated: bool

    def as_row(self) -> PredicateRow:
        return PredicateRow(self.response_id, self.group, self.predicate, self.iteration)


@dataclass
class ExtractionRun:
    rows: list[Extracted]
    stops: dict[str, int]  # why answers stopped: count, none, repeat, limit
    skipped: list[str]  # answers without human predicates (human mode)


Progress = Callable[[int, Any, bool], None]


def plan(
    survey: Sequence[SurveyAnswer], mode: str, n: int | None, human_counts: dict[str, int] | None, max_per_response: int
) -> tuple[dict[str, int], list[str]]:
    """How many calls each answer gets at most, and the answers skipped."""
    if mode == "human":
        if human_counts is None:
            raise ConfigError(
                "--per-response human needs --human FILE (the human predicates, to count them per answer)"
            )
        limits = {a.response_id: human_counts.get(a.response_id, 0) for a in survey}
        return {k: v for k, v in limits.items() if v > 0}, [k for k, v in limits.items() if v == 0]
    if mode == "fixed":
        return {a.response_id: int(n or 1) for a in survey}, []
    if max_per_response < 1:
        raise ConfigError(f"--max-per-response must be >= 1, got {max_per_response}")
    return {a.response_id: max_per_response for a in survey}, []


def extract(
    survey: Sequence[SurveyAnswer],
    model: Any,
    limits: dict[str, int],
    *,
    until_none: bool,
    seed: int = 0,
    params: GenerationParams | None = None,
    progress: Progress | None = None,
    on_stop: Callable[[int], None] | None = None,
) -> ExtractionRun:
    """Run the iteration; ``model`` is a :class:`~biaslab.models.cache.CachedModel`."""
    params = params or GenerationParams(temperature=TEMPERATURE, max_tokens=MAX_TOKENS)
    answers = [a for a in survey if a.response_id in limits]
    previous: dict[str, list[str]] = {a.response_id: [] for a in answers}
    rows: list[Extracted] = []
    stops = {"count": 0, "none": 0, "repeat": 0, "limit": 0}
    active = list(answers)
    iteration = 0
    done = 0
    while active:
        iteration += 1
        requests = [
            GenerateRequest.chat(
                build_prompt(a.identity_noun, a.text, previous[a.response_id], until_none=until_none),
                params=replace(params, seed=derive_seed(seed, "extract-predicates", a.response_id, iteration)),
            )
            for a in active
        ]

        def report(i: int, result: Any, hit: bool, _base: int = done) -> None:
            if progress:
                progress(_base + i, result, hit)

        results = model.generate(requests, progress=report)
        done += len(requests)
        still = []
        for a, res in zip(active, results):
            pred = clean_answer(res.text)
            prev = previous[a.response_id]
            if until_none and (is_none(pred) or normalise(pred) in {normalise(p) for p in prev}):
                stops["none" if is_none(pred) else "repeat"] += 1
                if on_stop:
                    on_stop(limits[a.response_id] - iteration)
                continue
            truncated = res.finish_reason == "length" and "\n" not in res.text.strip()
            rows.append(Extracted(a.response_id, a.group, pred, iteration, res.text, truncated))
            prev.append(pred)
            if iteration >= limits[a.response_id]:
                stops["limit" if until_none else "count"] += 1
            else:
                still.append(a)
        active = still
    return ExtractionRun(rows, stops, [])
