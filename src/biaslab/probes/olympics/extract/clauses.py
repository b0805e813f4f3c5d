"""Clause by clause pairing inside one sentence (steps 2 and 3 of :func:`.pairs.pair_sentence`): a
:class:`Sentence` holds the clauses and what has been paired so far. Inside a clause a country takes the medal
named before it when the clause starts with a medal ("Gold: X", "the silver went to Y") and the medal named
after it otherwise ("Y took silver"); "followed by" and relative clauses ("..., who took silver") carry a medal
across clauses; countries and medals left over in different clauses are paired when there are as many of each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.countries import Mention
from biaslab.probes.olympics.extract.cues import MEDALS, RUN_GAP, Cue, Pair, genders_in, list_runs, mention_end

_BOTH_EVENTS = re.compile(r"\b(?:both|the two)\s+(?:the\s+)?(?:tournaments|events|competitions|titles|finals)\b", re.I)
_RELATIVE = re.compile(r"[\s,;]*(?:and\s+)?(?:who|which|that|they)\b", re.I)


def _merge_same_team(text: str, start: int, runs: list[list[Mention]]) -> list[list[Mention]]:
    """Leftover country runs that name one team twice ("| Soviet Union | URS |", "The United States'
    Dream Team") are one candidate; a country inside an aside after another one ("Lithuania, which had
    regained its independence from the Soviet Union, took bronze") is no candidate."""
    out: list[list[Mention]] = []
    for run in runs:
        codes = {m.code for m in run}
        if out and codes == {m.code for m in out[-1]} and None not in codes:
            out[-1] = out[-1] + run
            continue
        if out and all(tx.aside(text[start : m.start + 1], m.start - start) for m in run):
            continue
        out.append(run)
    return out


@dataclass
class Sentence:
    """One sentence being paired: its clauses, and what has been paired so far."""

    text: str
    start: int
    end: int
    breaks: list[int]  # where clauses start; a list of countries or medals is not cut
    genders: list[tuple[int, str]]
    pairs: list[Pair] = field(default_factory=list)
    used_c: set[int] = field(default_factory=set)  # id() of the mentions that have their medal
    used_m: set[int] = field(default_factory=set)  # id() of the cues zipped with a list of countries
    excluded: set[int] = field(default_factory=set)  # id() of the mentions after "defeating", "not", ...
    bounds: list[int] = field(init=False)  # clause k is text[bounds[k]:bounds[k + 1]]

    def __post_init__(self) -> None:
        self.bounds = [self.start] + self.breaks + [self.end]

    def clause_of(self, pos: int) -> int:
        k = 0
        while k < len(self.breaks) and self.breaks[k] < pos:
            k += 1
        return k

    def clause(self, k: int) -> tuple[int, int]:
        return self.bounds[k], self.bounds[k + 1]

    def gender_for(self, m: Mention) -> frozenset[str]:
        """The gender of a country's result: its parenthesis, its clause, the last gender word before it,
        or the sentence's only gender."""
        genders = self.genders
        if m.paren_end > m.end:
            g = genders_in(genders, m.end, m.paren_end)
            if g:
                return g
        a, b = self.clause(self.clause_of(m.start))
        if _BOTH_EVENTS.search(self.text, a, b):
            return frozenset("mf")  # "Both tournaments were won by the United States"
        g = genders_in(genders, a, b)
        if g:
            return g
        before = [gg for p, gg in genders if self.start <= p < m.start]
        if before:
            return frozenset(before[-1])
        g = genders_in(genders, self.start, self.end)
        return g if len(g) == 1 else frozenset()

    def add(self, m: Mention, medal: str, how: str) -> None:
        self.pairs.append(Pair(m, medal, self.gender_for(m), how))
        self.used_c.add(id(m))
        self.excluded.discard(id(m))


def pair_clauses(st: Sentence, mentions: list[Mention], cues: list[Cue], prev_medal: str | None) -> list[Cue]:
    """Step 2: clause by clause. Returns the medals left without a country."""
    n_clauses = len(st.bounds) - 1
    per_c: list[list[Mention]] = [[] for _ in range(n_clauses)]
    per_m: list[list[Cue]] = [[] for _ in range(n_clauses)]
    for m in mentions:
        if id(m) not in st.used_c:
            per_c[st.clause_of(m.start)].append(m)
    for c in cues:
        if id(c) not in st.used_m and not c.rank:
            per_m[st.clause_of(c.start)].append(c)
    leftover_m: list[Cue] = []
    last_medal = prev_medal
    for k in range(n_clauses):
        cs = [m for m in per_c[k] if id(m) not in st.excluded and id(m) not in st.used_c]
        ms = per_m[k]
        if ms and not cs:
            prev = [m for m in per_c[k - 1] if id(m) not in st.used_c] if k > 0 else []
            _medal_without_country(st, k, ms, prev, leftover_m)
            last_medal = ms[-1].medal
        elif cs and not ms:
            last_medal = _followed_by(st, k, cs, last_medal)
        elif cs:
            last_medal = _pair_clause(st, k, cs, ms)
    return leftover_m


def _medal_without_country(st: Sentence, k: int, ms: list[Cue], prev: list[Mention], leftover_m: list[Cue]) -> None:
    """ "..., who took silver": the medal goes back to the previous clause's countries; other medals
    wait for step 3."""
    if prev and _RELATIVE.match(st.text, st.bounds[k]):
        for m in prev:
            st.add(m, ms[0].medal, "relative")
    else:
        leftover_m.extend(c for c in ms if not c.weak)


def _follow_on(st: Sentence, ms: list[Mention], medal: str) -> str | None:
    """Countries that follow the winner of ``medal`` take the next medals in order; returns the
    last medal given, or None."""
    idx = MEDALS.index(medal)
    last = None
    for m in ms:
        idx += 1
        if idx < 3:
            st.add(m, MEDALS[idx], "followed")
            last = MEDALS[idx]
    return last


def _followed_by(st: Sentence, k: int, cs: list[Mention], last_medal: str | None) -> str | None:
    """A clause with countries but no medal: after "followed by" they take the medals after the last
    one named. Returns the last medal named so far."""
    fb = tx.FOLLOWED_BY_RE.search(st.text, *st.clause(k))
    if fb and fb.start() < cs[0].start:
        return _follow_on(st, cs, last_medal or "g") or last_medal
    return last_medal


def _pair_clause(st: Sentence, k: int, cs: list[Mention], ms: list[Cue]) -> str:
    """A clause with countries and medals. Returns the last medal named so far."""
    fb = tx.FOLLOWED_BY_RE.search(st.text, *st.clause(k))
    if fb and any(m.start > fb.end() for m in cs) and not any(c.start > fb.end() for c in ms):
        # "the gold went to X ahead of Y and Z": Y and Z come next
        tail = [m for m in cs if m.start > fb.end()]
        cs = [m for m in cs if m.start < fb.start()]
        last = _follow_on(st, tail, ms[-1].medal) or ms[-1].medal
        if not cs:
            return last
    if len(ms) == 1:
        for m in cs:
            st.add(m, ms[0].medal, "clause")
    else:
        # a clause that starts with a medal ("Gold: X") gives the medal before each country, else the one after
        medal_first = ms[0].start < cs[0].start
        for m in cs:
            before = [c for c in ms if c.start < m.start]
            after = [c for c in ms if c.start > m.start]
            pick = (before[-1] if before else after[0]) if medal_first else (after[0] if after else before[-1])
            st.add(m, pick.medal, "clause")
    return ms[-1].medal


def pair_leftovers(st: Sentence, mentions: list[Mention], leftover_m: list[Cue]) -> list[Mention]:
    """Step 3: countries and medals left over in different clauses, as many of each
    ("United States - Jon Drummond, Tim Harden, ... (Silver)"). Returns the countries left loose."""
    loose = [m for m in mentions if id(m) not in st.used_c and id(m) not in st.excluded]
    loose_runs = list_runs(st.text, loose, RUN_GAP, mention_end)
    if leftover_m and len(loose_runs) > len(leftover_m):
        loose_runs = _merge_same_team(st.text, st.start, loose_runs)
    if leftover_m and len(loose_runs) == len(leftover_m) and len(loose_runs) <= 3:
        for run, c in zip(loose_runs, leftover_m):
            for m in run:
                st.add(m, c.medal, "leftover")
        return []
    return loose
