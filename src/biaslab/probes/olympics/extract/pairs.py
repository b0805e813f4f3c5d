"""Pair country mentions with medals inside one sentence.

The sentence is cut into clauses (commas, semicolons, "and", "while", ...). Lists of countries
("X, Y and Z") and of medals ("gold, silver and bronze") are kept whole, and a list of k
countries next to a list of k medals is zipped ("X and Y took silver and bronze respectively").
Inside a clause a country takes the medal named before it when the clause starts with a medal
("Gold: X", "the silver went to Y") and the medal named after it otherwise ("Y took silver").
"""

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
    how: str  # "clause", "zip", "rank", "followed", "relative"


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
    out = []
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


def pair_sentence(text: str, start: int, end: int, mentions: list[Mention], strong: list[Cue],
                  weak: list[Cue], excl: list[int], genders: list[tuple[int, str]],
                  prev_medal: str | None = None) -> SentenceResult:
    breaks = tx.clause_breaks(text, start, end)
    respectively = tx.RESPECTIVELY_RE.search(text, start, end) is not None

    # country lists and medal lists; a break inside a list does not count
    c_runs = _runs(text, mentions, _RUN_GAP, _m_end)
    s_runs = _runs(text, strong, _MRUN_GAP, lambda c: c.end)
    # "reallocated to X, and Y was upgraded to bronze": a singular verb after the list makes its
    # last country the subject of a clause of its own
    c_runs = [piece for r in c_runs for piece in _split_subject(text, r)]
    run_spans = [(r[0].start, _m_end(r[-1])) for r in c_runs if len(r) > 1]
    run_spans += [(r[0].start, r[-1].end) for r in s_runs if len(r) > 1]
    run_spans += [m.span() for m in _BOTH_GENDERS.finditer(text, start, end)]
    breaks = [b for b in breaks if not any(a < b < e for a, e in run_spans)]
    bounds = [start] + breaks + [end]

    def clause_of(pos: int) -> int:
        k = 0
        while k < len(breaks) and breaks[k] < pos:
            k += 1
        return k

    # weak cues ("won by", "the winners were") count where no medal is named in the clause
    strong_clauses = {clause_of(c.start) for c in strong}
    sent = text[start:end]
    weak = [w for w in weak if clause_of(w.start) not in strong_clauses and not tx.aside(sent, w.start - start)]
    cues = sorted(strong + weak, key=lambda c: c.start)
    m_runs = _runs(text, cues, _MRUN_GAP, lambda c: c.end)

    # exclusion ("defeating X", "not X"): cue, then the list, same clause, no medal in between
    excluded: set[int] = set()
    for run in c_runs:
        first = run[0]
        for x in excl:
            if x < first.start and clause_of(x) == clause_of(first.start) and not any(
                    x < c.start < first.start for c in cues):
                # "defeating Spain and Italy", but not "over New Zealand, and Canada took bronze"
                excluded.add(id(first))
                for prev, m in zip(run, run[1:]):
                    if "," in text[_m_end(prev):m.start]:
                        break
                    excluded.add(id(m))
                break

    pairs: list[Pair] = []
    used_c: set[int] = set()
    used_m: set[int] = set()

    def gender_for(m: Mention) -> frozenset[str]:
        if m.paren_end > m.end:
            g = _genders_in(genders, m.end, m.paren_end)
            if g:
                return g
        k = clause_of(m.start)
        if _BOTH_EVENTS.search(text, bounds[k], bounds[k + 1]):
            return frozenset("mf")  # "Both tournaments were won by the United States"
        g = _genders_in(genders, bounds[k], bounds[k + 1])
        if g:
            return g
        before = [gg for p, gg in genders if start <= p < m.start]
        if before:
            return frozenset(before[-1])
        g = _genders_in(genders, start, end)
        return g if len(g) == 1 else frozenset()

    def add(m: Mention, medal: str, how: str) -> None:
        pairs.append(Pair(m, medal, gender_for(m), how))
        used_c.add(id(m))
        excluded.discard(id(m))

    # 1. zip k countries with k medals ("X, Y and Z won gold, silver and bronze"),
    #    or rank them after "won by" ("won by X, Y and Z")
    for run in c_runs:
        if len(run) < 2 or (not respectively and all(id(m) in excluded for m in run)):
            continue
        for mr in m_runs:
            if any(id(c) in used_m for c in mr):
                continue
            before = mr[0].start < run[0].start
            lo, hi = (mr[-1].end, run[0].start) if before else (_m_end(run[-1]), mr[0].start)
            if any(lo <= c.start < hi for c in cues) or any(lo <= m.start < hi for m in mentions):
                continue
            if len(mr) == len(run) and not mr[0].weak:
                for m, c in zip(run, mr):
                    add(m, c.medal, "zip")
                    used_m.add(id(c))
                break
            if len(mr) == 1 and mr[0].weak and before and _RANK_GAP.fullmatch(text, lo, hi) and (
                    len(run) == 3 or (mr[0].rank and len(run) == 2)):
                for m, medal in zip(run, MEDALS):
                    add(m, medal, "rank")
                used_m.add(id(mr[0]))
                break

    # 2. clause by clause
    last_medal = prev_medal
    n_clauses = len(bounds) - 1
    per_c: list[list[Mention]] = [[] for _ in range(n_clauses)]
    per_m: list[list[Cue]] = [[] for _ in range(n_clauses)]
    for m in mentions:
        if id(m) not in used_c:
            per_c[clause_of(m.start)].append(m)
    for c in cues:
        if id(c) not in used_m and not c.rank:
            per_m[clause_of(c.start)].append(c)
    leftover_m: list[Cue] = []
    for k in range(n_clauses):
        cs = [m for m in per_c[k] if id(m) not in excluded and id(m) not in used_c]
        ms = per_m[k]
        a, b = bounds[k], bounds[k + 1]
        if ms and not cs:
            # "..., who took silver": the medal goes back to the previous clause's countries
            prev = [m for m in per_c[k - 1] if id(m) not in used_c] if k > 0 else []
            if prev and _RELATIVE.match(text, a):
                for m in prev:
                    add(m, ms[0].medal, "relative")
            else:
                leftover_m.extend(c for c in ms if not c.weak)
            last_medal = ms[-1].medal
            continue
        if not cs:
            continue
        if not ms:
            fb = tx.FOLLOWED_BY_RE.search(text, a, b)
            if fb and fb.start() < cs[0].start:
                idx = MEDALS.index(last_medal or "g")
                for m in cs:
                    idx += 1
                    if idx < 3:
                        add(m, MEDALS[idx], "followed")
                        last_medal = MEDALS[idx]
            continue
        fb = tx.FOLLOWED_BY_RE.search(text, a, b)
        if fb and any(m.start > fb.end() for m in cs) and not any(c.start > fb.end() for c in ms):
            # "the gold went to X ahead of Y and Z": Y and Z come next
            tail = [m for m in cs if m.start > fb.end()]
            cs = [m for m in cs if m.start < fb.start()]
            idx = MEDALS.index(ms[-1].medal)
            for m in tail:
                idx += 1
                if idx < 3:
                    add(m, MEDALS[idx], "followed")
            if not cs:
                last_medal = MEDALS[min(idx, 2)]
                continue
        if len(ms) == 1:
            for m in cs:
                add(m, ms[0].medal, "clause")
        else:
            medal_first = ms[0].start < cs[0].start
            for m in cs:
                before = [c for c in ms if c.start < m.start]
                after = [c for c in ms if c.start > m.start]
                pick = (before[-1] if before else after[0]) if medal_first else (after[0] if after else before[-1])
                add(m, pick.medal, "clause")
        last_medal = ms[-1].medal

    # 3. one country and one medal left over in different clauses
    #    ("United States - Jon Drummond, Tim Harden, ... (Silver)")
    loose = [m for m in mentions if id(m) not in used_c and id(m) not in excluded]
    loose_runs = _runs(text, loose, _RUN_GAP, _m_end)
    if leftover_m and len(loose_runs) > len(leftover_m):
        loose_runs = _merge_same_team(text, start, loose_runs)
    if leftover_m and len(loose_runs) == len(leftover_m) and len(loose_runs) <= 3:
        for run, c in zip(loose_runs, leftover_m):
            for m in run:
                add(m, c.medal, "leftover")
        loose = []
    return SentenceResult(pairs, loose, bool(cues), [m for m in mentions if id(m) in excluded])
