"""Team codes the IOC no longer uses, and which current code each one became.

``nocs.py`` knows the 206 current National Olympic Committees and the names that map to them.
Annotated results files are older than some code changes and were written with other lookup
tables (the Olympic paper's annotators used a table in which Singapore is ``SIN``, its code
until 2016), so validation accepts every code the IOC has used for a team:

* codes that changed while the country stayed (``SIN`` -> ``SGP``, ``ROM`` -> ``ROU``, ...);
* countries and teams that no longer exist (``URS``, ``FRG``, ``TCH``, ``YUG``, ...);
* the special teams of 1988-2020 and since (``EUN``, ``IOP``, ``IOA``, ``ROT``, ``EOR``, ``OAR``,
  ``ROC``, ``COR``, ``AIN``) and the mixed teams of the early games (``ZZX``).

Codes stay strings everywhere: a file that writes ``SIN`` is scored by comparing ``SIN``, which
is how the paper computed its figures. :func:`same_country` is used only to write an extracted
code in the spelling the row's gold columns use (text "Singapore", gold ``SIN`` -> ``SIN``).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

# The codes are data: ``nocs_history.tsv`` next to this module, one row per code with its kind,
# the name of the team and the current code of the same country ("" when there is none).
_KINDS = ("changed", "defunct", "special")


@cache
def _read_codes() -> dict[str, dict[str, tuple[str, str]]]:
    """kind -> code -> (name, current code), from ``nocs_history.tsv`` (read once)."""
    out: dict[str, dict[str, tuple[str, str]]] = {kind: {} for kind in _KINDS}
    text = files("biaslab.probes.olympics").joinpath("nocs_history.tsv").read_text(encoding="utf-8")
    for row in text.splitlines()[1:]:  # after the header
        code, kind, name, *current = row.split("\t")
        out[kind][code] = (name, current[0] if current else "")
    return out


# Changed codes: the country competes on under another code.
CHANGED_CODES: dict[str, tuple[str, str]] = dict(_read_codes()["changed"])
# Countries and teams that no longer compete (successor only where one country took over).
DEFUNCT_CODES: dict[str, tuple[str, str]] = dict(_read_codes()["defunct"])
# Teams that are not a country's NOC (1988-2020 and since, plus the early mixed teams).
SPECIAL_TEAMS: dict[str, tuple[str, str]] = dict(_read_codes()["special"])

HISTORICAL_CODES: dict[str, tuple[str, str]] = {**CHANGED_CODES, **DEFUNCT_CODES, **SPECIAL_TEAMS}


def current_code(code: str) -> str:
    """The current code of the country a (possibly old) code stands for; the code itself otherwise."""
    entry = CHANGED_CODES.get(code)
    return entry[1] if entry else code


def same_country(a: str, b: str) -> bool:
    """True when two codes are spellings of one country's code (``SIN`` and ``SGP``)."""
    return a == b or current_code(a) == current_code(b)
