"""The cues of a sentence that pairing reads: medal words (:func:`medal_cues`), the weak cues of a winner
("won by", "the podium was": :func:`weak_cues`) and gender words (:func:`gender_spans`); a :class:`Pair` of a
country mention and a medal; runs of items that form a list ("X, Y and Z", "gold, silver and bronze")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.countries import Mention

MEDALS = ("g", "s", "b")


@dataclass
class Cue:
    start: int
    end: int
    medal: str
    weak: bool = False
    rank: bool = False  # "the podium was ...": only orders a list of countries


@dataclass
class Pair:
    mention: Mention
    medal: str
    gender: frozenset[str]  # {"m"}, {"f"}, both, or empty (unknown here)
    how: str  # "clause", "zip", "rank", "followed", "relative", "leftover"


RUN_GAP = re.compile(r"[\s,*]*(?:(?:and|&|as well as|plus|or)\s+)?(?:the\s+)?[\s*]*", re.I)
MEDAL_RUN_GAP = re.compile(r"(?:[\s,/*-]|\band\b|&|\bor\b|\bthe\b|\bmedals?\b)*", re.I)
_SAME_CUE_GAP = re.compile(r"[\s*(]*(?:medal)?[\s*:)-]*", re.I)


def medal_cues(text: str) -> list[Cue]:
    out: list[Cue] = []
    for m in tx.MEDAL_RE.finditer(text):
        if m.group("g") or m.group("g2"):
            med = "g"
        elif m.group("s") or m.group("s2") or m.group("s3"):
            med = "s"
        else:
            med = "b"
        prev = out[-1] if out else None
        if prev is not None and prev.medal == med and _SAME_CUE_GAP.fullmatch(text, prev.end, m.start()):
            prev.end = m.end()  # "🥇 Gold", "Gold (1st)" name one medal
            continue
        out.append(Cue(m.start(), m.end(), med))
    return out


def weak_cues(text: str) -> list[Cue]:
    out = [Cue(m.start(), m.end(), "g", True) for m in tx.WEAK_GOLD_RE.finditer(text)]
    out += [Cue(m.start(), m.end(), "g", True, True) for m in tx.RANK_CUE_RE.finditer(text)]
    return sorted(out, key=lambda c: c.start)


def gender_spans(text: str) -> list[tuple[int, str]]:
    out = [(m.start(), "m") for m in tx.MEN_RE.finditer(text)]
    out += [(m.start(), "f") for m in tx.WOMEN_RE.finditer(text)]
    out.sort()
    return out


def genders_in(genders: list[tuple[int, str]], a: int, b: int) -> frozenset[str]:
    return frozenset(g for p, g in genders if a <= p < b)


def list_runs(text: str, items: list, gap: re.Pattern[str], end_of) -> list[list]:
    runs: list[list] = []
    for it in items:
        if runs:
            prev = runs[-1][-1]
            e = end_of(prev)
            if e <= it.start and gap.fullmatch(text, e, it.start):
                runs[-1].append(it)
                continue
        runs.append([it])
    return runs


def mention_end(m: Mention) -> int:
    return max(m.end, m.paren_end)


def cue_end(c: Cue) -> int:
    return c.end
