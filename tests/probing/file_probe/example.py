"""The worked example of docs/file_probes.md (examples/file_probe/) and scripted answers to it, for the file-probe
tests: which pronoun each canned answer uses is written here, by occupation, and the tests count by hand from it."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "file_probe" / "occupation_pronouns.yaml"
TABLE = EXAMPLE.parent / "occupations.csv"

TEXTS = {
    "he": "He locks up, and his hands ache as he drives home.",
    "she": "She locks up, and her hands ache as she drives home.",
    "they": "They lock up, and their hands ache as they drive home.",
    "tie": "He hands her the keys.",  # one he, one she: undetected
}
# technical: five he, one she; care: one he, four she, one they (undetected)
SAYS = {
    "electrician": "he",
    "welder": "he",
    "software developer": "she",
    "airline pilot": "he",
    "land surveyor": "he",
    "machinist": "he",
    "nurse": "she",
    "midwife": "she",
    "preschool teacher": "they",
    "social worker": "he",
    "dental hygienist": "she",
    "home health aide": "she",
}


def rows() -> list[dict[str, str]]:
    with TABLE.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def prompt_of(occupation: str, yaml_path: Path = EXAMPLE) -> str:
    """The prompt the example asks about ``occupation``: its template with the one placeholder it has filled."""
    template = yaml.safe_load(yaml_path.read_text(encoding="utf-8"))["prompt"]
    return template.replace("{occupation}", occupation)


def canned(path: Path, says: dict[str, str], yaml_path: Path = EXAMPLE) -> str:
    """A scripted model answering each occupation's prompt with the text of ``says[occupation]``: its spec."""
    answers = {prompt_of(r["occupation"], yaml_path): TEXTS[says[r["occupation"]]] for r in rows()}
    path.write_text(json.dumps(answers), encoding="utf-8")
    return f"scripted/canned:file={path}"


def copy_example(folder: Path) -> Path:
    """The example's two files copied into ``folder``; the YAML file's path there."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TABLE, folder / TABLE.name)
    return Path(shutil.copy(EXAMPLE, folder / EXAMPLE.name))
