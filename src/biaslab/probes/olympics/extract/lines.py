"""The walk through an answer, line by line, that collects its (gender, medal, country) hits.

It keeps the context a reader keeps: the current men's / women's section, a medal heading
("**Gold:**") waiting for its country, ranked lists (1. 2. 3.), parts about another event
(beach volleyball, world championships) or other games that do not count, results that
changed later, and corrections that replace earlier results. :func:`extract_medals` hands the hits
to :func:`.result.assemble`.
"""

from __future__ import annotations

import re

from biaslab.probes.olympics.extract import text as tx
from biaslab.probes.olympics.extract.context import Hit, Target, apply_change, other_year
from biaslab.probes.olympics.extract.countries import Mention, find_mentions
from biaslab.probes.olympics.extract.cues import MEDALS, Cue, gender_spans, medal_cues, weak_cues
from biaslab.probes.olympics.extract.pairs import SentenceResult, pair_sentence
from biaslab.probes.olympics.extract.result import NEGATED_GENDER, Extraction, assemble
from biaslab.probes.olympics.extract.tables import TableLayout, table_header, table_row

_MEDAL_LEAD = re.compile(r"[\s*_#>-]*(?:gold|silver|bronze)\b", re.I)
# "Gold: Xanadu" -> "Xanadu": what stands in a medal slot when no country was recognised
_SLOT_TEXT = re.compile(
    r"[\s*_#>-]*(?:\d{1,2}[.)]\s*)?[*_]*(?:gold|silver|bronze)(?:\s+medal(?:s|ist|ists)?)?[*_]*\s*[:–-]\s*[*_]*"
    r"\s*((?-i:[A-Z][\w'’.-]*(?:[ \t]+(?:of|and|the|[A-Z][\w'’.-]*)){0,4}))",
    re.I,
)
_ALTERNATIVE = re.compile(r"\s*,?\s*(?:or|either)\s+(?:possibly\s+|perhaps\s+|maybe\s+)?(?:the\s+)?", re.I)
_TIE_RE = re.compile(r"\b(?:both|tie|tied|ties|shared|two bronze|joint)\b", re.I)


def _leading_mention(text: str, line: tx.Line, ms: list[Mention]) -> Mention | None:
    if not ms:
        return None
    head = text[line.start : ms[0].start]
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


def extract_medals(
    text: str, year: int, stated: str | None, event: str | None, discipline: str | None, specified: bool, official: bool
) -> Extraction:
    walk = _Walk(_neutralise_event(tx.clean(text or ""), event), year, Target(event, discipline), official)
    for line in walk.lines:
        walk.read_line(line)
    return walk.result(stated, specified)


