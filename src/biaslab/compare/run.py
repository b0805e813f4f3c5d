"""A run as ``compare`` and ``gate`` read it: its folder, results.json and, when asked, its attempts (read once).

Its own module, below :mod:`.paired` and :mod:`.families` (which both take runs), so neither imports the other
for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaslab.probing.results import read_attempts, read_results
from biaslab.probing.schema import RunResults


@dataclass
class Run:
    path: Path
    results: RunResults
    label: str = ""
    rows: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def probe(self) -> str:
        return self.results.probe

    @property
    def model(self) -> str:
        m = self.results.model
        return str(m.get("model") or m.get("name") or "?")

    def attempts(self) -> list[dict[str, Any]] | None:
        if self.rows is None:
            self.rows = read_attempts(
                self.path if self.path.is_dir() else self.path.parent, self.results.recorded_attempts
            )
        return self.rows


def load_run(path: Path) -> Run:
    return Run(Path(path), read_results(Path(path)))
