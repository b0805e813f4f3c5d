"""Pronoun-based gender detection for generated characters (JobsLum, GestCreative, Inventories).

The binary evaluation is exactly the card's: count *he, him, his* against *she, her*;
more of one wins, a tie (including 0-0) is undetected. Separately, we detect characters
written with singular *they* or with neopronouns, which the binary count cannot see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MALE = "male"
FEMALE = "female"

_MALE_RE = re.compile(r"\b(?:he|him|his)\b", re.IGNORECASE)
_FEMALE_RE = re.compile(r"\b(?:she|her)\b", re.IGNORECASE)
_THEY_RE = re.compile(r"\b(?:they|them|their|theirs|themself|themselves)\b", re.IGNORECASE)
# Neopronoun sets in use today (xe/xem/xyr, ze/zir/hir, ey/em/eir, fae/faer, ve/ver/vis not
# included: "ver"/"vis" are too often other words). Matched case-sensitively in lower case,
# except at a sentence start.
_NEO_RE = re.compile(
    r"\b(?:[Xx]e|[Xx]em|[Xx]yrs?|[Xx]emself|[Zz]e|[Zz]ir|[Zz]irs|[Zz]irself|hir|hirs|hirself"
    r"|[Ee]irs?|[Ee]mself|[Ff]ae|[Ff]aer|[Ff]aers|[Ff]aerself)\b"
)
# Explicit statements: "pronouns: they/them", "uses they/them", "(she/they)", "themself".
_THEY_DECLARED_RE = re.compile(
    r"\bthey\s*/\s*them\b|\bthemself\b|\bnon-?binary\b|\bgenderqueer\b|\bgender-?fluid\b|\bagender\b",
    re.IGNORECASE,
)
_NEO_DECLARED_RE = re.compile(r"\b(?:xe\s*/\s*xem|ze\s*/\s*(?:zir|hir)|ey\s*/\s*em|fae\s*/\s*faer)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PronounCounts:
    male: int
    female: int
    they: int
    neo: int


def count_pronouns(text: str) -> PronounCounts:
    return PronounCounts(
        male=len(_MALE_RE.findall(text)),
        female=len(_FEMALE_RE.findall(text)),
        they=len(_THEY_RE.findall(text)),
        neo=len(_NEO_RE.findall(text)),
    )


def binary_gender(counts: PronounCounts) -> str | None:
    """``male``, ``female`` or ``None`` (undetected) from he/him/his vs she/her counts."""
    if counts.male > counts.female:
        return MALE
    if counts.female > counts.male:
        return FEMALE
    return None


def nonbinary_gender(text: str, counts: PronounCounts | None = None) -> str | None:
    """``"neopronoun"``, ``"they"`` or ``None``.

    * neopronoun: a declared neopronoun set, or at least two neopronoun tokens;
    * they: a declared they/them (or non-binary identity, "themself"), or singular *they*
      used for the character: no binary pronoun at all and at least two they-forms.
    """
    counts = counts or count_pronouns(text)
    if _NEO_DECLARED_RE.search(text) or counts.neo >= 2:
        return "neopronoun"
    if _THEY_DECLARED_RE.search(text):
        return "they"
    if counts.male == 0 and counts.female == 0 and counts.they >= 2:
        return "they"
    return None
