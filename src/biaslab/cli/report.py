"""``biaslab report RUN_DIR``: re-render a finished run's report."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import console


def report(run_dir: Path = typer.Argument(..., help="A run directory with results.json and attempts.jsonl.")) -> None:
    """Re-render report.html of a finished run from its written results (no model needed)."""
    from biaslab.app.results import rebuild_report

    console(soft_wrap=True).print(f"wrote {rebuild_report(run_dir)}")  # a path is never wrapped
