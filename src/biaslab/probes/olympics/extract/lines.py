"""The walk through an answer, line by line, that collects its (gender, medal, country) hits.

It keeps the context a reader keeps: the current men's / women's section, a medal heading
("**Gold:**") waiting for its country, ranked lists (1. 2. 3.), parts about another event
(beach volleyball, world championships) or other games that do not count, results that
changed later, and corrections that replace earlier results. :func:`_extract` hands the hits
to :func:`.extract_result._assemble`.
"""

from __future__ import annotations

import re

from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.context import Hit, Target, apply_change, other_year
from biaslab.probes.olympics.extract.countries import Mention, find_mentions
from biaslab.probes.olympics.extract.pairs import MEDALS, Cue, gender_spans, medal_cues, pair_sentence, weak_cues
from biaslab.probes.olympics.extract.result import _NEGATED_GENDER, Extraction, _assemble
from biaslab.probes.olympics.extract.tables import _Table, _table_header, _table_row

_MEDAL_LEAD = re.compile(r"[\s*_#>-]*(?:gold|silver|bronze)\b", re.I)
# "Gold: Xanadu" -> "Xanadu": what stands in a medal slot when no country was recognised
_SLOT_TEXT = re.compile(
    r"[\s*_#>-]*(?:\d{1,2}[.)]\s*)?[*_]*(?:gold|silver|bronze)(?:\s+medal(?:s|ist|ists)?)?[*_]*\s*[:–-]\s*[*_]*"
    r"\s*((?-i:[A-Z][\w'’.-]*(?:[ \t]+(?:of|and|the|[A-Z][\w'’.-]*)){0,4}))", re.I)
_ALTERNATIVE = re.compile(r"\s*,?\s*(?:or|either)\s+(?:possibly\s+|perhaps\s+|maybe\s+)?(?:the\s+)?", re.I)
_TIE_RE = re.compile(r"\b(?:both|tie|tied|ties|shared|two bronze|joint)\b", re.I)


def _leading_mention(text: str, line: tx.Line, ms: list[Mention]) -> Mention | None:
    if not ms:
        return None
    head = text[line.start:ms[0].start]
    head = re.sub(r"^\s*(?:\d{1,2}[.)]|[*+•-])?\s*", "", head)
    head = re.sub(r"\*\*|__|\bthe\b|\bteam\b|[:\s]", "", head, flags=re.I)
    return ms[0] if not head else None


def _neutralise_event(t: str, event: str | None) -> str:
    """Commas inside the event name ("Foil, Team") must not split clauses."""
    ev = (event or "").strip()
    if "," not in ev:
        return t
    rep = ev.replace(",", " ")
    return re.sub(re.escape(ev), lambda m: rep, t, flags=re.I)