class _Walk:
    """The walk through one answer: what a reader knows at the current line, and the hits so far."""

    def __init__(self, t: str, year: int, target: Target, official: bool) -> None:
        self.t = t
        self.year = year
        self.target = target
        self.mentions = find_mentions(t, year, official=official)
        self.strong = medal_cues(t)
        self.weak = weak_cues(t)
        self.excl = [m.start() for m in tx.EXCLUDE_RE.finditer(t)]
        self.genders = gender_spans(t)
        self.lines = tx.split_lines(t)
        self.flags: list[str] = []
        self.unmapped: list[str] = []
        self.hits: list[Hit] = []
        self.section: frozenset[str] = frozenset()  # the current men's / women's section
        self.other: str | None = None  # the text is about another "event" or "competition"
        self.other_in_prose = False  # ... said in prose: it lasts to the end of the paragraph
        self.pending: str | None = None  # a medal heading ("**Gold:**") waiting for its country
        self.pending_weak = False  # ... that is "The medals were won by:"
        self.epoch = 0  # corrections so far
        self.skipped_results = False  # results for another event were left out
        self.corrected = False  # a correction replaced results given earlier
        self.prev_medal: str | None = None  # the last medal paired
        self.skipped_year = False  # results for other games were left out
        self.other_games = False  # the paragraph so far is about other games
        self.carried_year = False  # a sentence was left out only because of the paragraph's other games
        self.other_list = False  # the list below a heading naming other games ("At the 2000 Games, the medals were:")
        self.table: TableLayout | None = None  # what the columns of a markdown table hold
        if any(
            _ALTERNATIVE.fullmatch(t, x.end if x.paren_end < 0 else x.paren_end, y.start)
            for x, y in zip(self.mentions, self.mentions[1:])
        ):
            self.flags.append("alternative-countries")  # "Bronze: Finland or Sweden": a guess between two

    def read_line(self, line: tx.Line) -> None:
        if line.blank:
            self._end_paragraph()
            return
        t = self.t
        line_ms = _within(self.mentions, line.start, line.end)
        line_cues = _within(self.strong, line.start, line.end)
        line_weak = [c for c in _within(self.weak, line.start, line.end) if not c.rank]
        is_row = t[line.start : line.end].lstrip().startswith("|")
        is_item = is_row or line.bullet or line.number is not None or bool(_MEDAL_LEAD.match(t, line.start, line.end))
        if self._in_other_games_list(line, line_ms, is_row, is_item):
            return
        self._update_pending(line, line_ms, line_cues, line_weak)
        if not line_ms and self.other is None:
            self._note_slot_text(line)
        if is_row:
            if self._read_table_line(line, line_ms):
                return
        else:
            self.table = None
        self._read_sentences(line, line_ms, line_cues, line_weak)

    def _end_paragraph(self) -> None:
        self.other_games = False
        if self.other_in_prose:
            self.other = None  # "... the 1998 World Cup. They went on to ..." ends with the paragraph

    def _in_other_games_list(self, line: tx.Line, line_ms: list[Mention], is_row: bool, is_item) -> bool:
        """True for an item of the list below a heading about other games ("At the 2000 Games in Sydney,
        the medals were:" for a 2004 prompt): the list is about them and is left out."""
        t = self.t
        if line.heading and not line_ms and not is_row:
            if tx.YEAR_RE.search(t, line.start, line.end):
                self.other_list = other_year(t[line.start : line.end], self.year)
        elif self.other_list and not is_item:
            self.other_list = False
        if self.other_list and is_item and not line.heading:
            if line_ms:
                self.skipped_year = self.carried_year = True
            return True
        return False

    def _update_pending(
        self, line: tx.Line, line_ms: list[Mention], line_cues: list[Cue], line_weak: list[Cue]
    ) -> None:
        """A medal heading ("**Gold:**", "The medals were won by:") waits for the country below it."""
        if line.heading and not line_ms:
            if line_cues:
                self.pending, self.pending_weak = line_cues[-1].medal, False
            elif line_weak:
                self.pending, self.pending_weak = "g", True
            elif not self.pending_weak:
                self.pending = None
        elif not line.bullet and line.number is None and not line_ms and not line.heading:
            self.pending = None

    def _note_slot_text(self, line: tx.Line) -> None:
        """ "Gold: Xanadu" with no country recognised: "Xanadu" is an unmapped string."""
        slot = _SLOT_TEXT.match(self.t, line.start, line.end)
        if slot and slot.group(1).strip() and slot.group(1).strip() not in self.unmapped:
            self.unmapped.append(slot.group(1).strip())

    def _read_table_line(self, line: tx.Line, line_ms: list[Mention]) -> bool:
        """A markdown table row: a header says what the columns hold, a row under it gives hits.
        False when the row is to be read as text."""
        row = table_row(self.t, line, self.table, line_ms, self.strong, self.genders)
        if row is None:  # header or separator
            self.table = table_header(self.t, line, line_ms, self.strong, self.genders) or self.table
            return True
        self._add_hits(row, True, False)
        return bool(row)

    def _read_sentences(
        self, line: tx.Line, line_ms: list[Mention], line_cues: list[Cue], line_weak: list[Cue]
    ) -> None:
        t = self.t
        listed = line.bullet or line.number is not None or bool(_MEDAL_LEAD.match(t, line.start, line.end))
        rank = None
        if (
            line.number in (1, 2, 3)
            and not line_cues
            and not line_weak
            and _leading_mention(t, line, line_ms) is not None
        ):
            rank = MEDALS[line.number - 1]
        own_medals = False  # the line names its medals itself ("Gold: X", "1. X")
        for a, b in line.sentences:
            own_medals = self._read_sentence(line, a, b, listed, rank) or own_medals
        if own_medals and self.pending_weak and (listed or line.heading):
            # "The medals were won by:" is answered by the list below it; a later list ("final
            # standings: 1. ... 4. ...") does not inherit it
            self.pending, self.pending_weak = None, False

    def _read_sentence(self, line: tx.Line, a: int, b: int, listed, rank: str | None) -> bool:
        """Collect the hits of sentence ``t[a:b]``; True when it names its medals itself."""
        s = self.t[a:b]
        self._update_section(line, s, a, b)
        if self._about_other_event(line, s, a, b):
            return False
        ms = _within(self.mentions, a, b)
        if not ms:
            return False
        sc = _within(self.strong, a, b)
        changed = bool(tx.CHANGED_LATER_RE.search(s))
        if self._about_other_games(line, s, a, b, sc, listed, changed):
            return False
        res = pair_sentence(
            self.t,
            a,
            b,
            ms,
            sc,
            _within(self.weak, a, b),
            [x for x in self.excl if a <= x < b],
            self.genders,
            self.prev_medal,
        )
        pairs = self._sentence_pairs(res, rank)
        if changed:
            pairs = apply_change(self.t, a, b, s, pairs, res.loose, self.hits)
        self._add_hits(pairs, listed, bool(_TIE_RE.search(s)))
        return bool(res.pairs) or (rank is not None and bool(res.loose))

    def _update_section(self, line: tx.Line, s: str, a: int, b: int) -> None:
        """A gender word starts a men's / women's section; a correction starts a new epoch."""
        g_here = frozenset(g for p, g in self.genders if a <= p < b)
        if g_here and (line.heading or not NEGATED_GENDER.search(s)):
            self.section = g_here if len(g_here) == 1 else frozenset()
        if tx.CORRECTION_RE.search(s):
            self.epoch += 1
            self.corrected = self.corrected or bool(self.hits)

    def _about_other_event(self, line: tx.Line, s: str, a: int, b: int) -> bool:
        """True while the text is about another event or competition (beach volleyball, world
        championships): its results do not count."""
        kind = self.target.other_event(s)
        if kind:
            self.other = kind if self.other != "competition" else self.other
            self.other_in_prose = self.other == "competition" and not s.rstrip().endswith(":") and not line.heading
            self.skipped_results = self.skipped_results or _names_results(self.mentions, self.strong, a, b)
            return True
        if self.other == "event" and self.target.mentioned(s):
            self.other = None
        elif self.other == "competition" and re.search(r"\bOlympic|\bGames\b", s):
            self.other = None
        if self.other:
            self.skipped_results = self.skipped_results or _names_results(self.mentions, self.strong, a, b)
            return True
        return False

    def _about_other_games(self, line: tx.Line, s: str, a: int, b: int, sc: list[Cue], listed, changed: bool) -> bool:
        """True for results for other games; prose after "At the 2000 Games, ..." stays about them."""
        if self.other_games and (line.heading or (tx.YEAR_RE.search(s) and not other_year(s, self.year))):
            self.other_games = False
        cue0 = min([c.start for c in sc] + [c.start for c in _within(self.weak, a, b)], default=None)
        if (
            cue0 is not None
            and not changed
            and (other_year(s, self.year, cue0 - a) or (self.other_games and not tx.YEAR_RE.search(s)))
        ):
            self.skipped_year = True
            self.carried_year = self.carried_year or self.other_games
            self.other_games = self.other_games or (not self.hits and not listed and not line.heading)
            return True
        return False

    def _sentence_pairs(self, res: SentenceResult, rank: str | None) -> list[tuple[Mention, str, frozenset[str]]]:
        """The sentence's (country, medal, gender) pairs; countries without a medal word take the
        line's rank ("1. X") or the medal heading above them."""
        pairs = [(p.mention, p.medal, p.gender) for p in res.pairs]
        if res.pairs:
            self.prev_medal = res.pairs[-1].medal
            if any(p.how == "rank" for p in res.pairs) and "ranked-by-order" not in self.flags:
                self.flags.append("ranked-by-order")  # "won by X, Y and Z": order read as gold/silver/bronze
        if not res.has_medal_word and res.loose:
            medal = rank if rank is not None else self.pending
            if medal is not None:
                loose = res.loose[:1] if (rank is not None or self.pending_weak) else res.loose
                if self.pending_weak and rank is None:
                    self.pending, self.pending_weak = None, False
                for m in loose:
                    pairs.append((m, medal, _paren_gender(self.genders, m)))
        return pairs

    def _add_hits(self, pairs, listed, tie: bool) -> None:
        """Record the pairs as hits in the current section and epoch (unmapped countries are noted)."""
        for m, medal, g in pairs:
            if m.code is None:
                _note_unmapped(m, self.flags, self.unmapped)
                continue
            self.hits.append(
                Hit(g or self.section, medal, m.code, self.epoch, m.start, listed, tie, not g and bool(self.section))
            )

    def result(self, stated: str | None, specified: bool) -> Extraction:
        """The :class:`Extraction` of the hits, with the answer's status."""
        t = self.t
        changed = bool(tx.CHANGED_STATUS_RE.search(t)) and not tx.OVERTURNED_RE.search(t)
        ambiguous = any(f.startswith(("ambiguous-country", "germany-")) for f in self.flags)
        unsure = (
            self.skipped_results
            or self.corrected
            or ambiguous
            or (bool(self.hits) and (changed or bool(tx.NO_EVENT_RE.search(t))))
        )
        # results given only for other games ("at the 2012 Games ..." for a 2016 prompt): nothing counts
        only_other_games = self.skipped_year and not any(h.epoch >= 0 for h in self.hits)
        unsure = unsure or only_other_games
        if only_other_games or self.carried_year:
            self.flags.append("other-games-results")
        return assemble(
            t,
            self.hits,
            self.genders,
            stated,
            specified,
            self.flags,
            self.unmapped,
            "unsure" if unsure else "accepted",
            self.lines,
        )


def _within(items: list, a: int, b: int) -> list:
    return [x for x in items if a <= x.start < b]


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
