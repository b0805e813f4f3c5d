"""A Rich progress bar for model calls: attempts done/total, cache hits, and tokens/s for
generations (requests/s for log-likelihood scoring, which generates no tokens)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class AttemptProgress:
    def __init__(self, progress: Progress, task: Any):
        self.progress, self.task = progress, task
        self.hits = 0
        self.new_tokens = 0
        self.answered = 0
        self.started = time.monotonic()

    def __call__(self, index: int, result: Any, from_cache: bool) -> None:
        if from_cache:
            self.hits += 1
        else:
            self.answered += 1
            self.new_tokens += getattr(result, "n_new_tokens", None) or 0
        elapsed = max(time.monotonic() - self.started, 1e-6)
        self.progress.update(self.task, advance=1, hits=self.hits, tps=self.new_tokens / elapsed,
                             rps=self.answered / elapsed)


@contextmanager
def attempt_progress(total: int, description: str, console: Console | None = None,
                     enabled: bool = True, generates: bool = True) -> Iterator[AttemptProgress]:
    """The bar; ``generates=False`` (log-likelihood requests only) shows requests/s, not tokens/s."""
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("cache hits {task.fields[hits]}"),
        TextColumn("{task.fields[tps]:.0f} tok/s" if generates else "{task.fields[rps]:.1f} req/s"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        disable=not enabled,
        transient=False,
    )
    with progress:
        task = progress.add_task(description, total=total, hits=0, tps=0.0, rps=0.0)
        yield AttemptProgress(progress, task)
