"""``biaslab fsb ...``: Fifty Shades of Bias tools."""

from __future__ import annotations

import typer

from .generate_cli import generate_command

app = typer.Typer(
    name="fsb",
    help="Fifty Shades of Bias: generate graded gender-biased texts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("generate")(generate_command)
