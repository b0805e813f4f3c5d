"""``biaslab models``, ``biaslab probes``, ``biaslab data``: what biaslab can run and read."""

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


def probes(
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print every probe's declarations as JSON: headline "
        "metric(s) with unit, unbiased value and direction, metrics, options, pairing.",
    ),
) -> None:
    """List the probes, their headline metrics and the options each takes (`biaslab run PROBE -P key=value`)."""
    import json

    from biaslab.probing.catalog import catalog

    probes_ = catalog()
    if as_json:
        print(json.dumps(probes_, indent=2))
        return
    table = Table(title="Probes (each card: README.md beside the probe; --json for everything)")
    for col in ("probe", "what it is", "headline (unbiased, worse)", "options (-P key=value)"):
        table.add_column(col)
    for p in probes_:
        heads = "\n".join(f"{h['metric']} ({h['unbiased']:g}, {h['worse']})" for h in p["headlines"])
        opts = "\n".join(
            k
            + (f" ({o['flag']})" if o.get("flag") else "")
            + f": {o['help']}"
            + (f" ({o['range']})" if o.get("range") else "")
            for k, o in p["options"].items()
        )
        source = "" if p["source"] == "built-in" else f"\n[dim]from {escape(p['source'])}[/]"
        table.add_row(p["name"], escape(p["title"]) + source, heads or "-", escape(opts) or "-")
    console().print(table)


def schema(
    which: str = typer.Argument(..., help="results (results.json of a run) or attempts (a line of attempts.jsonl)."),
) -> None:
    """Print the JSON Schema of biaslab's result files, for other tools that read them."""
    import json

    from biaslab.probing.schema import json_schema

    print(json.dumps(json_schema(which), indent=2))


def data(
    fetch: bool = typer.Option(False, "--fetch", help="Download (or verify) every registered file now."),
) -> None:
    """List the research data files biaslab uses, where each comes from, and whether it is here.

    Without --fetch the status is read from BIASLAB_DATA_DIR and the download cache (sha256 checked);
    nothing is downloaded.
    """
    from biaslab.data.registry import FILES, data_path, local_status
    from biaslab.errors import BiaslabError

    table = Table(title="Data files (BIASLAB_DATA_DIR or downloaded when needed, sha256 checked)")
    table.add_column("file · upstream · license", overflow="fold", ratio=1)
    table.add_column("status", overflow="fold", min_width=10, max_width=24)
    failures = 0
    for name, df in FILES.items():
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
