"""Context helpers for the extractor: the prompt's event (to spot answers about another event),
hits collected while walking an answer, and results that changed after the games."""

from __future__ import annotations

import re
from dataclasses import dataclass

from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.countries import Mention

_BEACH_RE = re.compile(r"\bbeach\b|\boutdoors?\b|\bsand\b", re.I)
_STOP_WORDS = {"the", "and", "event", "team", "metres", "meters", "kilometres"}
_CLAUSE_END = re.compile(r"[,;]|\b(?:and|however|but)\b")


@dataclass
class Hit:
    genders: frozenset[str]
    medal: str
    code: str
    epoch: int
    pos: int = 0
    listed: bool = False  # from a list item / "Gold: X" line rather than prose
    tie_words: bool = False
    from_section: bool = False  # gender taken from a heading / earlier sentence


class Target:
    """What the prompt asked about, used to spot parts of the answer about another event."""

    def __init__(self, event: str | None, discipline: str | None):
        ev = (event or "").strip()
        disc = (discipline or "").strip()
        both = f"{ev} {disc}".lower()
        self.words = [w for w in dict.fromkeys(re.findall(r"[a-zé]{4,}", both)) if w not in _STOP_WORDS]
        self.beach_ok = "beach" in both
        self.indoor = "indoor" in both

    def other_event(self, s: str) -> str | None:
        """The kind of other event ``s`` is about: "competition" (world championships, ...), "event"
        (beach volleyball, "(not Four)"), or None."""
        for m in tx.OTHER_EVENT_RE.finditer(s):
            if not tx.aside(s, m.start()):
                return "competition"
        if not self.beach_ok and not self.mentioned(s):
            for m in _BEACH_RE.finditer(s):
                if m.group().lower().startswith("out") and not self.indoor:
                    continue
                return "event"
        for m in tx.NOT_EVENT_PAREN_RE.finditer(s):
            low = m.group().lower()
            if any(w in low for w in self.words):
                return "event"
        return None

    def mentioned(self, s: str) -> bool:
        low = s.lower()
        if (
            self.indoor
            and re.search(r"\bindoor\b", low)
            and not _BEACH_RE.search(low)
            and not re.search(r"\bnot (?:an? |the )?indoor", low)
        ):
            return True  # "In the indoor tournament, ..." after a sentence about beach volleyball
        return (
            bool(self.words)
            and all(w in low for w in self.words)
            and not re.search(r"\bnot (?:an? |the )?" + re.escape(self.words[0]), low)
        )


def other_year(s: str, year: int, cue: int | None = None) -> bool:
    """Does sentence ``s`` talk about other games ("In 2004, ...")? Years in asides do not count.

    When the sentence names the prompt's year and another one ("I have no results for 2016, but at
    the 2012 Games the gold went to ..."), the last year before the first medal word (``cue``, an
    offset in ``s``) says which games the results are for."""
    found = [(m.start(), int(m.group())) for m in tx.YEAR_RE.finditer(s) if not tx.aside(s, m.start())]
    if cue is not None:
        # a year in a later clause than the medal word is a remark ("Russia won gold, avenging their
        # 2012 defeat"); one in the medal's own clause is not ("Germany won gold at the 2012 Games")
        found = [(p, y) for p, y in found if p < cue or not re.search(r"[,;:(]", s[cue:p])]
    if not found:
        return False
    ok = {year, year + 1} if year == 2020 else {year}
    ys = {y for _, y in found}
    if not (ys & ok):
        return True
    if cue is not None:
        before = [y for p, y in found if p < cue]
        return bool(before) and before[-1] not in ok
    return False


def apply_change(t: str, a: int, b: int, s: str, pairs, loose: list[Mention], hits: list[Hit]):
    """A sentence saying the result changed: stripped countries lose, new holders win."""
    if tx.OVERTURNED_RE.search(s):
        return pairs
    keep = []
    stripped: list[tuple[str, str | None]] = []
    for m, medal, g in pairs:
        tail = t[m.end : b]
        cut = _CLAUSE_END.search(tail)
        clause_tail = tail[: cut.start()] if cut else tail
        to_medal = re.search(r"\b(?:gold|silver|bronze)\b", tail, re.I)
        upto_medal = tail[: to_medal.start()] if to_medal else ""
        if tx.STRIPPED_RE.search(clause_tail):
            stripped.append((m.code or "", medal))
            continue
        if re.search(r"\b(?:initially|originally)\b", clause_tail + " " + upto_medal):
            continue  # what they first won is not the result
        keep.append((m, medal, g))
    for m in loose:
        tail = t[m.end : b]
        cut = _CLAUSE_END.search(tail)
        if tx.STRIPPED_RE.search(tail[: cut.start()] if cut else tail):
            stripped.append((m.code or "", None))
    gone = {c for c, _ in stripped}
    keep = [p for p in keep if p[0].code not in gone]
    for m, medal, g in keep:
        # "the silver was reallocated to Jamaica": Jamaica's earlier bronze (same event) is superseded
        for h in hits:
            if h.code == m.code and h.medal != medal and not (g and h.genders and not g & h.genders):
                h.epoch = -1
    lost_medals = []
    for code, medal in stripped:
        for h in hits:
            if h.code == code and (medal is None or h.medal == medal):
                h.epoch = -1
                lost_medals.append(h.medal)
        if medal is not None:
            lost_medals.append(medal)
    sentence_medals = {p[1] for p in pairs}
    new_medal = lost_medals[0] if lost_medals else (next(iter(sentence_medals)) if len(sentence_medals) == 1 else None)
    if new_medal is not None:
        for m in loose:
            head = t[a : m.start]
            if m.code not in gone and re.search(tx.REALLOCATED_RE.pattern + r"[^,;]{0,20}$", head, re.I):
                keep.append((m, new_medal, frozenset()))
    return keep
