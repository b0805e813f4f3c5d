"""``biaslab wino ...``: build paired-sentence benchmarks from components."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional

import typer

from biaslab.errors import ConfigError

app = typer.Typer(
    name="wino",
    help="Paired-sentence bias benchmarks (WinoSemitism, WinoQueer, your own): build pairs from components.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

EXAMPLE_DIR = Path(__file__).parents[1] / "wino" / "build" / "example"


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(highlight=False, stderr=stderr)


def load_components(benchmark: str, components: Path | None):
    """The Components of a published benchmark, or of a custom folder."""
    from biaslab.wino.build.originals import BENCHMARKS, load_original

    if benchmark == "custom":
        if components is None:
            raise ConfigError("the custom benchmark needs --components DIR (see `biaslab wino build --help`)")
        from biaslab.wino.build.custom import load_custom

        return load_custom(components)
    if components is not None:
        raise ConfigError(f"--components is for the custom benchmark; {benchmark} reads its published components")
    if benchmark not in BENCHMARKS:
        raise ConfigError(f"unknown benchmark {benchmark!r}; use one of {', '.join(BENCHMARKS)}, custom")
    return load_original(benchmark)


@app.command()
def build(
    benchmark: str = typer.Argument(..., help="winosemitism (H-WS), gpt-winosemitism, gpt-winoqueer, "
                                              "winoqueer-human, or custom (with --components)."),
    out: Path = typer.Option(..., "--out", "-o", help="The pairs CSV to write."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random draws (names, counterfactuals)."),
    faithful: bool = typer.Option(False, "--faithful", help="Follow the original rules and quirks exactly "
                                                            "(default: correct the quirks and say what changed)."),
    components: Optional[Path] = typer.Option(None, "--components", help="Folder of your own components "
                                              "(templates, identities, counterfactuals, predicates, names; "
                                              "`biaslab wino example DIR` writes one)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every component each fix changed."),
) -> None:
    """Build a benchmark's pairs (sent_more, sent_less, target_ID, form, template, subject,
    counterfactual, predicate, predicate_id) from its components, seeded and deterministic.

    Without --faithful, the quirks of the original are corrected (stray spaces and periods, the
    empty predicate, verb agreement such as "He is a Jew and are greedy" or "They is", the "LGBTQ "
    label) and each fix is reported with the number of pairs it touched.

    custom --components DIR holds templates.csv (form, number, template), identities.csv (group,
    form, identity), counterfactuals.csv (group, form, counterfactual), predicates.csv (group,
    plural[, singular]), names.csv (name, label) and optionally persons.csv, exclusions.csv and
    settings.toml; see the pairs probe's card or `biaslab wino example DIR`.
    """
    from biaslab.wino.build.build import build_pairs
    from biaslab.wino.build.pairs_io import write_pairs

    if out.exists() and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name such as pairs.csv")
    comps = load_components(benchmark, components)
    result = build_pairs(comps, seed=seed, faithful=faithful)
    write_pairs(out, result.pairs)
    print_build(result, out, verbose=verbose)


def print_build(result, out: Path, *, verbose: bool = False) -> None:
    from rich.markup import escape
    from rich.table import Table

    con = _console()
    mode = "faithful" if result.faithful else "corrected"
    con.print(f"{result.benchmark}: {len(result.pairs):,} pairs ({mode} mode, seed {result.seed}; "
              f"{result.n_before_dedup:,} before de-duplication)")
    counts = Table(title="pairs per target group")
    counts.add_column("target_ID")
    counts.add_column("pairs", justify="right")
    counts.add_column("predicates", justify="right")
    preds: dict[str, set[str]] = {}
    for p in result.pairs:
        if not p.predicate_id.endswith("#no-predicate"):
            preds.setdefault(p.target_ID, set()).add(p.predicate_id)
    for group, n in result.group_counts().items():
        counts.add_row(escape(repr(group) if group != group.strip() else group), f"{n:,}",
                       str(len(preds.get(group, ()))))
    con.print(counts)
    if result.fixes:
        fixes = Table(title="fixes of the original's quirks (omit with --faithful)")
        for col in ("fix", "what", "components", "pairs touched"):
            fixes.add_column(col, justify="right" if col in ("components", "pairs touched") else "left")
        for f in result.fixes:
            fixes.add_row(f.name, f.description, str(len(f.components)), f"{f.pairs:,}")
        con.print(fixes)
        for f in result.fixes:
            shown = f.components if verbose else f.components[:2]
            for line in shown:
                con.print(f"  {f.name}: {escape(line)}")
            if len(f.components) > len(shown):
                con.print(f"  {f.name}: ... {len(f.components) - len(shown)} more (--verbose lists them)")
    for w in result.warnings:
        con.print(f"[yellow]note:[/] {escape(w)}")
    con.print(f"wrote {out}")


@app.command()
def example(target: Path = typer.Argument(..., help="Folder to create with the example components.")) -> None:
    """Write a small, complete components folder to start a benchmark of your own."""
    if target.exists() and any(target.iterdir()):
        raise ConfigError(f"{target} exists and is not empty; give a new folder")
    shutil.copytree(EXAMPLE_DIR, target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    _console().print(f"wrote {target}; build it with: biaslab wino build custom --components {target} --out pairs.csv")
