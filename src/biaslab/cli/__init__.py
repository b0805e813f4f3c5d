"""The ``biaslab`` command line: one module per command or command group, each of which only
parses flags and calls a domain function.

Top-level commands and groups are named in :data:`COMMANDS` and :data:`GROUPS`; a probe with
commands of its own names them in the probe registry (:data:`biaslab.probes.PROBES`) and is
mounted from there as ``biaslab <probe> ...``.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType

import typer

from biaslab.cli.common import console, new_app
from biaslab.errors import BiaslabError, Interrupted

app = new_app("biaslab", "Measure social bias in large language models: run probes, score annotations, compare runs.")

# name -> "module:function"
COMMANDS: dict[str, str] = {
    "run": "biaslab.cli.run:run",
    "probes": "biaslab.cli.probe_list:probes",
    "models": "biaslab.cli.info:models",
    "report": "biaslab.cli.report:report",
    "view": "biaslab.cli.view:view",
    "compare": "biaslab.cli.compare:compare",
    "gate": "biaslab.cli.gate:gate",
    "data": "biaslab.cli.info:data",
    "plan": "biaslab.cli.plan:plan",
    "suite": "biaslab.cli.suite:suite",
    "cache": "biaslab.cli.cache:cache",
    "schema": "biaslab.cli.info:schema",
    "ppi": "biaslab.cli.ppi:ppi",
}
# name -> "module:app" (a Typer group)
GROUPS: dict[str, str] = {
    "annotate": "biaslab.cli.annotate:app",
    "batches": "biaslab.cli.batches:app",
    "bws": "biaslab.cli.bws:app",
    "fsb": "biaslab.cli.fsb:app",
    "wino": "biaslab.cli.wino:app",
}
_mounted: list[bool] = []
INTERRUPTED_EXIT = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
_INTERRUPT_MESSAGE = "[yellow]interrupted[/]: finished attempts are cached; run the same command again to resume"


def _print_version(value: bool) -> None:
    if value:
        from biaslab import __version__

        print(f"biaslab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print biaslab's version and exit."
    ),
) -> None:
    """Measure social bias in large language models: run probes, score annotations, compare runs."""


def mount() -> typer.Typer:
    """Attach every command and group to :data:`app` (once)."""
    if _mounted:
        return app
    from biaslab.probes import PROBES, load_target

    for name, target in COMMANDS.items():
        fn = load_target(target)
        app.command(name, **getattr(fn, "command_options", {}))(fn)
    groups = dict(GROUPS)
    groups.update({name: entry.commands for name, entry in PROBES.items() if entry.commands})
    for name, target in groups.items():
        app.add_typer(load_target(target), name=name)
    _mounted.append(True)
    return app


def main() -> None:
    """Entry point: one-line errors for user mistakes, no tracebacks."""
    err = console(stderr=True, soft_wrap=True)
    interrupted = _note_interrupts()
    try:
        args = sys.argv[1:]
        if args[:1] == ["run"]:  # a probe's own flags (--pairs FILE) become -P key=value
            from biaslab.cli.run import preprocess

            args = ["run", *preprocess(args[1:])]
        rv = mount()(args, standalone_mode=False)
        if rv == INTERRUPTED_EXIT and interrupted:  # Typer turns Ctrl-C into a plain exit code 130
            raise KeyboardInterrupt
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except Interrupted as exc:  # stopped after saving what it finished (a partial suite): what was kept, one line
        from rich.markup import escape

        err.print(f"[yellow]interrupted[/]: {escape(str(exc))}")
        sys.exit(exc.exit_code)
    except BiaslabError as exc:
        from rich.markup import escape

        err.print(f"[bold red]error:[/] {escape(str(exc))}")  # a message quoting "[a, b]" keeps it
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print(_INTERRUPT_MESSAGE)
        sys.exit(INTERRUPTED_EXIT)
    except typer.Abort:
        sys.exit(1)
    except OSError as exc:  # a write outside biaslab's own (a library's cache, a log) on a full disk
        from biaslab.atomic_write import ENVIRONMENT_ERRNOS, write_failure

        if exc.errno not in ENVIRONMENT_ERRNOS:
            raise
        err.print(f"[bold red]error:[/] {write_failure(Path(exc.filename or 'a file'), exc)}")
        sys.exit(BiaslabError.exit_code)
    except Exception as exc:  # usage errors from click (or the copy of click that Typer vendors)
        show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()  # "Usage: ... Error: Invalid value for '--limit': ..."
            sys.exit(code)
        if type(exc).__name__ == "Exit" and isinstance(code, int):
            sys.exit(code)
        raise


def _note_interrupts() -> list[bool]:
    """A list that gets an entry on each Ctrl-C (SIGINT), which still raises KeyboardInterrupt as usual.

    Typer catches the KeyboardInterrupt of a command and returns exit code 130 in its place, so without
    this :func:`main` could not tell an interrupted command from one that returned 130."""
    seen: list[bool] = []
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return seen  # SIGINT ignored or handled by the caller (an embedding program): leave it so

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        seen.append(True)
        signal.default_int_handler(signum, frame)

    try:
        signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread (main() called from a thread): signals cannot be set there
        pass
    return seen


def entry() -> None:
    """The ``biaslab`` command (and ``python -m biaslab.cli``): :func:`main`, then the process ends
    without the interpreter's teardown, which takes about half a second once torch and a model are
    loaded (freeing every object one by one; nothing is written then). Exit handlers still run and
    the output is flushed first. With another thread still alive, the usual exit (which waits for it)."""
    try:
        main()
        code: int | str | None = 0
    except SystemExit as exc:
        code = exc.code
    _end_process(code)


def _end_process(code: int | str | None) -> None:
    import atexit
    import os
    import threading

    if threading.active_count() > 1 or not isinstance(code, int | None):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream: nothing more to say there
            pass
    os._exit(code or 0)


if __name__ == "__main__":  # pragma: no cover
    entry()
