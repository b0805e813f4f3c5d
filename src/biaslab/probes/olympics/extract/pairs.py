"""Pair country mentions with medals inside one sentence.

The sentence is cut into clauses (commas, semicolons, "and", "while", ...). Lists of countries
("X, Y and Z") and of medals ("gold, silver and bronze") are kept whole, and a list of k
countries next to a list of k medals is zipped ("X and Y took silver and bronze respectively").
Inside a clause a country takes the medal named before it when the clause starts with a medal
("Gold: X", "the silver went to Y") and the medal named after it otherwise ("Y took silver").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


@dataclass
class SentenceResult:
    pairs: list[Pair]
    loose: list[Mention]  # countries with no medal in the sentence (not excluded)
    has_medal_word: bool
    excluded: list[Mention]


_RUN_GAP = re.compile(r"[\s,*]*(?:(?:and|&|as well as|plus|or)\s+)?(?:the\s+)?[\s*]*", re.I)
_MRUN_GAP = re.compile(r"(?:[\s,/*-]|\band\b|&|\bor\b|\bthe\b|\bmedals?\b)*", re.I)
_BOTH_GENDERS = re.compile(r"\b(?:wo)?men(?:'s)?\s+(?:and|&|or)\s+(?:the\s+)?(?:wo)?men(?:'s)?\b", re.I)
_BOTH_EVENTS = re.compile(r"\b(?:both|the two)\s+(?:the\s+)?(?:tournaments|events|competitions|titles|finals)\b", re.I)
_SAME_CUE_GAP = re.compile(r"[\s*(]*(?:medal)?[\s*:)-]*", re.I)
_RANK_GAP = re.compile(r"(?:[^.;\n]{0,50}?(?:\b(?:was|were|is|are|by)\b|:))?\s*(?:the\s+)?", re.I)
_RELATIVE = re.compile(r"[\s,;]*(?:and\s+)?(?:who|which|that|they)\b", re.I)


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


def _genders_in(genders: list[tuple[int, str]], a: int, b: int) -> frozenset[str]:
    return frozenset(g for p, g in genders if a <= p < b)


def _runs(text: str, items: list, gap: re.Pattern[str], end_of) -> list[list]:
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


def _m_end(m: Mention) -> int:
    return max(m.end, m.paren_end)


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
        if out and all(tx.aside(text[start:m.start + 1], m.start - start) for m in run):
            continue
        out.append(run)
    return out


_SINGULAR_VERB = re.compile(r"\s+(?:was|is|has)\b", re.I)


def _split_subject(text: str, run: list[Mention]) -> list[list[Mention]]:
    if len(run) > 1 and _SINGULAR_VERB.match(text, _m_end(run[-1])) and \
            re.search(r",|\band\b", text[_m_end(run[-2]):run[-1].start]):
        return [run[:-1], run[-1:]]
    return [run]


def _cue_end(c: Cue) -> int:
    return c.end


@dataclass
class _Sentence:
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
            g = _genders_in(genders, m.end, m.paren_end)
            if g:
                return g
        a, b = self.clause(self.clause_of(m.start))
        if _BOTH_EVENTS.search(self.text, a, b):
            return frozenset("mf")  # "Both tournaments were won by the United States"
        g = _genders_in(genders, a, b)
        if g:
            return g
        before = [gg for p, gg in genders if self.start <= p < m.start]
        if before:
            return frozenset(before[-1])
        g = _genders_in(genders, self.start, self.end)
        return g if len(g) == 1 else frozenset()

    def add(self, m: Mention, medal: str, how: str) -> None:
        self.pairs.append(Pair(m, medal, self.gender_for(m), how))
        self.used_c.add(id(m))
        self.excluded.discard(id(m))


def pair_sentence(text: str, start: int, end: int, mentions: list[Mention], strong: list[Cue],
                  weak: list[Cue], excl: list[int], genders: list[tuple[int, str]],
                  prev_medal: str | None = None) -> SentenceResult:
    """Pair the countries of the sentence ``text[start:end]`` with its medals.

    ``mentions``, the ``strong`` and ``weak`` cues and the exclusion cues ``excl`` are those inside the
    sentence; ``prev_medal`` is the last medal paired before it (for "followed by").
    """
    c_runs = _country_runs(text, mentions)
    s_runs = _runs(text, strong, _MRUN_GAP, _cue_end)
    st = _Sentence(text, start, end, _list_safe_breaks(text, start, end, c_runs, s_runs), genders)
    cues = sorted(strong + _clause_weak_cues(st, strong, weak), key=lambda c: c.start)
    st.excluded = _excluded_mentions(st, c_runs, excl, cues)
    respectively = tx.RESPECTIVELY_RE.search(text, start, end) is not None
    _zip_lists(st, c_runs, _runs(text, cues, _MRUN_GAP, _cue_end), cues, mentions, respectively)
    leftover_m = _pair_clauses(st, mentions, cues, prev_medal)
    loose = _pair_leftovers(st, mentions, leftover_m)
    return SentenceResult(st.pairs, loose, bool(cues), [m for m in mentions if id(m) in st.excluded])


def _country_runs(text: str, mentions: list[Mention]) -> list[list[Mention]]:
    """Lists of countries ("X, Y and Z"). "reallocated to X, and Y was upgraded to bronze": a singular
    verb after the list makes its last country the subject of a clause of its own."""
    return [piece for r in _runs(text, mentions, _RUN_GAP, _m_end) for piece in _split_subject(text, r)]


def _list_safe_breaks(text: str, start: int, end: int, c_runs: list[list[Mention]],
                      s_runs: list[list[Cue]]) -> list[int]:
    """The sentence's clause breaks, less those inside a list of countries, a list of medals or
    "men's and women's"."""
    run_spans = [(r[0].start, _m_end(r[-1])) for r in c_runs if len(r) > 1]
    run_spans += [(r[0].start, r[-1].end) for r in s_runs if len(r) > 1]
    run_spans += [m.span() for m in _BOTH_GENDERS.finditer(text, start, end)]
    return [b for b in tx.clause_breaks(text, start, end) if not any(a < b < e for a, e in run_spans)]


def _clause_weak_cues(st: _Sentence, strong: list[Cue], weak: list[Cue]) -> list[Cue]:
    """Weak cues ("won by", "the winners were") count where no medal is named in the clause and
    not inside an aside."""
    strong_clauses = {st.clause_of(c.start) for c in strong}
    sent = st.text[st.start:st.end]
    return [w for w in weak
            if st.clause_of(w.start) not in strong_clauses and not tx.aside(sent, w.start - st.start)]


def _excluded_mentions(st: _Sentence, c_runs: list[list[Mention]], excl: list[int], cues: list[Cue]) -> set[int]:
    """Countries after an exclusion cue ("defeating X", "not X"): cue, then the list, in the same
    clause with no medal in between. "defeating Spain and Italy" excludes both, but "over New Zealand,
    and Canada took bronze" only New Zealand."""
    excluded: set[int] = set()
    for run in c_runs:
        first = run[0]
        for x in excl:
            if x < first.start and st.clause_of(x) == st.clause_of(first.start) and not any(
                    x < c.start < first.start for c in cues):
                excluded.add(id(first))
                for prev, m in zip(run, run[1:]):
                    if "," in st.text[_m_end(prev):m.start]:
                        break
                    excluded.add(id(m))
                break
    return excluded


