"""The example components folder (``example/`` beside this module): a small, complete custom
benchmark to start from (``biaslab wino example DIR``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from biaslab.errors import ConfigError

EXAMPLE_DIR = Path(__file__).parent / "example"


def copy_example(source: Path, target: Path, names: Iterable[str] | None = None) -> Path:
    """Copy the files ``names`` of ``source`` (default: all of it) into ``target``, a new or empty folder."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConfigError(f"{target} exists and is not an empty folder; give a new folder")
    if names is None:
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        return target
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy2(source / name, target / name)
    return target


def write_example(target: Path) -> Path:
    """Copy the example components into ``target``, a new or empty folder."""
    return copy_example(EXAMPLE_DIR, target)
