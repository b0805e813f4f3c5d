"""Text clean-up, segmentation (lines, sentences, clauses) and the cue vocabularies."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# --- clean-up -------------------------------------------------------------------------------

_ASSISTANT_HEADERS = re.compile(
    r"<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>|\[/INST\]|<\|im_start\|>\s*assistant"
    r"|<start_of_turn>\s*model|<\|assistant\|>",
)
_SPECIAL_TOKENS = re.compile(r"<\|[^|>]{1,40}\|>|</?s>|\[/?INST\]|<(?:start|end)_of_turn>")
_PROMPT_ECHO = re.compile(r"\A\s*(?:user\s*)?Who won the medals in the [^?\n]{0,200}\?\s*", re.I)
_QUOTES = str.maketrans(
    {"’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " ", "–": "-", "—": "-", "\u2009": " ", "\u202f": " "}
)


def clean(text: str) -> str:
    """The model's answer only: chat template, special tokens and an echoed prompt removed."""
    last = None
    for m in _ASSISTANT_HEADERS.finditer(text):
        last = m  # the last header: the answer follows it
    if last is not None:
        text = text[last.end() :]
    text = _SPECIAL_TOKENS.sub("", text)
    text = _PROMPT_ECHO.sub("", text, count=1)
    return text.translate(_QUOTES).replace("\r\n", "\n").replace("\r", "\n")


# --- cue vocabularies ------------------------------------------------------------------------

_ORD_OK = r"(?=[ \t]*(?:place\b|position\b|spot\b|[:)\],.-]|\n|$))"
MEDAL_RE = re.compile(
    r"(?P<g>\bgold(?:en)?\b|🥇|\b(?:first|1st|top)[- ](?:place|position|spot)\b"
    r"|\btop(?:ped|s|ping)?\s+(?:of\s+)?the\s+(?:medal\s+)?(?:podium|standings)\b|\btop step of the podium\b"
    r"|(?<!defending )(?<!reigning )(?<!former )(?<!previous )(?<!World )\bchampions?\b(?!ship)"
    r"|\b1st\b" + _ORD_OK + r"|(?<![a-z] )\b1st\b|\bfirst\b(?=[ \t]*(?:[:)]|-\s)))"
    r"|(?P<s>\bsilver\b|🥈|\b(?:second|2nd)[- ](?:place|position|spot)\b|\brunners?[- ]up\b"
    r"|\b2nd\b" + _ORD_OK + r"|(?<![a-z] )\b2nd\b|\bsecond\b(?=[ \t]*(?:[:)]|-\s)))"
    r"|(?P<b>\bbronze\b|🥉|\b(?:third|3rd)[- ](?:place|position|spot)\b"
    r"|\b3rd\b" + _ORD_OK + r"|(?<![a-z] )\b3rd\b|\bthird\b(?=[ \t]*(?:[:)]|-\s)))"
    r"|(?:\b(?:finish(?:ed|ing)|plac(?:ed|ing)|c(?:a|o)me|coming|took|taking|in)\s+(?:in\s+)?)"
    r"(?:(?P<g2>first)|(?P<s2>second)|(?P<b2>third))\b"
    r"|\b(?:(?P<s3>second)|(?P<b3>third))\b(?=[ \t]*(?:[,.;)\n]|and\b|$))",
    re.I,
)
# "won by", "the winner was", "X won the event": gold when no medal is named in the sentence.
WEAK_GOLD_RE = re.compile(
    r"\bwon by\b|(?<!medal )(?<!medals )\bwinners?\b(?=[^.:\n]{0,160}?\b(?:was|were|is|are)\b)"
    r"|(?<!medal )\bwinners?\b(?=\s*[:-])|\bwinning (?:team|nation|country|side|crew|squad)\b"
    r"|\bwon\s+(?:the|this|that)\s+(?:[\w'-]+\s+){0,5}?(?:event|title|tournament|competition|final|race|relay"
    r"|match)\b|\btitles?\b|\bvictorious\b|\btriumphed\b|\bclaimed the title\b|\btook the title\b"
    r"|\bwon\b(?=[ \t]*(?:[,.;:]|\n|$|\s+(?:it|in \d{4}|with a time|with a score)))"
    r"|\bwon\b(?=[^.;:\n]{0,80}?,?\s+followed (?:closely )?by\b)",
    re.I,
)
# "the podium was X, Y and Z": an ordered list of countries reads as gold, silver, bronze
RANK_CUE_RE = re.compile(
    r"\bpodium\b|\b(?:medal(?:ists|lists)|medal winners|top three|final standings|finishing order|standings)\b"
    r"(?=[^.:\n]{0,60}?\b(?:was|were|is|are)\b)|\btop three\b",
    re.I,
)
MEN_RE = re.compile(r"\b(?:men|men's|mens|male|males|man's|boys)\b", re.I)
WOMEN_RE = re.compile(r"\b(?:women|women's|womens|female|females|ladies|ladies'|woman's|girls)\b", re.I)

