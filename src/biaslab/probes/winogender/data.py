"""Reading Winogender: 720 sentences grouped into 240 sets (occupation x participant x answer),
each with a female, a male and a neutral pronoun; and the occupations' % female in BLS 2015 and in
Bergsma & Lin's (2006) text statistics (``occupations-stats.tsv``: ``bls_pct_female``,
``bergsma_pct_female``)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from biaslab.errors import DataError

GENDERS = ("female", "male", "neutral")


@dataclass
class SentenceSet:
    occupation: str
    participant: str  # the other participant, or "someone"
    answer: str  # "0": the pronoun refers to the occupation, "1": to the participant
    sentences: dict[str, str] = field(default_factory=dict)  # gender -> sentence

    @property
    def id(self) -> str:
        return f"{self.occupation}.{self.participant}.{self.answer}"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def read_sentences(path: Path) -> list[SentenceSet]:
    sets: dict[str, SentenceSet] = {}
    for n, row in enumerate(_rows(path), start=2):
        sentid, sentence = (row.get("sentid") or "").strip(), (row.get("sentence") or "").strip()
        parts = sentid.split(".")
        if len(parts) != 5 or parts[3] not in GENDERS or not sentence:
            raise DataError(
                f"{path}, row {n}: expected sentid OCCUPATION.PARTICIPANT.ANSWER.GENDER.txt and a "
                f"sentence, got {sentid!r}"
            )
        key = ".".join(parts[:3])
        s = sets.setdefault(key, SentenceSet(parts[0], parts[1], parts[2]))
        s.sentences[parts[3]] = sentence
    incomplete = [k for k, s in sets.items() if set(s.sentences) != set(GENDERS)]
    if incomplete:
        raise DataError(f"{path}: sentence set {incomplete[0]} lacks a {'/'.join(GENDERS)} sentence")
    return list(sets.values())


def read_stats(path: Path, column: str) -> dict[str, float]:
    """``{occupation: % female}`` from one column of ``occupations-stats.tsv``."""
    out = {}
    for n, row in enumerate(_rows(path), start=2):
        try:
            out[(row.get("occupation") or "").strip()] = float(row[column])
        except (KeyError, TypeError, ValueError):
            raise DataError(f"{path}, row {n}: {column} must be a number") from None
    return out


def read_bls(path: Path) -> dict[str, float]:
    return read_stats(path, "bls_pct_female")


def read_bergsma(path: Path) -> dict[str, float]:
    return read_stats(path, "bergsma_pct_female")
