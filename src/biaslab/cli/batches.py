"""``biaslab batches``: the provider batches that runs with ``-P batch=true`` submitted (list, show, cancel,
forget)."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from biaslab.cli.common import cache_dir_option, console, new_app

app = new_app(
    "batches",
    "The batches that runs with -P batch=true submitted to OpenAI's or Anthropic's batch API: "
    "list them, look at one, cancel them, forget those the provider no longer knows.",
)


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


@app.command("list")
def list_(
    model: str | None = typer.Option(None, "--model", "-m", help="Only this model's batches (openai/gpt-4o-mini)."),
    run: str | None = typer.Option(
        None,
        "--run",
        help="Only the batches of runs whose description or command "
        "contains this text (e.g. jobs-lum, or the --out folder).",
    ),
    unfinished: bool = typer.Option(False, "--unfinished", help="Only batches not read back yet."),
    cache_dir: Path | None = cache_dir_option(),
) -> None:
    """List the batches in the journal (nothing is sent; `show` asks the provider for a batch's state now)."""
    from biaslab.models.batch.manage import journal_for, select

    journal = journal_for(cache_dir)
    records = select(journal, model=model, run=run, unfinished=unfinished)
    table = Table(title=f"Batches in {journal.directory}")
    for col in ("batch", "model", "run", "requests", "state", "submitted", "read back"):
        table.add_column(col, overflow="fold")
    for r in records:
        table.add_row(
            r.label,
            r.spec,
            escape(r.run or "-"),
            f"{len(r.ids):,}" + (f" (retry {r.round - 1})" if r.round > 1 else ""),
            r.state,
            _when(r.created),
            "yes" + (f", {len(r.failed)} failed" if r.failed else "") if r.collected else "no",
        )
    out = console()
    out.print(table)
    out.print(
        f"{len(records)} batch{'es' if len(records) != 1 else ''}; a run with -P batch=true resumes its own "
        "(the same command again); `biaslab batches cancel BATCH` stops one"
    )


@app.command("show")
def show(
    batch: str = typer.Argument(..., help="The batch id (or its first characters, or the journal token)."),
    offline: bool = typer.Option(
        False, "--offline", help="Print the journal's record only (ask the provider nothing)."
    ),
    cache_dir: Path | None = cache_dir_option(),
) -> None:
    """One batch: its record, and its state at the provider now (the key comes from the environment)."""
    from biaslab.models.batch.manage import describe, journal_for, refresh

    journal = journal_for(cache_dir)
    record = journal.find(batch)
    state = None if offline else refresh(journal, record)
    out = console()
    for key, value in describe(record, state).items():
        if key == "submitted":
            value = _when(value)
        out.print(f"{key:>13}: {escape(str(value if value is not None else '-'))}")


@app.command("cancel")
def cancel(
    batches: list[str] = typer.Argument(None, help="Batch ids (or their first characters)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Cancel every unfinished batch of this model."),
    run: str | None = typer.Option(
        None, "--run", help="Cancel every unfinished batch of the runs whose description or command contains this text."
    ),
    cache_dir: Path | None = cache_dir_option(),
) -> None:
    """Cancel batches at the provider. Lines already answered are kept; the next run submits the rest anew."""
    from biaslab.errors import ConfigError
    from biaslab.models.batch import manage

    journal = manage.journal_for(cache_dir)
    if batches:
        records = [journal.find(b) for b in batches]
    elif model or run:
        records = manage.select(journal, model=model, run=run, unfinished=True)
    else:
        raise ConfigError(
            "name the batches to cancel, or choose them with --model or --run (`biaslab batches list` shows them)"
        )
    out = console()
    for rec, what in manage.cancel(journal, records):
        out.print(f"{rec.label}: {what}")
    if not records:
        out.print("no unfinished batch matches")


@app.command("forget")
def forget(
    batches: list[str] = typer.Argument(None, help="Batch ids (or their first characters, or journal tokens)."),
    stale: bool = typer.Option(
        False,
        "--stale",
        help="Forget every submitted batch (of --model / --run) that the provider answers HTTP 404 for "
        "(deleted, or made with another API key or project).",
    ),
    model: str | None = typer.Option(None, "--model", "-m", help="With --stale: only this model's batches."),
    run: str | None = typer.Option(
        None, "--run", help="With --stale: only the batches of runs whose description or command contains this text."
    ),
    cache_dir: Path | None = cache_dir_option(),
) -> None:
    """Stop waiting for batches: their records stay in the journal, marked forgotten, and the next run submits
    the requests the cache lacks (answers already cached are kept; nothing is sent to the provider to forget)."""
    from biaslab.errors import ConfigError
    from biaslab.models.batch import manage

    journal = manage.journal_for(cache_dir)
    if batches and not stale and not (model or run):
        records = [journal.find(b) for b in batches]
    elif stale and not batches:
        records = manage.stale(journal, manage.select(journal, model=model, run=run))
    else:
        raise ConfigError(
            "name the batches to forget, or use --stale (with --model or --run to narrow it) to forget those the "
            "provider no longer knows; `biaslab batches list` shows them"
        )
    out = console()
    for rec, what in manage.forget(journal, records):
        out.print(f"{rec.label}: {what}")
    if not records:
        out.print("no batch to forget" + (": the provider knows every submitted batch" if stale else ""))