# A country after one of these words (same clause) did not win the medal of that clause.
EXCLUDE_RE = re.compile(
    r"\b(?:defeat(?:ed|ing|s)?|beat(?:ing|s|en)?|against|over|versus|vs\.?|edg(?:ed|ing|es)(?:\s+out)?"
    r"|overc(?:ome|oming|ame)|behind|lost to|losing to|loss to|outlast(?:ed|ing)"
    r"|upset(?:ting)?|overpower(?:ed|ing)|eliminat(?:ed|ing)|knock(?:ed|ing) out|not|instead of"
    r"|rather than|unlike|surpass(?:ed|ing)|outscor(?:ed|ing)|dethron(?:ed|ing)|top(?:ped|ping)"
    r"|trounc(?:ed|ing)|rout(?:ed|ing)|outpac(?:ed|ing)|bested|past)\b",
    re.I,
)
RESPECTIVELY_RE = re.compile(r"\brespectively\b", re.I)
FOLLOWED_BY_RE = re.compile(r"\bfollowed (?:closely )?by\b|\bahead of\b", re.I)

# The result changed after the games: the clause's country loses its medal / receives one.
STRIPPED_RE = re.compile(
    r"\b(?:stripped|disqualified|revoked|annulled|rescinded|forfeited|lost (?:their|its|the) (?:\w+ )?medals?"
    r"|taken away|withdrawn)\b",
    re.I,
)
REALLOCATED_RE = re.compile(
    r"\b(?:re-?allocated|re-?assigned|re-?awarded|awarded|given|upgraded|promoted|elevated|handed)\s+to\b"
    r"|\b(?:were|was)\s+(?:subsequently\s+|later\s+|then\s+)?awarded\b",
    re.I,
)
OVERTURNED_RE = re.compile(r"\b(?:overturned|reinstated|restored)\b", re.I)
CHANGED_LATER_RE = re.compile(
    r"\b(?:stripped|disqualified|disqualification|re-?allocated|re-?assigned|revoked|annulled|doping"
    r"|positive (?:drug )?test|later (?:awarded|upgraded|given)|upgraded to|overturned|controversy"
    r"|initially (?:awarded|won|finished)|originally (?:won|awarded|finished))\b",
    re.I,
)
# For the status: the answer says the event did not exist / the results changed afterwards.
NO_EVENT_RE = re.compile(
    r"\bthere (?:was|were|is|are) no\b[^.\n]{0,120}\b(?:event|competition|tournament|race)"
    r"|\b(?:event|tournament|competition|race|relay|sport)\b[^.\n]{0,80}?\b(?:(?:was|were|is)\s+not|wasn't|weren't"
    r"|isn't)\s+(?:held|contested|part of|included|an? (?:official|Olympic|medal)"
    r"|introduced|on the (?:Olympic )?program)"
    r"|\bdid(?: not|n't) (?:take place|exist)|\bdemonstration (?:event|sport)"
    r"|\bnot an official (?:Olympic )?(?:event|sport)"
    r"|\bno such event\b",
    re.I,
)
CHANGED_STATUS_RE = re.compile(
    r"\b(?:stripped|disqualified|disqualification|re-?allocated|re-?assigned|revoked|annulled"
    r"|later (?:awarded|upgraded|given)|upgraded to|initially awarded|originally awarded)\b",
    re.I,
)
OTHER_EVENT_RE = re.compile(
    r"\bworld championships?\b|\bworld cup\b|\bparalympic|\byouth olympic|\bqualif(?:ying|ication|ier)\b"
    r"|\bcommonwealth games\b|\bpan american games\b|\basian games\b|\beuropean championships?\b"
    r"|\bgoodwill games\b|\bFIVB\b|\bFIFA\b(?! Women's World Cup)|\bWorld Youth\b",
    re.I,
)
NOT_EVENT_PAREN_RE = re.compile(r"\(\s*not\s+[^)]{1,60}\)|,\s*not\s+(?:the\s+)?[A-Z]\w+(?:\s+\w+)?", re.I)
CORRECTION_RE = re.compile(
    r"\bcorrect(?:ed|ion)\b|\bcorrect (?:information|results|answer|medal)|\bactual (?:winners|results"
    r"|medal(?:ist)?s|medal winners|results)\b|\bapologi[sz]e\b|\bmy mistake\b|\bI made (?:a|an) (?:mistake|error)"
    r"|\bincorrect\b|\bmistakenly\b",
    re.I,
)
REFUSAL_RE = re.compile(
    r"\bI (?:don't|do not|didn't|did not|cannot|can't|couldn't|could not|am unable|'m unable|am not able"
    r"|'m not able|have no)\b|\bunable to (?:provide|find|verify|confirm|access)|\bno (?:reliable )?information\b"
    r"|\bnot (?:able|possible) to (?:provide|find|verify)|\bknowledge cut-?off\b|\bI'm sorry\b|\bI apologi[sz]e\b"
    r"|\bdon't have (?:access|information|specific|the specific|details)",
    re.I,
)
YEAR_RE = re.compile(r"\b(?:18|19|20)\d\d\b")

