"""From collected hits to the :class:`Extraction` of one answer (the last step of the extractor).

Drops prose that contradicts a medal list, gives ungendered results the gender a later
sentence or a lone gender word assigns them, keeps the latest correction of each slot and
sorts the codes into the groups of the prompt ("x", or "u" / "f" / "m").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from biaslab.probes.olympics import nocs
from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.context import Hit
from biaslab.probes.olympics.extract.cues import MEDALS


@dataclass
class Extraction:
    medals: dict[str, dict[str, list[str]]]
    status: str = "accepted"
    flags: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    refusal: bool = False

    def triples(self) -> set[tuple[str, str, str]]:
        return {(g, m, c) for g, d in self.medals.items() for m, cs in d.items() for c in cs}


NEGATED_GENDER = re.compile(
    r"\b(?:no|not|n't|never|also|separate(?:ly)?|introduced|added|both|each|either|neither|information)\b", re.I
)


def _drop_conflicting_prose(hits: list[Hit], flags: list[str]) -> list[Hit]:
    """Prose after a medal list that gives a slot another country ("Canada secured the gold" after
    "Gold: United States") is commentary: the list is what the answer states."""
    listed = [h for h in hits if h.listed]
    if not listed:
        return hits
    first = min(h.pos for h in listed)
    keep = []
    for h in hits:
        if not h.listed and h.pos > first and not h.tie_words:
            same_slot = [x for x in listed if x.medal == h.medal and x.epoch == h.epoch and x.genders == h.genders]
            if same_slot and h.code not in {x.code for x in same_slot}:
                if "conflicting-results" not in flags:
                    flags.append("conflicting-results")
                continue
        keep.append(h)
    return keep


# "These are the results of the men's tournament": a sentence pointing back at the results above
_REFER_BACK = re.compile(
    r"\b(?:these|those|the above|above|the preceding|the listed)\b[^.\n]{0,40}?"
    r"\b(?:results?|medals?|medall?ists|medal winners|winners|standings|podium|placings)\b",
    re.I,
)
_REFER_BACK_END = re.compile(r";|,?\s(?:while|whereas|but)\s", re.I)
_SEPARATE_RESULT = re.compile(r"\b(?:also|as well|too)\b", re.I)


def _sentence_at(t: str, pos: int) -> str:
    a = max(t.rfind(". ", 0, pos) + 1, t.rfind("\n", 0, pos) + 1)
    m = re.search(r"[.!?](?:\s|$)|\n", t[pos:])
    return t[a : pos + m.start() if m else len(t)]


def _refer_back(t: str, hits: list[Hit], genders, lines: list[tx.Line]) -> None:
    """Ungendered results followed by a sentence that says whose they are get that gender."""
    if not any(not h.genders for h in hits) or not _REFER_BACK.search(t):
        return
    for a, b in (sent for line in lines for sent in line.sentences):
        m = _REFER_BACK.search(t, a, b)
        if not m:
            continue
        # the clause that points back: "These medals were awarded in the women's event; in the men's ..."
        cut = _REFER_BACK_END.search(t, m.end(), b)
        b = cut.start() if cut else b
        s = t[a:b]
        if NEGATED_GENDER.search(s) or any(a <= h.pos < b for h in hits):
            continue
        gs = frozenset(g for p, g in genders if a <= p < b)
        if len(gs) != 1:
            continue
        for h in hits:
            if h.pos < a and not h.genders:
                h.genders = gs


def assemble(t, hits, genders, stated, specified, flags, unmapped, status, lines) -> Extraction:
    hits = [h for h in hits if h.epoch >= 0]
    hits = _drop_conflicting_prose(hits, flags)
    _refer_back(t, hits, genders, lines)
    if not specified and any(not h.genders for h in hits) and not any(h.from_section for h in hits):
        # nothing says whose results these are, but a lone gender word elsewhere does ("The men's
        # final took place on ...", or a sentence restating a listed result: "The U.S. women's team
        # victory was notable")
        gs: set[str] = set()
        for a, b in tx.split_sentences(t, 0, len(t)):
            s = t[a:b]
            if not NEGATED_GENDER.search(s) and not any(h.genders and a <= h.pos < b for h in hits):
                gs.update(g for p, g in genders if a <= p < b)
        plain = {(h.medal, h.code) for h in hits if not h.genders}
        for h in hits:
            if h.genders:
                if (h.medal, h.code) not in plain or _SEPARATE_RESULT.search(_sentence_at(t, h.pos)):
                    # a separate result with its own gender ("Canada also won the women's
                    # tournament"): leave the rest alone
                    gs = set("mf")
                    break
                gs.update(h.genders)
        if len(gs) == 1:
            for h in hits:
                h.genders = frozenset(gs)
    groups = ("x",) if specified else ("u", "f", "m")
    medals: dict[str, dict[str, list[str]]] = {g: {m: [] for m in MEDALS} for g in groups}
    last_epoch: dict[tuple[str, str], int] = {}
    placed: list[tuple[str, str, str, int]] = []
    for h in hits:
        if specified:
            if stated and h.genders and stated not in h.genders:
                if "other-gender-results" not in flags:
                    flags.append("other-gender-results")
                continue
            targets = ["x"]
        else:
            targets = sorted(h.genders) if h.genders else ["u"]
        for g in targets:
            placed.append((g, h.medal, h.code, h.epoch))
            last_epoch[(g, h.medal)] = max(last_epoch.get((g, h.medal), -1), h.epoch)
    for g, medal, code, ep in placed:
        if ep == last_epoch[(g, medal)] and code not in medals[g][medal]:
            medals[g][medal].append(code)
    for d in medals.values():
        for medal, codes in d.items():
            # "Russia" next to "ROC" for the same medal: the specific team wins
            parents = {p for c in codes for p in nocs.SPECIAL_FOR.get(c, ())}
            d[medal] = [c for c in codes if c not in parents]
    n = sum(len(v) for d in medals.values() for v in d.values())
    refusal = n == 0 and bool(tx.REFUSAL_RE.search(t))
    return Extraction(medals, status, flags, unmapped, refusal)
