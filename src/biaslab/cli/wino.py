"""``biaslab wino ...``: build paired-sentence benchmarks from components (:mod:`biaslab.wino.build.build_run`):
build, example. The predicate study's commands (extract-predicates, flag-predicates, predicate-quality, review
export/import) are :mod:`biaslab.cli.wino_predicates`, merged into this group."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import console, new_app
from biaslab.cli.wino_predicates import app as predicates_app
from biaslab.errors import ConfigError

app = new_app(
    "wino", "Paired-sentence bias benchmarks (WinoSemitism, WinoQueer, your own): build pairs from components."
)


@app.command()
def build(
    benchmark: str = typer.Argument(
        ...,
        help="winosemitism (H-WS), gpt-winosemitism, gpt-winoqueer, winoqueer-human, or custom (with --components).",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="The pairs CSV to write."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random draws (names, counterfactuals)."),
    faithful: bool = typer.Option(
        False,
        "--faithful",
        help="Published benchmarks: follow the original rules "
        "and quirks exactly (default: correct the quirks and say what changed). "
        "custom: use the components exactly as written (no verb agreement, no "
        "pronoun slots resolved per person in predicates).",
    ),
    components: Path | None = typer.Option(
        None,
        "--components",
        help="Folder of your own components "
        "(templates, identities, counterfactuals, predicates, names; "
        "`biaslab wino example DIR` writes one).",
    ),
    check_counterfactuals: bool = typer.Option(
        False,
        "--check-counterfactuals",
        help="Also list the pairs whose "
        "two sentences differ in more than the group term: compared word "
        "by word (case and a/an aside), they must differ in one place (or "
        "the same substitution repeated), and the group term must keep "
        'its number. "Autistic people lack empathy." / "Able-bodied '
        'people lack empathy." passes; a counterfactual phrase such as '
        '"people who are younger" for "older people" is listed. The '
        "pairs are written either way.",
    ),
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="List every component each fix changed (custom: "
        "each grammar rule applied) and every pair the counterfactual check lists.",
    ),
) -> None:
    """Build a benchmark's pairs (sent_more, sent_less, target_ID, form, template, subject,
    counterfactual, predicate, predicate_id) from its components, seeded and deterministic.

    Published benchmarks: without --faithful, the quirks of the original are corrected (stray
    spaces and periods, the empty predicate, verb agreement such as "He is a Jew and are greedy" or
    "They is", the "LGBTQ " label, a name where a predicate says <object>) and each fix is reported
    with the number of pairs it touched.

    custom --components DIR holds templates.csv (form, number, template), identities.csv (group,
    form, identity), counterfactuals.csv (group, form, counterfactual), predicates.csv (group,
    plural[, singular]), names.csv (name, label) and optionally persons.csv, exclusions.csv and
    settings.toml; see the pairs probe's card or `biaslab wino example DIR`.

    Slots. Templates: <identity noun>, <identity adj> or <identity> (the group or counterfactual
    phrase), <predicate>, <article> (a/an for the phrase after it), <Subject> (a name, else the
    pronoun), <subject> or <pronoun> (he/she/they), <object> (the name, else him/her/them),
    <possessive>, <reflexive>, <is/are>. Predicates: write <subject> (he/she/they), <object>
    (him/her/them), <possessive> (his/her/their) and <reflexive> (himself/herself/themselves)
    wherever a pronoun refers to the subject: "go out only when someone helps <object>" gives "He
    ... helps him", "Ruth ... helps her", "Sam ... helps them" (a name takes the pronouns of its
    label in names.csv: male he, female she, NB they) and "Wheelchair users ... help them" (a
    plural group: they). <pronoun> takes the form its place needs ("helps <pronoun>": him; "unless
    <pronoun> is driven": he). A slot written with a capital (<Possessive>) is capitalised. A singular
    sentence made from the plural column takes the singular of a noun a person has one of after
    <possessive> ("a burden on <possessive> families" -> "his family"). Every build checks the
    verbs and pronouns against each sentence's subject and notes what does not agree ("He ...
    helps them"), and notes other plural nouns after <possessive> ("his children") to look at.
    """
    from biaslab.wino.build.build_run import build_benchmark

    if out.exists() and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name such as pairs.csv")
    result = build_benchmark(
        benchmark, out, seed=seed, faithful=faithful, components=components, check_counterfactuals=check_counterfactuals
    )
    print_build(result, out, verbose=verbose)


def print_build(result, out: Path, *, verbose: bool = False) -> None:
    from rich.markup import escape
    from rich.table import Table

    con = console()
    mode = "faithful" if result.faithful else "corrected"
    con.print(
        f"{result.benchmark}: {len(result.pairs):,} pairs ({mode} mode, seed {result.seed}; "
        f"{result.n_before_dedup:,} before de-duplication)"
    )
    counts = Table(title="pairs per target group")
    counts.add_column("target_ID")
    counts.add_column("pairs", justify="right")
    counts.add_column("predicates", justify="right")
    preds: dict[str, set[str]] = {}
    for p in result.pairs:
        if not p.predicate_id.endswith("#no-predicate"):
            preds.setdefault(p.target_ID, set()).add(p.predicate_id)
    for group, n in result.group_counts().items():
        counts.add_row(
            escape(repr(group) if group != group.strip() else group), f"{n:,}", str(len(preds.get(group, ())))
        )
    con.print(counts)
    custom = result.custom
    if result.fixes and (verbose or not custom):
        # A custom build has no original: its grammar rules are the documented build rules, not fixes.
        title = (
            "grammar rules applied (see --help; --faithful: none)"
            if custom
            else "fixes of the original's quirks (omit with --faithful)"
        )
        fixes = Table(title=title)
        for col in ("rule" if custom else "fix", "what", "components", "pairs touched"):
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
    issues = result.counterfactual_issues
    if issues is not None:
        con.print(
            f"counterfactual check: {len(issues):,} of {len(result.pairs):,} pairs differ in more than the "
            "group term" + (":" if issues else "")
        )
        for more, less, issue in issues if verbose else issues[:5]:
            con.print(f"  {escape(more)} / {escape(less)}: {escape(issue)}")
        if issues and not verbose and len(issues) > 5:
            con.print(f"  ... {len(issues) - 5} more (--verbose lists them)")
    con.print(f"wrote {out}")


@app.command()
def example(target: Path = typer.Argument(..., help="Folder to create with the example components.")) -> None:
    """Write a small, complete components folder to start a benchmark of your own."""
    from biaslab.wino.build.example import write_example

    write_example(target)
    console().print(f"wrote {target}; build it with: biaslab wino build custom --components {target} --out pairs.csv")


app.add_typer(predicates_app)  # the predicate study's commands, after these
