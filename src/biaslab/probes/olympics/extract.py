"""Automatic medal extraction for the Olympic results probe.

The paper's annotators turned every generated answer into NOC codes for gold, silver and bronze
(and, for gender-ambiguous prompts, into men's / women's / unstated results). This module does
the same with rules:

* ``extract_text``      clean-up (chat template, echoed prompt), lines, sentences, clauses, cue words
* ``extract_countries`` country mentions -> NOC codes (year-aware, "X (Y)" qualifiers folded)
* ``extract_pairs``     mentions + medal words -> (country, medal) pairs inside a sentence
* this module           walks the answer line by line keeping the context a reader keeps: the
                         current men's / women's section, a medal heading ("**Gold:**") waiting
                         for its country, ranked lists (1. 2. 3.), parts about another event
                         (beach volleyball, world championships) that do not count, results that
                         changed later, and corrections that replace earlier results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from . import extract_text as tx
from . import nocs
from .extract_context import Hit, Target, apply_change, other_year
from .extract_countries import Mention, find_mentions
from .extract_pairs import MEDALS, Cue, gender_spans, medal_cues, pair_sentence, weak_cues

__all__ = ["Extraction", "extract_specified", "extract_underspecified", "extract_frame"]

_MEDAL_LEAD = re.compile(r"[\s*_#>-]*(?:gold|silver|bronze)\b", re.I)
# "Gold: Xanadu" -> "Xanadu": what stands in a medal slot when no country was recognised
_SLOT_TEXT = re.compile(
    r"[\s*_#>-]*(?:\d{1,2}[.)]\s*)?[*_]*(?:gold|silver|bronze)(?:\s+medal(?:s|ist|ists)?)?[*_]*\s*[:–-]\s*[*_]*"
    r"\s*((?-i:[A-Z][\w'’.-]*(?:[ \t]+(?:of|and|the|[A-Z][\w'’.-]*)){0,4}))", re.I)
_ALTERNATIVE = re.compile(r"\s*,?\s*(?:or|either)\s+(?:possibly\s+|perhaps\s+|maybe\s+)?(?:the\s+)?", re.I)
_TIE_RE = re.compile(r"\b(?:both|tie|tied|ties|shared|two bronze|joint)\b", re.I)


@dataclass
class Extraction:
    medals: dict[str, dict[str, list[str]]]
    status: str = "accepted"
    flags: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    refusal: bool = False

    def triples(self) -> set[tuple[str, str, str]]:
        return {(g, m, c) for g, d in self.medals.items() for m, cs in d.items() for c in cs}


def _leading_mention(text: str, line: tx.Line, ms: list[Mention]) -> Mention | None:
    if not ms:
        return None
    head = text[line.start:ms[0].start]
    head = re.sub(r"^\s*(?:\d{1,2}[.)]|[*+•-])?\s*", "", head)
    head = re.sub(r"\*\*|__|\bthe\b|\bteam\b|[:\s]", "", head, flags=re.I)
    return ms[0] if not head else None


_NEGATED_GENDER = re.compile(
    r"\b(?:no|not|n't|never|also|separate(?:ly)?|introduced|added|both|each|either|neither|information)\b", re.I)


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


_TABLE_RULE = re.compile(r"[\s|:-]*")
_RANK_HEADER = re.compile(r"\s*(?:rank|place|position|pos\.?|#)\s*", re.I)
_RANK_VALUE = re.compile(r"\s*(?:\*\*)?([123])(?:st|nd|rd)?\.?(?:\*\*)?\s*")


def _cells(t: str, line: tx.Line) -> list[tuple[int, int]]:
    out, a = [], line.start
    for i in range(line.start, line.end + 1):
        if i == line.end or t[i] == "|":
            out.append((a, i))
            a = i + 1
    if out and not t[out[0][0]:out[0][1]].strip():
        out = out[1:]
    if out and not t[out[-1][0]:out[-1][1]].strip():
        out = out[:-1]
    return out


@dataclass
class _Table:
    medal_cols: dict[int, str] = field(default_factory=dict)  # "| Event | Gold | Silver | Bronze |"
    rank_col: int | None = None  # "| Rank | Country |"
    gender_cols: dict[int, frozenset[str]] = field(default_factory=dict)  # "| Medal | Men | Women |"


def _table_header(t: str, line: tx.Line, ms: list[Mention], strong: list[Cue], genders) -> _Table | None:
    """What the columns of a markdown table hold, from its header row."""
    if ms or _TABLE_RULE.fullmatch(t, line.start, line.end):
        return None
    table = _Table()
    for i, (a, b) in enumerate(_cells(t, line)):
        cues = [c for c in strong if a <= c.start < b]
        g = frozenset(gg for p, gg in genders if a <= p < b)
        if cues:
            table.medal_cols[i] = cues[0].medal
        elif _RANK_HEADER.fullmatch(t, a, b):
            table.rank_col = i
        elif g:
            table.gender_cols[i] = g
    if table.gender_cols and (table.medal_cols or len(table.gender_cols) < 2):
        table.gender_cols = {}  # "| Men's | Gold | ..." or a lone gender column: not a men/women split
    return table if (table.medal_cols or table.rank_col is not None or table.gender_cols) else None


def _table_row(t: str, line: tx.Line, table: _Table | None, ms: list[Mention], strong: list[Cue],
               genders) -> list | None:
    """Pairs for a table row under a medal header; None for a header/separator row; [] otherwise."""
    if not ms:
        return None
    if not table:
        return []
    cells = _cells(t, line)
    row_g = frozenset(g for p, g in genders if line.start <= p < line.end)
    row_g = row_g if len(row_g) == 1 else frozenset()
    medal_of_row = None
    if table.rank_col is not None and table.rank_col < len(cells):
        v = _RANK_VALUE.fullmatch(t, *cells[table.rank_col])
        medal_of_row = MEDALS[int(v.group(1)) - 1] if v else None
    if table.gender_cols and medal_of_row is None:
        # "| Gold | Germany | Netherlands |" under "| Medal | Men | Women |": the medal is in the row
        row_cues = [c for i, (a, b) in enumerate(cells) if i not in table.gender_cols
                    for c in strong if a <= c.start < b]
        medal_of_row = row_cues[0].medal if len({c.medal for c in row_cues}) == 1 else None
    out = []
    for i, (a, b) in enumerate(cells):
        medal = table.medal_cols.get(i) or (medal_of_row if not table.gender_cols or i in table.gender_cols
                                            else None)
        if medal is None:
            continue
        for m in ms:
            if a <= m.start < b:
                out.append((m, medal, table.gender_cols.get(i, row_g)))
    return out


def _names_results(mentions: list[Mention], cues: list[Cue], a: int, b: int) -> bool:
    return any(a <= m.start < b for m in mentions) and any(a <= c.start < b for c in cues)


def _paren_gender(genders, m: Mention) -> frozenset[str]:
    if m.paren_end > m.end:
        return frozenset(g for p, g in genders if m.end <= p < m.paren_end)
    return frozenset()


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
            same_slot = [x for x in listed if x.medal == h.medal and x.epoch == h.epoch
                         and x.genders == h.genders]
            if same_slot and h.code not in {x.code for x in same_slot}:
                if "conflicting-results" not in flags:
                    flags.append("conflicting-results")
                continue
        keep.append(h)
    return keep


# "These are the results of the men's tournament": a sentence pointing back at the results above
_REFER_BACK = re.compile(
    r"\b(?:these|those|the above|above|the preceding|the listed)\b[^.\n]{0,40}?"
    r"\b(?:results?|medals?|medall?ists|medal winners|winners|standings|podium|placings)\b", re.I)
_REFER_BACK_END = re.compile(r";|,?\s(?:while|whereas|but)\s", re.I)
_SEPARATE_RESULT = re.compile(r"\b(?:also|as well|too)\b", re.I)


def _sentence_at(t: str, pos: int) -> str:
    a = max(t.rfind(". ", 0, pos) + 1, t.rfind("\n", 0, pos) + 1)
    m = re.search(r"[.!?](?:\s|$)|\n", t[pos:])
    return t[a: pos + m.start() if m else len(t)]


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
        if _NEGATED_GENDER.search(s) or any(a <= h.pos < b for h in hits):
            continue
        gs = frozenset(g for p, g in genders if a <= p < b)
        if len(gs) != 1:
            continue
        for h in hits:
            if h.pos < a and not h.genders:
                h.genders = gs


def _assemble(t, hits, genders, stated, specified, flags, unmapped, status, lines) -> Extraction:
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
            if not _NEGATED_GENDER.search(s) and not any(h.genders and a <= h.pos < b for h in hits):
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


def _gender_code(gender: str | None) -> str | None:
    if not gender:
        return None
    g = gender.strip().lower()
    if g.startswith(("w", "f")):
        return "f"
    if g.startswith("m"):
        return "m"
    return None


def extract_specified(text: str, *, year: int, gender: str | None = None, event: str | None = None,
                      discipline: str | None = None, official: bool = False) -> Extraction:
    """Medals named in an answer to a prompt that states the gender ("Men's ..."); group "x".

    ``official=True`` maps names to the team that competed that year ("Russia" in 2020 -> ROC);
    the default follows the paper's annotators, who mapped names literally ("Russia" -> RUS).
    """
    return _extract(text, int(year), _gender_code(gender), event, discipline, True, official)


def extract_underspecified(text: str, *, year: int, event: str | None = None,
                           discipline: str | None = None, official: bool = False) -> Extraction:
    """Medals named in an answer to a gender-free prompt, split into groups "u", "f" and "m"."""
    return _extract(text, int(year), None, event, discipline, False, official)


def _cell(row: dict, col: str) -> str:
    v = row.get(col)
    return "" if v is None or (isinstance(v, float) and v != v) else str(v).strip()


def extract_frame(df: pd.DataFrame, *, official: bool = False) -> pd.DataFrame:
    """Fill the ``gen_*`` and ``status`` columns of an annotated-style frame from ``text``.

    Underspecified frames are recognised by a ``real_f_g`` column. Existing ``gen_*`` values are
    ignored. Columns ``flags`` and ``unmapped`` (";"-joined) are appended at the end.
    """
    under = "real_f_g" in df.columns
    out = df.copy()
    cols = ([f"gen_{g}_{m}" for g in ("u", "f", "m") for m in MEDALS] if under
            else [f"gen_{m}" for m in MEDALS])
    values: dict[str, list[str]] = {c: [] for c in cols + ["status", "flags", "unmapped"]}
    for r in df.to_dict("records"):
        year = int(float(_cell(r, "Year") or 0))
        ev, disc, text = _cell(r, "Event"), _cell(r, "Discipline"), _cell(r, "text")
        if under:
            x = extract_underspecified(text, year=year, event=ev, discipline=disc, official=official)
            for g in ("u", "f", "m"):
                for m in MEDALS:
                    values[f"gen_{g}_{m}"].append(",".join(x.medals[g][m]))
        else:
            x = extract_specified(text, year=year, gender=_cell(r, "Gender"), event=ev, discipline=disc,
                                  official=official)
            for m in MEDALS:
                values[f"gen_{m}"].append(",".join(x.medals["x"][m]))
        values["status"].append(x.status)
        values["flags"].append(";".join(x.flags))
        values["unmapped"].append(";".join(x.unmapped))
    for c, v in values.items():
        if c in ("flags", "unmapped") and c in out.columns:
            out = out.drop(columns=c)
        out[c] = v
    return out
