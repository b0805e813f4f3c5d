"""The example components folder (``example/`` beside this module): a small, complete custom
benchmark to start from (``biaslab wino example DIR``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from biaslab.errors import ConfigError

EXAMPLE_DIR = Path(__file__).parent / "example"


def write_example(target: Path) -> Path:
    """Copy the example components into ``target``, a new or empty folder."""
    target = Path(target)
    if target.exists() and any(target.iterdir()):
        raise ConfigError(f"{target} exists and is not empty; give a new folder")
    shutil.copytree(EXAMPLE_DIR, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return target
