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

# code: (name, the current code of the same country, or "" when there is none)
# Changed codes: the country competes on under another code.
CHANGED_CODES: dict[str, tuple[str, str]] = {
    "SIN": ("Singapore (until 2016)", "SGP"),
    "ROM": ("Romania", "ROU"),
    "MGO": ("Mongolia", "MGL"),
    "IRN": ("Iran", "IRI"),
    "LIB": ("Lebanon", "LBN"),
    "LBY": ("Libya", "LBA"),
    "SAU": ("Saudi Arabia", "KSA"),
    "NIC": ("Nicaragua", "NCA"),
    "TRI": ("Trinidad and Tobago", "TTO"),
    "TON": ("Tonga", "TGA"),
    "SAL": ("El Salvador", "ESA"),
    "HOL": ("Netherlands", "NED"),
    "ICE": ("Iceland", "ISL"),
    "MAT": ("Malta", "MLT"),
    "CEY": ("Ceylon", "SRI"),
    "BIR": ("Burma", "MYA"),
    "MAL": ("Malaya / Malaysia", "MAS"),
    "VNM": ("South Vietnam", "VIE"),
    "WSM": ("Western Samoa", "SAM"),
    "ZAI": ("Zaire", "COD"),
    "RHO": ("Rhodesia", "ZIM"),
    "NRH": ("Northern Rhodesia", "ZAM"),
    "VOL": ("Upper Volta", "BUR"),
    "DAH": ("Dahomey", "BEN"),
    "HBR": ("British Honduras", "BIZ"),
    "KHM": ("Khmer Republic", "CAM"),
    "BGU": ("British Guiana", "GUY"),
    "GCO": ("Gold Coast", "GHA"),
    "TGY": ("Tanganyika", "TAN"),
    "FOR": ("Formosa", "TPE"),
    "TWN": ("Taiwan", "TPE"),
    "AGR": ("Algeria", "ALG"),
    "CHD": ("Chad", "CHA"),
    "IHO": ("Dutch East Indies / Indonesia", "INA"),
    "INS": ("Indonesia", "INA"),
    "TMP": ("East Timor", "TLS"),
}

# Countries and teams that no longer compete (successor only where one country took over).
DEFUNCT_CODES: dict[str, tuple[str, str]] = {
    "URS": ("Soviet Union", "RUS"),
    "EUN": ("Unified Team", ""),
    "RU1": ("Russian Empire", "RUS"),
    "FRG": ("West Germany", "GER"),
    "GDR": ("East Germany", "GER"),
    "EUA": ("United Team of Germany", "GER"),
    "SAA": ("Saar", "GER"),
    "TCH": ("Czechoslovakia", ""),
    "BOH": ("Bohemia", "CZE"),
    "YUG": ("Yugoslavia", ""),
    "SCG": ("Serbia and Montenegro", ""),
    "UAR": ("United Arab Republic", ""),
    "YAR": ("North Yemen", "YEM"),
    "YMD": ("South Yemen", "YEM"),
    "AHO": ("Netherlands Antilles", ""),
    "ANZ": ("Australasia", ""),
    "BWI": ("British West Indies", ""),
    "WIF": ("West Indies Federation", ""),
    "NBO": ("North Borneo", "MAS"),
    "NFL": ("Newfoundland", "CAN"),
    "CRT": ("Crete", "GRE"),
}

# Teams that are not a country's NOC (1988-2020 and since, plus the early mixed teams).
SPECIAL_TEAMS: dict[str, tuple[str, str]] = {
    "IOP": ("Independent Olympic Participants", ""),
    "IOA": ("Independent Olympic Athletes", ""),
    "ROT": ("Refugee Olympic Team", ""),
    "EOR": ("IOC Refugee Olympic Team", ""),
    "OAR": ("Olympic Athletes from Russia", ""),
    "ROC": ("Russian Olympic Committee", ""),
    "COR": ("Unified Korea", ""),
    "AIN": ("Individual Neutral Athletes", ""),
    "ZZX": ("Mixed team", ""),
    "MIX": ("Mixed team", ""),
}

HISTORICAL_CODES: dict[str, tuple[str, str]] = {**CHANGED_CODES, **DEFUNCT_CODES, **SPECIAL_TEAMS}


def current_code(code: str) -> str:
    """The current code of the country a (possibly old) code stands for; the code itself otherwise."""
    entry = CHANGED_CODES.get(code)
    return entry[1] if entry else code


def same_country(a: str, b: str) -> bool:
    """True when two codes are spellings of one country's code (``SIN`` and ``SGP``)."""
    return a == b or current_code(a) == current_code(b)
