"""``biaslab view RUN_DIR ...``: every attempt of the runs in one filterable HTML page."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import console


def view(
    run_dirs: list[Path] = typer.Argument(
        ...,
        metavar="RUN_DIR",
        help="Run folders written by `biaslab run --out` (each with results.json and attempts.jsonl).",
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="The HTML file to write (default: transcripts.html in the first run's folder)."
    ),
) -> None:
    """Browse every attempt of one or more runs: one self-contained HTML file (no server, nothing fetched).

    Each attempt shows its run, model, probe, item, groups, prompt, answer and reading (the label the probe read,
    or undetected and why: empty answer, refusal, cut off at the token limit, no answer recognised). Filter by
    run, model, probe, reading, undetected reason and group, and search the texts. The attempts are held once
    in the page and shown 200 to a page, so runs of tens of thousands of attempts stay quick to browse; long
    texts are folded. Answers are shown as text, never as HTML.
    """
    from biaslab.report.transcripts import write_transcripts

    console(soft_wrap=True).print(f"wrote {write_transcripts(list(run_dirs), out)}", markup=False)  # never wrapped
