"""Find country mentions (names, demonyms, NOC codes) in generated text.

All known spellings are compiled into one trie-shaped regex, so a scan costs about one pass
over the text whatever the size of the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from biaslab.probes.olympics import nocs

# Capitalised words that may stand next to a name-like country without making it a person's name.
_NEIGHBOUR_OK = frozenset(
    {
        "The",
        "Team",
        "Gold",
        "Silver",
        "Bronze",
        "Medal",
        "Medals",
        "Olympic",
        "Olympics",
        "And",
        "In",
        "Men's",
        "Women's",
        "Mens",
        "Womens",
        "Winner",
        "Winners",
        "Champion",
        "Champions",
        "National",
        "Republic",
        "First",
        "Second",
        "Third",
        "Place",
        "By",
        "To",
        "From",
        "For",
        "Of",
        "With",
        "However",
        "Meanwhile",
        "Then",
        "Also",
        "Finally",
        "Overall",
        "Note",
        "So",
        "While",
        "Both",
        "Women",
        "Men",
        "Team's",
        "Rugby",
        "Football",
        "Hockey",
        "Handball",
        "Basketball",
        "Volleyball",
        "Curling",
    }
)

_PAREN_KEEP_FIRST = re.compile(r"\b(?:now|formerly|former|later|previously|renamed|today|then known)\b", re.I)


@dataclass
class Mention:
    start: int
    end: int
    raw: str
    code: str | None  # None when unmapped or ambiguous
    flag: str | None = None  # ambiguity flag from nocs.lookup
    paren_end: int = -1  # end of a parenthetical that qualifies this mention, if any


def _trie_regex(words: list[str]) -> str:
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = True

    def build(node: dict) -> str:
        end = "" in node
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch != ""]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if end:
            return "(?:" + body + ")?"
        return body

    return build(trie)


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    words = [w for w in nocs.all_aliases() if w and w not in ("IOC",)]
    body = _trie_regex(words)
    return re.compile(r"(?<![\w.])" + "(?:" + body + r")(?![\w’'-]\w)(?!\w)")


_CAP_BEFORE = re.compile(r"([A-Z][a-z'’]+)\s$")
_CAP_AFTER = re.compile(r"\s([A-Z][a-z'’]+)")
_PAREN_AT = re.compile(r"\s*\(")
# "in Seoul, South Korea were ...", "held in Spain": where the games took place, not a medallist
_HOST_BEFORE = re.compile(
    r"(?:\b(?:in|at)\s+(?:(?:[A-Z][\w'.-]*|de|del|la|da|do)\s+){0,3}[A-Z][\w'.-]*,\s*(?:[A-Z][\w'.-]*,\s*)?"
    r"|\b(?:held|hosted|took place|staged|Games|Olympics|Olympiad)\s+(?:in|by)\s+(?:the\s+)?)$"
)
_HOST_AFTER = re.compile(r"\s*(?:$|[,.:;)(]|\b(?:were|was|from|on|in|and|between|during)\b)")


def _is_person_name(text: str, m: re.Match[str]) -> bool:
    before = _CAP_BEFORE.search(text, max(0, m.start() - 30), m.start())
    if before and before.group(1) not in _NEIGHBOUR_OK:
        return True
    after = _CAP_AFTER.match(text, m.end())
    if after and after.group(1) not in _NEIGHBOUR_OK and nocs.lookup(after.group(1), 2000).code is None:
        return True
    return False


def _code_context_ok(text: str, m: re.Match[str]) -> bool:
    """A code that is also an English word counts only in parentheses or on its own."""
    s, e = m.start(), m.end()
    if s > 0 and text[s - 1] == "(":
        return True
    line_start = text.rfind("\n", 0, s) + 1
    line_end = text.find("\n", e)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    return bool(re.fullmatch(r"[\W\d_]*(?:\w+\W+)?" + re.escape(m.group()) + r"[\W\d_]*", line))


def find_mentions(text: str, year: int, *, official: bool = False) -> list[Mention]:
    """Every country mention in ``text``; "X (Y)" qualifiers are folded into one mention."""
    out: list[Mention] = []
    for m in _pattern().finditer(text):
        raw = m.group()
        if raw in nocs.NAME_LIKE and _is_person_name(text, m):
            continue
        if raw in nocs.WORDLIKE_CODES and not _code_context_ok(text, m):
            continue
        if _HOST_BEFORE.search(text, max(0, m.start() - 60), m.start()) and _HOST_AFTER.match(text, m.end()):
            continue
        res = nocs.lookup(raw, year, official=official)
        if res.code is None and res.flag is None:
            continue  # a recognised non-country ("South America")
        out.append(Mention(m.start(), m.end(), raw, res.code, res.flag))
    return _fold_parentheses(text, out)


def _fold_parentheses(text: str, ms: list[Mention]) -> list[Mention]:
    """Fold "A (B ...)": country mentions inside a parenthesis right after A qualify A.

    The more specific of the two wins ("Russia (ROC)" -> ROC, "Korea (South Korea)" -> KOR),
    unless the parenthesis talks about another time ("Yugoslavia (now Serbia and Montenegro)").
    """
    out: list[Mention] = []
    i = 0
    while i < len(ms):
        a = ms[i]
        i += 1
        p = _PAREN_AT.match(text, a.end)
        if p is None:
            out.append(a)
            continue
        close = text.find(")", p.end())
        nl = text.find("\n", p.end())
        if close < 0 or (0 <= nl < close):
            out.append(a)
            continue
        inner = []
        while i < len(ms) and ms[i].start < close:
            inner.append(ms[i])
            i += 1
        chosen = a
        if inner and _PAREN_KEEP_FIRST.search(text, p.end(), close) is None:
            for b in inner:
                if b.code is not None and (a.code is None or a.code in nocs.SPECIAL_FOR.get(b.code, ())):
                    chosen = b
                    break
        flag = a.flag if chosen.code is None else None
        out.append(Mention(a.start, a.end, a.raw, chosen.code, flag, close + 1))
    return out