def _extract(text: str, year: int, stated: str | None, event: str | None, discipline: str | None,
             specified: bool, official: bool) -> Extraction:
    t = _neutralise_event(tx.clean(text or ""), event)
    target = Target(event, discipline)
    mentions = find_mentions(t, year, official=official)
    strong = medal_cues(t)
    weak = weak_cues(t)
    excl = [m.start() for m in tx.EXCLUDE_RE.finditer(t)]
    genders = gender_spans(t)
    lines = tx.split_lines(t)

    flags: list[str] = []
    unmapped: list[str] = []
    hits: list[Hit] = []

    def within(items, a, b):
        return [x for x in items if a <= x.start < b]

    def genders_in(a, b) -> frozenset[str]:
        return frozenset(g for p, g in genders if a <= p < b)

    section: frozenset[str] = frozenset()
    other: str | None = None
    pending: str | None = None
    pending_weak = False
    epoch = 0
    skipped_results = False  # results for another event were left out
    other_in_prose = False
    corrected = False  # a correction replaced results given earlier
    prev_medal: str | None = None
    skipped_year = False  # results for other games were left out
    other_games = False  # the paragraph so far is about other games
    carried_year = False  # a sentence was left out only because of the paragraph's other games
    other_list = False  # the list below a heading naming other games ("At the 2000 Games, the medals were:")
    table: _Table | None = None  # what the columns of a markdown table hold
    if any(_ALTERNATIVE.fullmatch(t, x.end if x.paren_end < 0 else x.paren_end, y.start)
           for x, y in zip(mentions, mentions[1:])):
        flags.append("alternative-countries")  # "Bronze: Finland or Sweden": a guess between two
    for line in lines:
        if line.blank:
            other_games = False
            if other_in_prose:
                other = None  # "... the 1998 World Cup. They went on to ..." ends with the paragraph
            continue
        line_ms = within(mentions, line.start, line.end)
        line_cues = within(strong, line.start, line.end)
        line_weak = [c for c in within(weak, line.start, line.end) if not c.rank]
        is_row = t[line.start:line.end].lstrip().startswith("|")
        is_item = is_row or line.bullet or line.number is not None or bool(
            _MEDAL_LEAD.match(t, line.start, line.end))
        if line.heading and not line_ms and not is_row:
            # "At the 2000 Games in Sydney, the medals were:" for a 2004 prompt: the list is about them
            if tx.YEAR_RE.search(t, line.start, line.end):
                other_list = other_year(t[line.start:line.end], year)
        elif other_list and not is_item:
            other_list = False
        if other_list and is_item and not line.heading:
            if line_ms:
                skipped_year = carried_year = True
            continue
        if line.heading and not line_ms:
            if line_cues:
                pending, pending_weak = line_cues[-1].medal, False
            elif line_weak:
                pending, pending_weak = "g", True
            elif not pending_weak:
                pending = None
        elif not line.bullet and line.number is None and not line_ms and not line.heading:
            pending = None
        if not line_ms and other is None:
            slot = _SLOT_TEXT.match(t, line.start, line.end)
            if slot and slot.group(1).strip() and slot.group(1).strip() not in unmapped:
                unmapped.append(slot.group(1).strip())
        if t[line.start:line.end].lstrip().startswith("|"):
            row = _table_row(t, line, table, line_ms, strong, genders)
            if row is None:  # header or separator
                table = _table_header(t, line, line_ms, strong, genders) or table
                continue
            if row:
                for m, medal, g in row:
                    if m.code is None:
                        _note_unmapped(m, flags, unmapped)
                    else:
                        hits.append(Hit(g or section, medal, m.code, epoch, m.start, True, False, not g and bool(section)))
                continue
        else:
            table = None
        listed = line.bullet or line.number is not None or bool(
            _MEDAL_LEAD.match(t, line.start, line.end))
        rank = None
        if line.number in (1, 2, 3) and not line_cues and not line_weak and \
                _leading_mention(t, line, line_ms) is not None:
            rank = MEDALS[line.number - 1]
        own_medals = False  # the line names its medals itself ("Gold: X", "1. X")
        for a, b in line.sentences:
            s = t[a:b]
            g_here = genders_in(a, b)
            if g_here and (line.heading or not _NEGATED_GENDER.search(s)):
                section = g_here if len(g_here) == 1 else frozenset()
            if tx.CORRECTION_RE.search(s):
                epoch += 1
                corrected = corrected or bool(hits)
            kind = target.other_event(s)
            if kind:
                other = kind if other != "competition" else other
                other_in_prose = other == "competition" and not s.rstrip().endswith(":") and not line.heading
                skipped_results = skipped_results or _names_results(mentions, strong, a, b)
                continue
            if other == "event" and target.mentioned(s):
                other = None
            elif other == "competition" and re.search(r"\bOlympic|\bGames\b", s):
                other = None
            if other:
                skipped_results = skipped_results or _names_results(mentions, strong, a, b)
                continue
            ms = within(mentions, a, b)
            if not ms:
                continue
            sc = within(strong, a, b)
            changed = bool(tx.CHANGED_LATER_RE.search(s))
            if other_games and (line.heading or (tx.YEAR_RE.search(s) and not other_year(s, year))):
                other_games = False
            cue0 = min([c.start for c in sc] + [c.start for c in within(weak, a, b)], default=None)
            if cue0 is not None and not changed and (other_year(s, year, cue0 - a) or (
                    other_games and not tx.YEAR_RE.search(s))):
                # results for other games; prose after "At the 2000 Games, ..." stays about them
                skipped_year = True
                carried_year = carried_year or other_games
                other_games = other_games or (not hits and not listed and not line.heading)
                continue
            res = pair_sentence(t, a, b, ms, sc, within(weak, a, b), [x for x in excl if a <= x < b], genders,
                                prev_medal)
            pairs = [(p.mention, p.medal, p.gender) for p in res.pairs]
            own_medals = own_medals or bool(res.pairs) or (rank is not None and bool(res.loose))
            if res.pairs:
                prev_medal = res.pairs[-1].medal
                if any(p.how == "rank" for p in res.pairs) and "ranked-by-order" not in flags:
                    flags.append("ranked-by-order")  # "won by X, Y and Z": order read as gold/silver/bronze
            if not res.has_medal_word and res.loose:
                medal = rank if rank is not None else pending
                if medal is not None:
                    loose = res.loose[:1] if (rank is not None or pending_weak) else res.loose
                    if pending_weak and rank is None:
                        pending, pending_weak = None, False
                    for m in loose:
                        pairs.append((m, medal, _paren_gender(genders, m)))
            if changed:
                pairs = apply_change(t, a, b, s, pairs, res.loose, hits)
            for m, medal, g in pairs:
                if m.code is None:
                    _note_unmapped(m, flags, unmapped)
                    continue
                hits.append(Hit(g or section, medal, m.code, epoch, m.start, listed, bool(_TIE_RE.search(s)),
                                 not g and bool(section)))
        if own_medals and pending_weak and (listed or line.heading):
            # "The medals were won by:" is answered by the list below it; a later list ("final
            # standings: 1. ... 4. ...") does not inherit it
            pending, pending_weak = None, False
    changed = bool(tx.CHANGED_STATUS_RE.search(t)) and not tx.OVERTURNED_RE.search(t)
    ambiguous = any(f.startswith(("ambiguous-country", "germany-")) for f in flags)
    unsure = skipped_results or corrected or ambiguous or (bool(hits) and (changed or bool(tx.NO_EVENT_RE.search(t))))
    # results given only for other games ("at the 2012 Games ..." for a 2016 prompt): nothing counts
    only_other_games = skipped_year and not any(h.epoch >= 0 for h in hits)
    unsure = unsure or only_other_games
    if only_other_games or carried_year:
        flags.append("other-games-results")
    return _assemble(t, hits, genders, stated, specified, flags, unmapped, "unsure" if unsure else "accepted",
                     lines)


def _note_unmapped(m: Mention, flags: list[str], unmapped: list[str]) -> None:
    if m.flag and m.flag not in flags:
        flags.append(m.flag)
    if m.raw not in unmapped:
        unmapped.append(m.raw)


def _names_results(mentions: list[Mention], cues: list[Cue], a: int, b: int) -> bool:
    return any(a <= m.start < b for m in mentions) and any(a <= c.start < b for c in cues)


def _paren_gender(genders, m: Mention) -> frozenset[str]:
    if m.paren_end > m.end:
        return frozenset(g for p, g in genders if m.end <= p < m.paren_end)
    return frozenset()
