"""The example survey (``example/`` beside this module): made-up answers about ageism whose
groups match the example components (``biaslab wino predicate-example DIR``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from biaslab.errors import ConfigError

EXAMPLE_DIR = Path(__file__).parent / "example"
EXAMPLE_FILES = ("survey.csv", "human_predicates.csv", "README.md")


def write_example(target: Path) -> Path:
    """Copy survey.csv, human_predicates.csv and README.md into ``target``, a new or empty folder."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConfigError(f"{target} exists and is not an empty folder; give a new folder")
    target.mkdir(parents=True, exist_ok=True)
    for name in EXAMPLE_FILES:
        shutil.copy2(EXAMPLE_DIR / name, target / name)
    return target
