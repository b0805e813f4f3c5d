"""``biaslab cache``: the model store (converted and assembled models: list, verify, clear) and the response cache
(where it is, how many answers it holds)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from biaslab.cli.common import cache_dir_option, console


def cache(
    clear: bool = typer.Option(False, "--clear", help="Delete converted models (all, or those named)."),
    verify: bool = typer.Option(False, "--verify", help="Check every file of each entry against its sha256."),
    cache_dir: Path | None = cache_dir_option(),
    names: list[str] = typer.Argument(None, help="Entries to clear (a name or its first characters)."),
) -> None:
    """Show the model store (BIASLAB_MODELS_DIR: each GGUF file converted once, shared by every response cache)
    and the response cache (BIASLAB_CACHE_DIR or --cache-dir: the answers runs re-use)."""
    from biaslab.errors import ConfigError
    from biaslab.models.cache import describe_cache
    from biaslab.models.local import conversion
    from biaslab.models.open import cache_path
    from biaslab.models.store import ENV, models_dir

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
    store = models_dir()
    out.print(f"[bold]Model store[/] {store} (env {ENV}; shared by every response cache)", soft_wrap=True)
    if entries:
        table = Table(title="Converted models", title_justify="left")
        for col in ("entry", "size", "what it is") + (("check",) if verify else ()):
            table.add_column(col)
        for e in entries:
            row = [e.name, f"{e.size / 1e6:.0f} MB", e.describe()]
            if verify:
                row.append(conversion.verify(e.path, every_byte=True) or "intact")
            table.add_row(*row)
        out.print(table)
    else:
        out.print("no converted models yet (a GGUF model is converted once, at its first load)")
    for p in sorted(store.glob("*.gguf")) if store.is_dir() else []:
        out.print(f"assembled model file: {p.name}, {p.stat().st_size / 1e6:.0f} MB", soft_wrap=True)
    built = sorted((store / "built-pairs").glob("*.json")) if store.is_dir() else []
    if built:
        out.print(
            f"built paired-sentence benchmarks: {len(built)}, {sum(p.stat().st_size for p in built) / 1e6:.0f} MB "
            f"in {store / 'built-pairs'} (read back by later runs; delete the folder to build them anew)",
            soft_wrap=True,
        )
    out.print(
        f"{len(entries)} entries, {sum(e.size for e in entries) / 1e6:.0f} MB "
        "(clear with: biaslab cache --clear [ENTRY])"
    )
    out.print(f"[bold]Response cache[/] {describe_cache(cache_path(cache_dir))}", soft_wrap=True)