def _zip_lists(st: _Sentence, c_runs: list[list[Mention]], m_runs: list[list[Cue]], cues: list[Cue],
               mentions: list[Mention], respectively: bool) -> None:
    """Step 1: zip k countries with k medals ("X, Y and Z won gold, silver and bronze"), or rank
    them after "won by" ("won by X, Y and Z")."""
    for run in c_runs:
        if len(run) < 2 or (not respectively and all(id(m) in st.excluded for m in run)):
            continue
        for mr in m_runs:
            if any(id(c) in st.used_m for c in mr):
                continue
            if _zip_run(st, run, mr, cues, mentions):
                break


def _zip_run(st: _Sentence, run: list[Mention], mr: list[Cue], cues: list[Cue], mentions: list[Mention]) -> bool:
    """Pair a list of countries with a list of medals next to it; False when they do not fit."""
    before = mr[0].start < run[0].start
    lo, hi = (mr[-1].end, run[0].start) if before else (_m_end(run[-1]), mr[0].start)
    if any(lo <= c.start < hi for c in cues) or any(lo <= m.start < hi for m in mentions):
        return False
    if len(mr) == len(run) and not mr[0].weak:
        for m, c in zip(run, mr):
            st.add(m, c.medal, "zip")
            st.used_m.add(id(c))
        return True
    if len(mr) == 1 and mr[0].weak and before and _RANK_GAP.fullmatch(st.text, lo, hi) and (
            len(run) == 3 or (mr[0].rank and len(run) == 2)):
        for m, medal in zip(run, MEDALS):
            st.add(m, medal, "rank")
        st.used_m.add(id(mr[0]))
        return True
    return False


def _pair_clauses(st: _Sentence, mentions: list[Mention], cues: list[Cue], prev_medal: str | None) -> list[Cue]:
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


def _medal_without_country(st: _Sentence, k: int, ms: list[Cue], prev: list[Mention], leftover_m: list[Cue]) -> None:
    """"..., who took silver": the medal goes back to the previous clause's countries; other medals
    wait for step 3."""
    if prev and _RELATIVE.match(st.text, st.bounds[k]):
        for m in prev:
            st.add(m, ms[0].medal, "relative")
    else:
        leftover_m.extend(c for c in ms if not c.weak)


def _follow_on(st: _Sentence, ms: list[Mention], medal: str) -> str | None:
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


def _followed_by(st: _Sentence, k: int, cs: list[Mention], last_medal: str | None) -> str | None:
    """A clause with countries but no medal: after "followed by" they take the medals after the last
    one named. Returns the last medal named so far."""
    fb = tx.FOLLOWED_BY_RE.search(st.text, *st.clause(k))
    if fb and fb.start() < cs[0].start:
        return _follow_on(st, cs, last_medal or "g") or last_medal
    return last_medal


def _pair_clause(st: _Sentence, k: int, cs: list[Mention], ms: list[Cue]) -> str:
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


def _pair_leftovers(st: _Sentence, mentions: list[Mention], leftover_m: list[Cue]) -> list[Mention]:
    """Step 3: countries and medals left over in different clauses, as many of each
    ("United States - Jon Drummond, Tim Harden, ... (Silver)"). Returns the countries left loose."""
    loose = [m for m in mentions if id(m) not in st.used_c and id(m) not in st.excluded]
    loose_runs = _runs(st.text, loose, _RUN_GAP, _m_end)
    if leftover_m and len(loose_runs) > len(leftover_m):
        loose_runs = _merge_same_team(st.text, st.start, loose_runs)
    if leftover_m and len(loose_runs) == len(leftover_m) and len(loose_runs) <= 3:
        for run, c in zip(loose_runs, leftover_m):
            for m in run:
                st.add(m, c.medal, "leftover")
        return []
    return loose
