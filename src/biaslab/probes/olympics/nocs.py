"""National Olympic Committee (NOC) codes and a year-aware name -> code lookup.

``KNOWN_NOCS`` holds every code an annotated file may contain: the current IOC members and every
code the IOC has used for a team before (changed codes such as SIN -> SGP, defunct countries such as
URS, FRG, TCH, YUG, and the special teams EUN, IOP, IOA, ROT, EOR, OAR, ROC, COR; see
:mod:`.nocs_history`). ``EXTRACTABLE_CODES`` is the subset the extractor reads as codes in text.

``to_noc(name, year)`` maps a country mention ("Soviet Union", "Dutch", "Team GB", "USA") to the
code that country competed under at the games of ``year``; ``lookup`` does the same and also says
*why* a mention could not be mapped (unknown string vs. genuinely ambiguous, such as "Korean" or
"Germany" at the 1988 games, when both German states competed).

The names of the current NOCs are data: ``nocs.tsv`` next to this module, read once on import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from biaslab.probes.olympics.nocs_history import HISTORICAL_CODES

# nocs.tsv holds one row per code: the code, its official-ish name, and its other names and
# demonyms/adjectives ("; "-separated). Matching is case-sensitive on the spelling given there (an
# all-caps variant is added for names).

# Codes the probe accepts that have no row in nocs.tsv (older/alternative codes, and MGO, which
# the annotated olympics data uses for Mongolia).
_EXTRA_CODES = {
    "URS",
    "YUG",
    "RUS",
    "SRB",
    "ROT",
    "MGO",
    "BOH",
    "SAA",
    "NBO",
    "VNM",
    "YAR",
    "YMD",
    "CRT",
    "WIF",
    "NFL",
    "RU1",
}

# Names whose code depends on the year of the games (handled in ``lookup``).
_SOVIET = ("Soviet Union", "Soviet", "Soviets", "USSR", "U.S.S.R.", "Union of Soviet Socialist Republics", "URS")
_RUSSIA = ("Russia", "Russian", "Russians", "RUS", "Team Russia")
_YUGO = ("Yugoslavia", "Yugoslav", "Yugoslavian", "Federal Republic of Yugoslavia", "FR Yugoslavia", "YUG")
_SERBIA = ("Serbia", "Serbian", "Serbians", "SRB")
_GERMANY_AMBIGUOUS = ("Germany", "German", "Germans", "GER")
_KOREA_AMBIGUOUS = ("Korea", "Korean", "Koreans")

# Mentions that look like a country but are not one (continents, leagues, ...): they are
# recognised so that a shorter alias inside them ("America" in "South America") does not fire.
_NOT_COUNTRIES = (
    "South America",
    "North America",
    "Latin America",
    "Central America",
    "Pan American",
    "Pan-American",
    "Pan Am",
    "African American",
    "Native American",
    "American football",
    "American Samoa's",
    "Northern Ireland",
    "New England",
    "New South Wales",
    "Georgia Tech",
    "Republic of China (Taiwan)",
    "US Open",
    "U.S. Open",
    "Soviet-era",
    "Soviet era",
    "East Asian",
    "West Indies",
    "West Indian",
    "Russian roulette",
)

# Spellings that are also common given names or surnames; the extractor only accepts them when
# they are not glued to another capitalised word ("Michael Jordan", "Jordan Burroughs").
NAME_LIKE = frozenset(
    {
        "Jordan",
        "Chad",
        "Georgia",
        "Israel",
        "Kenya",
        "India",
        "Guinea",
        "Mali",
        "Niger",
        "Oman",
        "Tonga",
        "Dominica",
        "Wales",
        "England",
        "Holland",
        "Lao",
        "Pole",
        "Poles",
        "Finn",
        "Dane",
        "Kiwi",
        "Taipei",
        "Trinidad",
        "Bosnia",
        "Macedonia",
        "Congo",
        "Saudi",
        "Swazi",
        "Burma",
        "Malaya",
        "Turkey",
        "Magyar",
        "Hellenic",
        "Philippine",
        "Croat",
        "English",
        "Scottish",
        "Welsh",
    }
)

UNIFIED_TEAM_YEARS = frozenset({1992})
OAR_YEARS = frozenset({2018})
ROC_YEARS = frozenset({2020, 2021, 2022})


@dataclass(frozen=True)
class NocLookup:
    code: str | None  # the NOC, or None
    flag: str | None  # e.g. "ambiguous-country:Korea", "germany-1988"; None when unambiguous


@cache
def _read_table() -> tuple[dict[str, str], dict[str, str]]:
    """The code -> name and spelling -> code tables of ``nocs.tsv`` (read once)."""
    names: dict[str, str] = {}
    aliases: dict[str, str] = {}
    text = files("biaslab.probes.olympics").joinpath("nocs.tsv").read_text(encoding="utf-8")
    for row in text.splitlines()[1:]:  # after the header
        code, *fields = row.split("\t")
        parts = [p.strip() for f in fields for p in f.split(";") if p.strip()]
        names.setdefault(code, parts[0])
        for p in parts:
            aliases.setdefault(p, code)
    return names, aliases


_TABLE_NAMES, _STATIC = _read_table()
NOC_NAMES: dict[str, str] = dict(_TABLE_NAMES)  # a copy: the names below are added to it
NOC_NAMES.update(
    {
        "URS": "Soviet Union",
        "YUG": "Yugoslavia",
        "RUS": "Russia",
        "SRB": "Serbia",
        "MGO": "Mongolia",
        "ROT": "Refugee Olympic Team",
    }
)

# Codes the extractor recognises when a text writes them as codes ("USA", "(GDR)"). Former codes
# that are also English words or common in capitals (SIN, FOR, ICE, HOL, ...) are left out.
EXTRACTABLE_CODES: frozenset[str] = frozenset(NOC_NAMES) | frozenset(_EXTRA_CODES)

# Every code the IOC has used for a team: what an annotated file may contain.
KNOWN_NOCS: frozenset[str] = EXTRACTABLE_CODES | frozenset(HISTORICAL_CODES)

# Codes whose spelling is a common English word when written in capitals; the extractor
# accepts them only in parentheses or as a whole list item.
WORDLIKE_CODES = frozenset(
    {
        "AND",
        "ARM",
        "BAN",
        "BAR",
        "BEN",
        "CAN",
        "CAM",
        "CHI",
        "COL",
        "DEN",
        "DOM",
        "GUM",
        "GUY",
        "HON",
        "IND",
        "MAD",
        "MAR",
        "MON",
        "PAN",
        "PER",
        "SEN",
        "SOL",
        "SUD",
        "TAN",
        "TOG",
        "VAN",
        "OMA",
        "LAO",
        "ANT",
        "FIN",
        "POL",
        "CUB",
        "NAM",
        "SAM",
        "MAS",
        "EST",
        "LAT",
    }
)

# A special team that stands for a country in a given period: "Russia (ROC)" is ROC.
SPECIAL_FOR: dict[str, frozenset[str]] = {
    "ROC": frozenset({"RUS", "URS"}),
    "OAR": frozenset({"RUS", "URS"}),
    "AIN": frozenset({"RUS", "BLR"}),
    "EUN": frozenset({"URS", "RUS", "UKR", "BLR", "KAZ", "UZB", "ARM", "GEO", "AZE", "MDA", "KGZ", "TJK", "TKM"}),
    "COR": frozenset({"KOR", "PRK"}),
    "IOP": frozenset({"YUG", "SRB", "MNE", "MKD", "SCG"}),
    "FRG": frozenset({"GER"}),
    "GDR": frozenset({"GER"}),
}

_DYNAMIC = set(_SOVIET + _RUSSIA + _YUGO + _SERBIA + _GERMANY_AMBIGUOUS + _KOREA_AMBIGUOUS)


def _soviet(year: int) -> str:
    return "EUN" if year in UNIFIED_TEAM_YEARS else "URS"


def _russia(year: int) -> str:
    if year <= 1991:
        return "URS"
    if year in UNIFIED_TEAM_YEARS:
        return "EUN"
    if year in OAR_YEARS:
        return "OAR"
    if year in ROC_YEARS:
        return "ROC"
    return "RUS"


def _yugoslavia(year: int) -> str:
    if 2003 <= year <= 2006:
        return "SCG"
    return "YUG"


def _serbia(year: int) -> str:
    if year <= 2002:
        return "YUG"
    if year <= 2006:
        return "SCG"
    return "SRB"


def _normalise(name: str) -> str:
    s = name.strip().strip(",;:*_\"'()[]").strip()
    s = re.sub(r"\s+", " ", s)
    s = s.replace("’", "'")
    if s.startswith(("the ", "The ")) and s[4:] in _STATIC | dict.fromkeys(_DYNAMIC, ""):
        s = s[4:]
    return s


def lookup(name: str, year: int, *, official: bool = True) -> NocLookup:
    """Map a country mention to a NOC code for the games of ``year``.

    ``official=True`` gives the team that actually competed under that name that year
    ("Russia" in 2020 -> ROC, "Soviet Union" in 1992 -> EUN, "Serbia" in 2004 -> SCG).
    ``official=False`` is the human annotators' convention in the paper's data: a name maps to
    the country it literally denotes ("Russia" -> RUS, "Soviet Union" -> URS) and only names
    that are ambiguous in themselves depend on the year ("Germany" before 1991 is flagged).
    """
    s = _normalise(name)
    if not s:
        return NocLookup(None, None)
    cands = [s, s.rstrip(".")] if s.endswith(".") else [s]
    if s.isupper() and len(s) > 3:
        cands.append(s.title())
    for c in cands:
        res = _lookup_exact(c, year, official)
        if res is not None:
            return res
    return NocLookup(None, None)


def _lookup_exact(s: str, year: int, official: bool) -> NocLookup | None:
    if s in _SOVIET:
        return NocLookup(_soviet(year) if official else "URS", None)
    if s in _RUSSIA:
        return NocLookup(_russia(year) if official else "RUS", None)
    if s in _YUGO:
        return NocLookup(_yugoslavia(year) if official else "YUG", None)
    if s in _SERBIA:
        return NocLookup(_serbia(year) if official else "SRB", None)
    if s in _GERMANY_AMBIGUOUS:
        if year < 1991:
            return NocLookup(None, f"germany-{year}")
        return NocLookup("GER", None)
    if s in _KOREA_AMBIGUOUS:
        return NocLookup(None, f"ambiguous-country:{s}")
    if s in _NOT_COUNTRIES:
        return NocLookup(None, None)
    code = _STATIC.get(s)
    if code is not None:
        if official and code in ("CZE", "SVK") and year <= 1992:
            code = "TCH"
        return NocLookup(code, None)
    if len(s) == 3 and s in EXTRACTABLE_CODES:
        return NocLookup(s, None)
    return None


def to_noc(name: str, year: int, *, official: bool = True) -> str | None:
    """The NOC code for ``name`` at the games of ``year``, or None if unknown or ambiguous."""
    return lookup(name, year, official=official).code


def is_ambiguous(name: str, year: int) -> str | None:
    """The ambiguity flag for ``name`` at ``year`` (e.g. ``"germany-1988"``), else None."""
    return lookup(name, year).flag


def all_aliases() -> list[str]:
    """Every spelling ``lookup`` knows (country names, demonyms, codes, non-countries)."""
    out = set(_STATIC) | _DYNAMIC | set(_NOT_COUNTRIES)
    out |= {c for c in EXTRACTABLE_CODES if len(c) == 3}
    return sorted(out, key=lambda a: (-len(a), a))
