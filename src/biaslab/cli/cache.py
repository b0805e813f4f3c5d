"""``biaslab cache``: the converted local models in the user cache (list, verify, clear)."""

from __future__ import annotations

import typer
from rich.table import Table

from biaslab.cli.common import console


def cache(
    clear: bool = typer.Option(False, "--clear", help="Delete converted models (all, or those named)."),
    verify: bool = typer.Option(False, "--verify", help="Check every file of each entry against its sha256."),
    names: list[str] = typer.Argument(None, help="Entries to clear (a name or its first characters)."),
) -> None:
    """List the converted models kept in the cache (a GGUF file is converted once; later runs load the copy)."""
    from biaslab.errors import ConfigError
    from biaslab.models.local import conversion

    entries = conversion.list_entries()
    out = console()
    if names and not clear:
        raise ConfigError("name entries only with --clear (e.g. biaslab cache --clear 8f3a)")
    if clear:
        chosen = [e for e in entries if not names or any(e.name.startswith(n) for n in names)]
        unknown = [n for n in names or [] if not any(e.name.startswith(n) for e in entries)]
        if unknown:
            raise ConfigError(f"no cached conversion named {', '.join(unknown)}; see `biaslab cache`")
        for e in chosen:
            conversion.remove(e.path)
        freed = sum(e.size for e in chosen)
        out.print(f"cleared {len(chosen)} conversion(s), {freed / 1e6:.0f} MB; the next load converts again")
        return
    table = Table(title=f"Converted models in {conversion.conversions_dir()}")
    for col in ("entry", "size", "what it is") + (("check",) if verify else ()):
        table.add_column(col)
    for e in entries:
        row = [e.name, f"{e.size / 1e6:.0f} MB", e.describe()]
        if verify:
            row.append(conversion.verify(e.path) or "intact")
        table.add_row(*row)
    out.print(table)
    out.print(
        f"{len(entries)} entries, {sum(e.size for e in entries) / 1e6:.0f} MB "
        "(clear with: biaslab cache --clear [ENTRY])"
    )
