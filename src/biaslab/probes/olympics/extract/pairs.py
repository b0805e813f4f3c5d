"""Pair country mentions with medals inside one sentence.

The sentence is cut into clauses (commas, semicolons, "and", "while", ...). Lists of countries
("X, Y and Z") and of medals ("gold, silver and bronze") are kept whole, and a list of k
countries next to a list of k medals is zipped ("X and Y took silver and bronze respectively").
Inside a clause a country takes the medal named before it when the clause starts with a medal
("Gold: X", "the silver went to Y") and the medal named after it otherwise ("Y took silver").

:func:`pair_sentence` runs the steps: this module finds the lists, the countries excluded ("defeating X") and
zips lists (step 1); :mod:`.clauses` pairs clause by clause and then the leftovers (steps 2 and 3); the cues it
reads are found by :mod:`.cues`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.clauses import Sentence, pair_clauses, pair_leftovers
from biaslab.probes.olympics.extract.countries import Mention
from biaslab.probes.olympics.extract.cues import (
    MEDAL_RUN_GAP,
    MEDALS,
    RUN_GAP,
    Cue,
    Pair,
    cue_end,
    list_runs,
    mention_end,
)


@dataclass
class SentenceResult:
    pairs: list[Pair]
    loose: list[Mention]  # countries with no medal in the sentence (not excluded)
    has_medal_word: bool
    excluded: list[Mention]


_BOTH_GENDERS = re.compile(r"\b(?:wo)?men(?:'s)?\s+(?:and|&|or)\s+(?:the\s+)?(?:wo)?men(?:'s)?\b", re.I)
_RANK_GAP = re.compile(r"(?:[^.;\n]{0,50}?(?:\b(?:was|were|is|are|by)\b|:))?\s*(?:the\s+)?", re.I)
_SINGULAR_VERB = re.compile(r"\s+(?:was|is|has)\b", re.I)


def _split_subject(text: str, run: list[Mention]) -> list[list[Mention]]:
    if (
        len(run) > 1
        and _SINGULAR_VERB.match(text, mention_end(run[-1]))
        and re.search(r",|\band\b", text[mention_end(run[-2]) : run[-1].start])
    ):
        return [run[:-1], run[-1:]]
    return [run]


def pair_sentence(
    text: str,
    start: int,
    end: int,
    mentions: list[Mention],
    strong: list[Cue],
    weak: list[Cue],
    excl: list[int],
    genders: list[tuple[int, str]],
    prev_medal: str | None = None,
) -> SentenceResult:
    """Pair the countries of the sentence ``text[start:end]`` with its medals.

    ``mentions``, the ``strong`` and ``weak`` cues and the exclusion cues ``excl`` are those inside the
    sentence; ``prev_medal`` is the last medal paired before it (for "followed by").
    """
    c_runs = _country_runs(text, mentions)
    s_runs = list_runs(text, strong, MEDAL_RUN_GAP, cue_end)
    st = Sentence(text, start, end, _list_safe_breaks(text, start, end, c_runs, s_runs), genders)
    cues = sorted(strong + _clause_weak_cues(st, strong, weak), key=lambda c: c.start)
    st.excluded = _excluded_mentions(st, c_runs, excl, cues)
    respectively = tx.RESPECTIVELY_RE.search(text, start, end) is not None
    _zip_lists(st, c_runs, list_runs(text, cues, MEDAL_RUN_GAP, cue_end), cues, mentions, respectively)
    leftover_m = pair_clauses(st, mentions, cues, prev_medal)
    loose = pair_leftovers(st, mentions, leftover_m)
    return SentenceResult(st.pairs, loose, bool(cues), [m for m in mentions if id(m) in st.excluded])


def _country_runs(text: str, mentions: list[Mention]) -> list[list[Mention]]:
    """Lists of countries ("X, Y and Z"). "reallocated to X, and Y was upgraded to bronze": a singular
    verb after the list makes its last country the subject of a clause of its own."""
    return [piece for r in list_runs(text, mentions, RUN_GAP, mention_end) for piece in _split_subject(text, r)]


def _list_safe_breaks(
    text: str, start: int, end: int, c_runs: list[list[Mention]], s_runs: list[list[Cue]]
) -> list[int]:
    """The sentence's clause breaks, less those inside a list of countries, a list of medals or
    "men's and women's"."""
    run_spans = [(r[0].start, mention_end(r[-1])) for r in c_runs if len(r) > 1]
    run_spans += [(r[0].start, r[-1].end) for r in s_runs if len(r) > 1]
    run_spans += [m.span() for m in _BOTH_GENDERS.finditer(text, start, end)]
    return [b for b in tx.clause_breaks(text, start, end) if not any(a < b < e for a, e in run_spans)]


def _clause_weak_cues(st: Sentence, strong: list[Cue], weak: list[Cue]) -> list[Cue]:
    """Weak cues ("won by", "the winners were") count where no medal is named in the clause and
    not inside an aside."""
    strong_clauses = {st.clause_of(c.start) for c in strong}
    sent = st.text[st.start : st.end]
    return [w for w in weak if st.clause_of(w.start) not in strong_clauses and not tx.aside(sent, w.start - st.start)]


def _excluded_mentions(st: Sentence, c_runs: list[list[Mention]], excl: list[int], cues: list[Cue]) -> set[int]:
    """Countries after an exclusion cue ("defeating X", "not X"): cue, then the list, in the same
    clause with no medal in between. "defeating Spain and Italy" excludes both, but "over New Zealand,
    and Canada took bronze" only New Zealand."""
    excluded: set[int] = set()
    for run in c_runs:
        first = run[0]
        for x in excl:
            if (
                x < first.start
                and st.clause_of(x) == st.clause_of(first.start)
                and not any(x < c.start < first.start for c in cues)
            ):
                excluded.add(id(first))
                for prev, m in zip(run, run[1:]):
                    if "," in st.text[mention_end(prev) : m.start]:
                        break
                    excluded.add(id(m))
                break
    return excluded


def _zip_lists(
    st: Sentence,
    c_runs: list[list[Mention]],
    m_runs: list[list[Cue]],
    cues: list[Cue],
    mentions: list[Mention],
    respectively: bool,
) -> None:
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


def _zip_run(st: Sentence, run: list[Mention], mr: list[Cue], cues: list[Cue], mentions: list[Mention]) -> bool:
    """Pair a list of countries with a list of medals next to it; False when they do not fit."""
    before = mr[0].start < run[0].start
    lo, hi = (mr[-1].end, run[0].start) if before else (mention_end(run[-1]), mr[0].start)
    if any(lo <= c.start < hi for c in cues) or any(lo <= m.start < hi for m in mentions):
        return False
    if len(mr) == len(run) and not mr[0].weak:
        for m, c in zip(run, mr):
            st.add(m, c.medal, "zip")
            st.used_m.add(id(c))
        return True
    if (
        len(mr) == 1
        and mr[0].weak
        and before
        and _RANK_GAP.fullmatch(st.text, lo, hi)
        and (len(run) == 3 or (mr[0].rank and len(run) == 2))
    ):
        for m, medal in zip(run, MEDALS):
            st.add(m, medal, "rank")
        st.used_m.add(id(mr[0]))
        return True
    return False
