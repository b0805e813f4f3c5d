"""The example survey (``example/`` beside this module): made-up answers about ageism whose
groups match the example components (``biaslab wino predicate-example DIR``)."""

from __future__ import annotations

from pathlib import Path

from biaslab.wino.build.example import copy_example

EXAMPLE_DIR = Path(__file__).parent / "example"
EXAMPLE_FILES = ("survey.csv", "human_predicates.csv", "README.md")


def write_example(target: Path) -> Path:
    """Copy survey.csv, human_predicates.csv and README.md into ``target``, a new or empty folder."""
    return copy_example(EXAMPLE_DIR, target, EXAMPLE_FILES)
