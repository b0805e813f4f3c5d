"""Reading KoBBQ: the test samples and the 5 Korean prompt wordings (Jin et al., TACL 2024).

``benchmarks/kobbq/KoBBQ_test_samples.tsv`` holds one sample a line: ``sample_id`` (``{category}-{template}{a|b|c|d}-
{sample}-{amb|dis}-{bsd|cnt}``: a/c contexts go against the stereotype, b/d follow it; ``amb`` ambiguous, ``dis``
disambiguated; ``bsd`` the biased question, ``cnt`` the counter-biased one), ``label_annotation`` (ST simply
transferred from BBQ, TM target-modified, SR sample-removed, NC newly created), ``context``, ``question``, ``choices``
(a Python list literal of 3 strings, one of them the unknown option ``알 수 없음``, read with
:func:`ast.literal_eval`), ``biased_answer`` and ``answer`` (each one of the choices).

``benchmarks/kobbq/0_evaluation_prompts.tsv`` holds the wordings: an instruction, the labels put before the
context, the question and the three options, the answer cue and the wording's own text for the unknown option.
A prompt is built as the authors' preprocessing builds it: the instruction, a blank line, then each labelled part
on its own line; the unknown option is shown in the wording's text. Every sample is asked with its options in the
3 cyclic orders the authors use (permutation ``k`` shows the original choice ``(k - j) mod 3`` at position ``j``).
"""

from __future__ import annotations

import ast
import csv
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from biaslab.data.registry import data_path
from biaslab.errors import DataError

SAMPLES = "benchmarks/kobbq/KoBBQ_test_samples.tsv"
TEMPLATES = "benchmarks/kobbq/KoBBQ_templates.tsv"
PROMPTS = "benchmarks/kobbq/0_evaluation_prompts.tsv"
UNKNOWN = "알 수 없음"  # the unknown option as the samples write it
LABELS = ("ST", "TM", "SR", "NC")
_SAMPLE_ID = re.compile(r"^(?P<category>[a-z_]+)-(?P<template>\d+)(?P<context>[abcd])-(?P<sample>\d+)-(?P<amb>amb|dis)-"
                        r"(?P<question>bsd|cnt)$")  # fmt: skip
_LETTER = re.compile(r"([A-Ca-c])\W*$")


@dataclass
class KobbqSample:
    sample_id: str
    category: str
    template: str  # "<category>-<template number>": the cluster of the intervals
    label_annotation: str
    context_condition: str  # "amb" / "dis"
    context_type: str  # "amb", "dis-biased" (b/d contexts) or "dis-counterb" (a/c contexts)
    question_type: str  # "bsd" / "cnt"
    context: str
    question: str
    choices: list[str]
    answer: int  # index into choices
    biased_answer: int
    unknown_answer: int


@dataclass(frozen=True)
class Wording:
    """One of the 5 prompt wordings."""

    prompt_id: int
    instruction: str
    context_label: str
    question_label: str
    option_labels: tuple[str, str, str]
    answer_cue: str
    unknown: str  # the unknown option's text in this wording

    @property
    def letters(self) -> tuple[str, str, str]:
        """The option letters as the wording writes them ("A", "B", "C" or "a", "b", "c")."""
        out = []
        for label in self.option_labels:
            m = _LETTER.search(label.strip())
            if not m:
                raise DataError(f"{PROMPTS}: prompt {self.prompt_id}'s option label {label!r} holds no letter")
            out.append(m.group(1))
        return out[0], out[1], out[2]

    def shown(self, choices: list[str]) -> list[str]:
        """The choices as the wording shows them (the unknown option in its own text)."""
        return [self.unknown if c == UNKNOWN else c for c in choices]

    def render(self, context: str, question: str, options: list[str]) -> str:
        a, b, c = self.option_labels
        return (f"{self.instruction}\n\n{self.context_label}{context}\n{self.question_label}{question}\n"
                f"{a}{options[0]}\n{b}{options[1]}\n{c}{options[2]}\n{self.answer_cue}")  # fmt: skip


def rotation(k: int) -> list[int]:
    """The original choice shown at each position in permutation ``k`` (the authors' circulant order)."""
    return [(k - j) % 3 for j in range(3)]


def _read_tsv(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
        return list(reader)


def parse_choices(text: str, where: str) -> list[str]:
    """The ``choices`` cell: a Python list literal of 3 distinct strings (never evaluated as code)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise DataError(f"{where}: choices {text!r} is not a Python list literal") from None
    if not isinstance(value, list) or len(value) != 3 or not all(isinstance(c, str) for c in value):
        raise DataError(f"{where}: choices must be a list of 3 strings, got {text!r}")
    if len(set(value)) != 3 or value.count(UNKNOWN) != 1:
        raise DataError(f"{where}: choices must be 3 distinct strings, one of them {UNKNOWN!r}; got {text!r}")
    return value


def parse_sample(row: dict[str, str], where: str) -> KobbqSample:
    m = _SAMPLE_ID.match(row["sample_id"].strip())
    if not m:
        raise DataError(f"{where}: sample_id {row['sample_id']!r} is not {{category}}-{{template}}{{a|b|c|d}}-"
                        "{sample}-{amb|dis}-{bsd|cnt}")  # fmt: skip
    choices = parse_choices(row["choices"], where)
    for col in ("answer", "biased_answer"):
        if row[col] not in choices:
            raise DataError(f"{where}: {col} {row[col]!r} is not one of the choices {choices}")
    label = row["label_annotation"].strip()
    if label not in LABELS:
        raise DataError(f"{where}: label_annotation {label!r} is not one of {', '.join(LABELS)}")
    amb = m["amb"]
    return KobbqSample(
        sample_id=row["sample_id"].strip(),
        category=m["category"],
        template=f"{m['category']}-{m['template']}",
        label_annotation=label,
        context_condition=amb,
        context_type="amb" if amb == "amb" else ("dis-biased" if m["context"] in "bd" else "dis-counterb"),
        question_type=m["question"],
        context=row["context"],
        question=row["question"],
        choices=choices,
        answer=choices.index(row["answer"]),
        biased_answer=choices.index(row["biased_answer"]),
        unknown_answer=choices.index(UNKNOWN),
    )


def read_samples(path: Path) -> list[KobbqSample]:
    """The samples of ``path`` (read once per process while the file is unchanged; do not modify them)."""
    stat = path.stat()
    return list(_read_samples(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=2)
def _read_samples(path: str, mtime_ns: int, size: int) -> tuple[KobbqSample, ...]:
    cols = ("sample_id", "label_annotation", "context", "question", "choices", "biased_answer", "answer")
    rows = _read_tsv(Path(path), cols)
    return tuple(parse_sample(row, f"{path}, line {n}") for n, row in enumerate(rows, start=2))


def read_wordings(path: Path) -> dict[int, Wording]:
    cols = ("prompt_id", "instruction", "context", "question", "a", "b", "c", "answer", "unknown")
    out = {}
    for row in _read_tsv(path, cols):
        w = Wording(int(row["prompt_id"]), row["instruction"], row["context"], row["question"],
                    (row["a"], row["b"], row["c"]), row["answer"], row["unknown"])  # fmt: skip
        w.letters  # noqa: B018 -- checked when read
        out[w.prompt_id] = w
    return out


def load() -> tuple[list[KobbqSample], dict[int, Wording]]:
    return read_samples(data_path(SAMPLES)), read_wordings(data_path(PROMPTS))
