"""Every command and command group answers --help, and the documented probe-option aliases stay."""

import typer
from typer.testing import CliRunner

from biaslab.cli import mount


def _paths(cmd, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix]
    if getattr(cmd, "commands", None):  # a group (Typer ships its own copy of click)
        for name, sub in cmd.commands.items():
            out += _paths(sub, prefix + (name,))
    return out


def test_every_command_and_group_answers_help():
    root = typer.main.get_command(mount())
    paths = _paths(root)
    groups = {p[0] for p in paths if len(p) == 2}
    assert {"run", "probes", "models", "report", "compare", "data", "annotate", "bws", "fsb", "wino", "olympics"} <= {
        p[0] for p in paths if p
    }
    assert {("wino", "review", "export"), ("olympics", "score-annotated"), ("fsb", "generate")} <= set(paths)
    assert groups
    runner = CliRunner()
    for path in paths:
        result = runner.invoke(mount(), [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage:" in result.output and "--help" in result.output, path


def test_run_takes_generic_probe_options_and_keeps_the_documented_flags():
    result = CliRunner().invoke(mount(), ["run", "--help"])
    for flag in ("-P", "--probe-option", "--items", "--pairs", "--scoring"):
        assert flag in result.output