_ASIDE_OPEN = re.compile(r".*[(,;]", re.S)
_ASIDE_WORDS = re.compile(r"\b(?:who|which|whose|after|since|having|reigning|defending|former|previous)\b", re.I)


def aside(s: str, pos: int) -> bool:
    """Is ``pos`` inside a parenthesis or a relative clause ("Spain, who won the World Cup, ...")?"""
    if s.count("(", 0, pos) > s.count(")", 0, pos):
        return True
    m = _ASIDE_OPEN.match(s, 0, pos)
    clause = s[m.end() if m else 0 : pos]
    return bool(_ASIDE_WORDS.search(clause))


# --- segmentation ----------------------------------------------------------------------------

_LINE_MARKER = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?P<num>\d{1,2})[.)](?!\d)\s*|(?P<bullet>[*+•·▪◦-])\s+|#{1,6}\s+|>\s*)?"
)
_BOLD = re.compile(r"\*\*|__|(?<!\w)\*(?!\s)|(?<=\S)\*(?!\w)|`")
_SENT_END = re.compile(r"[.!?](?=\s+[\"'(*\[]?[A-Z0-9])")
_ABBREV = re.compile(r"(?:\b(?:U\.S|U\.K|U\.S\.A|St|Mr|Mrs|Ms|Dr|Jr|Sr|vs|No|approx|Mt|e\.g|i\.e|etc)|\b[A-Z])$")


@dataclass
class Line:
    start: int
    end: int
    text: str  # the raw line
    indent: int
    number: int | None  # numbered-list item number
    bullet: bool
    heading: bool  # ends with ":" / all bold / markdown heading
    blank: bool
    sentences: list[tuple[int, int]] = field(default_factory=list)


def split_lines(text: str) -> list[Line]:
    lines: list[Line] = []
    pos = 0
    for raw in text.split("\n"):
        start, end = pos, pos + len(raw)
        pos = end + 1
        m = _LINE_MARKER.match(raw)
        assert m is not None  # the pattern matches every line (all its parts are optional)
        body = raw[m.end() :]
        plain = _BOLD.sub("", body).strip()
        indent = len(m.group("indent").expandtabs(4))
        num = int(m.group("num")) if m.group("num") else None
        stripped = body.strip()
        heading = bool(plain) and (
            plain.endswith(":")
            or raw.lstrip().startswith("#")
            or (
                stripped.startswith(("**", "__"))
                and stripped.rstrip(":").endswith(("**", "__"))
                and stripped.count("**") + stripped.count("__") == 2
            )
        )
        line = Line(start, end, raw, indent, num, bool(m.group("bullet")), heading, not plain)
        line.sentences = split_sentences(text, start + m.end(), end)
        lines.append(line)
    return lines


def split_sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    s = start
    for m in _SENT_END.finditer(text, start, end):
        if _ABBREV.search(text, max(start, m.start() - 6), m.start()):
            continue
        out.append((s, m.end()))
        s = m.end()
    if s < end and text[s:end].strip():
        out.append((s, end))
    return out


_CLAUSE_SPLIT = re.compile(r";|,(?=\s)|\s(?:while|whereas|but|and|although|though|however)\s|\s\|\s|\|", re.I)


def clause_breaks(text: str, start: int, end: int) -> list[int]:
    """Positions in [start, end) where a clause boundary starts, ignoring those in parentheses."""
    depth = 0
    paren_spans = []
    open_at = -1
    for i in range(start, end):
        c = text[i]
        if c == "(":
            if depth == 0:
                open_at = i
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            if depth == 0:
                paren_spans.append((open_at, i))
    out = []
    for m in _CLAUSE_SPLIT.finditer(text, start, end):
        p = m.start()
        if any(a < p < b for a, b in paren_spans):
            continue
        out.append(p)
    return out
