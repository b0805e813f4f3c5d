"""Every `biaslab` command the documentation shows is checked, so that the docs cannot drift from the CLI.

Collected: each command of a ```bash block in README.md and docs/*.md whose program is `biaslab` (also
`.venv/bin/biaslab`, after any `VAR=value` prefix; continuation lines joined, `&&` / `||` / `;` / `|` chains
split, comments and heredoc bodies dropped, other programs ignored), and each `$ biaslab ...` line of a ```text
block (a command shown with its output).

Every one is parsed by biaslab's own command line, in process, without running it: the command and its
subcommands exist, every option exists and its value converts to its type, the required arguments are there; a
`run`'s probe exists (or is the plugin probe its page builds), its `-P` options are the probe's or the model's
and convert, and every model spec names a known backend or alias.

Then the commands of each page run in order, in process, in one temporary folder per page (a command may read
what an earlier one of its page wrote). Each must exit 0 (or with the status a `# exit N` comment gives) and print
the first line of output its page shows (for a `$ biaslab` line). A command is skipped, parsed only, for one of
these reasons, which the skip message states:

- needs a network and an API key: an `openai/` or `anthropic/` model (a `--dry-run` sends nothing and runs);
- needs vLLM on GPUs: a `vllm/` model;
- runs a real model, minutes on a CPU: `smollm2` (also when no `--model` is given), `gemma3-270m`, `hf/`,
  `gguf/` (a `--dry-run` of one measures the model's speed first);
- starts a server that runs until stopped: `annotate serve`;
- the plugin probe of docs/ADDING_A_PROBE.md: tests/docs/test_adding_a_probe.py installs it and runs it;
- reads what an earlier command of its page writes, and that command was skipped (or what people annotate while
  `annotate serve` runs).

The synopses (```text lines starting with `biaslab`, here and in the cards beside the code) are checked too:
their commands and options exist.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import typer

from biaslab.errors import BiaslabError

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CARDS = sorted((REPO / "src" / "biaslab").rglob("README.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.M | re.S)
MODEL_COMMANDS = {("run",), ("suite",), ("fsb", "generate"), ("wino", "extract-predicates")}
OUTPUT_OPTIONS = {"out", "junit", "markdown", "json_out", "passwords_out", "cache_dir"}


@dataclass
class DocCommand:
    page: Path
    line: int
    argv: list[str]
    exit_code: int = 0
    plugins: set[str] = field(default_factory=set)
    shown: str = ""  # the first line of output the page shows for it (a ```text block's `$ biaslab ...`)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _segments(text: str) -> list[tuple[list[str], str]]:
    """A shell line's commands (tokens) and its trailing comment."""
    comment = text.partition(" #")[2] if not text.lstrip().startswith("#") else text
    tokens = shlex.split(text, comments=True)
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok in ("&&", "||", ";", "|"):
            out.append([])
        else:
            out[-1].append(tok)
    return [(seg, comment) for seg in out if seg]


def _biaslab_argv(tokens: list[str]) -> list[str] | None:
    while tokens and re.match(r"^\w+=", tokens[0]):  # VAR=value prefixes
        tokens = tokens[1:]
    if tokens and (tokens[0] == "biaslab" or tokens[0].endswith("/biaslab")):
        return tokens[1:]
    return None


def _shell_lines(body: str, first_line: int) -> list[tuple[int, str]]:
    """A bash block's logical lines (continuations joined) with their line numbers, heredoc bodies dropped."""
    out: list[tuple[int, str]] = []
    lines = body.split("\n")
    i, heredoc = 0, None
    while i < len(lines):
        number, text = first_line + i, lines[i]
        i += 1
        if heredoc is not None:
            heredoc = None if text.strip() == heredoc else heredoc
            continue
        while text.endswith("\\") and i < len(lines):
            text, i = text[:-1] + " " + lines[i].strip(), i + 1
        marker = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", text)
        if marker:
            heredoc, text = marker.group(1), text[: marker.start()]
        out.append((number, text))
    return out


def collect(page: Path) -> list[DocCommand]:
    text = page.read_text(encoding="utf-8")
    python = "\n".join(body for lang, body in FENCE.findall(text) if lang == "python")
    plugins = set(re.findall(r'^    name = "([\w-]+)"', python, flags=re.M))  # the probes a page builds
    commands = []
    for match in FENCE.finditer(text):
        lang, body = match.group(1), match.group(2)
        first = text.count("\n", 0, match.start(2)) + 1
        if lang == "bash":
            lines = _shell_lines(body, first)
        elif lang == "text":
            rows = body.split("\n")
            lines = [(first + i, t[2:]) for i, t in enumerate(rows) if t.startswith("$ biaslab ")]
        else:
            continue
        for number, line in lines:
            shown = rows[number - first + 1] if lang == "text" else ""
            for tokens, comment in _segments(line):
                argv = _biaslab_argv(tokens)
                if argv is not None:
                    code = re.search(r"\bexits? (\d+)", comment)
                    exit_code = int(code.group(1)) if code else 0
                    commands.append(DocCommand(page, number, argv, exit_code, plugins, shown.strip()))
    return commands


ALL = [c for page in PAGES for c in collect(page)]


@functools.cache
def _root() -> Any:
    from biaslab.cli import mount

    return typer.main.get_command(mount())


def _is_group(cmd: Any) -> bool:
    return hasattr(cmd, "list_commands") and hasattr(cmd, "get_command")


def resolve(argv: list[str]) -> tuple[tuple[str, ...], Any, Any, list[str]]:
    """(the command path, the command, its parent context, the rest of argv) for ``biaslab ARGV``."""
    cmd = _root()
    ctx = cmd.context_class(cmd, info_name="biaslab")
    path: list[str] = []
    rest = list(argv)
    while _is_group(cmd) and rest and not rest[0].startswith("-"):
        sub = cmd.get_command(ctx, rest[0])
        assert sub is not None, f"biaslab {' '.join(path)} has no command {rest[0]!r}"
        path.append(rest.pop(0))
        cmd = sub
        ctx = cmd.context_class(cmd, info_name=path[-1], parent=ctx)
    return tuple(path), cmd, ctx.parent, rest


def parse(command: DocCommand) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Parse ``command`` as biaslab would, without running it: (its command path, its parameters)."""
    argv = [os.path.expandvars(a) for a in command.argv]
    if argv[:1] == ["run"]:
        from biaslab.cli.run import preprocess

        argv = ["run", *preprocess(argv[1:])]
    path, cmd, parent, rest = resolve(argv)
    assert path and not _is_group(cmd), f"biaslab {' '.join(command.argv)}: no command to run"
    try:
        ctx = cmd.make_context(path[-1], rest, parent=parent)
    except Exception as exc:  # click's usage errors, from the copy Typer vendors
        message = exc.format_message() if hasattr(exc, "format_message") else repr(exc)
        raise AssertionError(f"biaslab {' '.join(command.argv)}: {message}") from None
    params = dict(ctx.params)
    _check_models(path, params)
    if path == ("run",):
        _check_run(params, command.plugins)
    return path, params


def models_of(path: tuple[str, ...], params: dict[str, Any]) -> list[str]:
    from biaslab.models.registry import DEFAULT_MODEL

    value = params.get("model")
    models = [value] if isinstance(value, str) else list(value or [])
    return models or ([DEFAULT_MODEL] if path in MODEL_COMMANDS else [])


def _check_models(path: tuple[str, ...], params: dict[str, Any]) -> None:
    from biaslab.models.registry import split_spec

    for spec in models_of(path, params):
        split_spec(spec)  # a ConfigError for an unknown backend or alias; nothing is loaded or looked up


def _check_run(params: dict[str, Any], plugins: set[str]) -> None:
    from biaslab.app.resolve import probe_kwargs, split_model_options
    from biaslab.models.model_options import check_model_options
    from biaslab.models.registry import split_spec
    from biaslab.probes import PROBES
    from biaslab.probing.options import split_assignments

    probe = params["probe"]
    if probe in plugins:
        return
    if probe.startswith("file:"):  # a probe from a YAML file: the pages name the repository's own examples
        from biaslab.probing.file_probe.registry import file_probe_class

        probe = f"file:{REPO / probe.removeprefix('file:')}"
        file_probe_class(probe)  # a ConfigError for a file that is missing or not a valid probe
    assert probe in PROBES, f"no probe {probe!r}"
    probe_options, model_options = split_model_options(probe, split_assignments(params.get("probe_option") or []))
    probe_kwargs(probe, probe_options)
    for spec in models_of(("run",), params):
        prefix = split_spec(spec)[0]
        check_model_options("hf" if prefix == "gguf" else prefix, spec, model_options)


@dataclass
class Step:
    command: DocCommand
    path: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # it does not parse
    reason: str | None = None  # why it is parsed only


def _reason(command: DocCommand, path: tuple[str, ...], params: dict[str, Any]) -> str | None:
    """Why ``command`` is parsed only, by itself (None: it can run); the rules of this module's docstring."""
    from biaslab.models.registry import ALIASES, split_spec

    if path == ("annotate", "serve"):
        return "starts a server that runs until stopped"
    named = {v for value in params.values() for v in (value if isinstance(value, list | tuple) else [value])}
    if command.plugins & {v for v in named if isinstance(v, str)}:
        return "the plugin probe of its page (tests/docs/test_adding_a_probe.py installs it and runs it)"
    dry = bool(params.get("dry_run"))
    for spec in models_of(path, params):
        prefix = split_spec(spec)[0]
        if prefix in ("openai", "anthropic") and not dry:
            return "needs a network and an API key"
        if prefix == "vllm":
            return "needs vLLM on GPUs"
        if spec in ALIASES or prefix in ("hf", "gguf"):
            return "runs a real model (minutes on a CPU)"
    return None


def _paths(params: dict[str, Any]) -> list[tuple[str, Path]]:
    out = []
    for name, value in params.items():
        for v in value if isinstance(value, list | tuple) else [value]:
            if isinstance(v, Path):
                out.append((name, v))
    return out


@functools.cache
def plan(page: Path) -> list[Step]:
    """The page's commands, parsed, each with the reason it is not run (if any). A command that reads what a
    skipped command of its page would have written is skipped too."""
    steps, unwritten = [], {}  # path -> what would have written it
    for command in (c for c in ALL if c.page == page):
        step = Step(command)
        try:
            step.path, step.params = parse(command)
        except (AssertionError, BiaslabError) as exc:
            step.error = str(exc)
            steps.append(step)
            continue
        step.reason = _reason(command, step.path, step.params)
        if step.reason is None:
            for name, p in _paths(step.params):
                source = next((w for u, w in unwritten.items() if p == u or u in p.parents), None)
                if name not in OUTPUT_OPTIONS and source:
                    step.reason = f"reads {p}, {source}"
                    break
        if step.reason:
            what = (
                "annotated in the browser while `annotate serve` runs"
                if step.path == ("annotate", "serve")
                else f"which `biaslab {' '.join(command.argv)}` writes (not run)"
            )
            for _, p in _paths(step.params):
                unwritten.setdefault(p, what)
        steps.append(step)
    return steps


class PageRuns:
    """Each page's runnable commands, run in order in one folder of the page's own, each at most once."""

    def __init__(self, tmp_path_factory, cli) -> None:
        self.factory, self.cli = tmp_path_factory, cli
        self.dirs: dict[Path, Path] = {}
        self.done: dict[Path, int] = {}

    def run_through(self, page: Path, index: int) -> None:
        """Run the page's runnable commands up to ``index`` (those before it first, as it may read them)."""
        if page not in self.dirs:  # run where a reader of the docs runs them: beside the repository's examples
            self.dirs[page] = self.factory.mktemp(page.stem.replace(".", "_"))
            (self.dirs[page] / "examples").symlink_to(REPO / "examples")
        cwd = self.dirs[page]
        steps = plan(page)
        for i in range(self.done.get(page, -1) + 1, index + 1):
            step = steps[i]
            self.done[page] = i
            if step.error or step.reason:
                continue
            argv = [os.path.expandvars(a) for a in step.command.argv]
            proc = self.cli(*argv, cwd=cwd)
            shown = f"{step.command.id}: biaslab {' '.join(argv)}"
            expected = step.command.exit_code
            assert proc.returncode == expected, f"{shown} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            assert "Traceback" not in proc.stderr, f"{shown}\n{proc.stderr}"
            assert step.command.shown in proc.stdout, f"{shown}: the page shows {step.command.shown!r}\n{proc.stdout}"


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory):
    from tests.cli_runner import run_cli

    return PageRuns(tmp_path_factory, run_cli)


def test_the_docs_show_commands():
    pages = {c.page.name for c in ALL}
    assert {"README.md", "getting-started.md", "hardware.md", "comparing-and-gating.md"} <= pages
    assert len(ALL) >= 20


@pytest.mark.parametrize("command", ALL, ids=[c.id for c in ALL])
def test_doc_command(command, page_runs):
    steps = plan(command.page)
    index = next(i for i, s in enumerate(steps) if s.command is command)
    step = steps[index]
    if step.error:
        pytest.fail(f"{command.id}: {step.error}", pytrace=False)
    if step.reason:
        pytest.skip(f"parsed; not run: {step.reason}")
    if not os.environ.get("BIASLAB_DATA_DIR"):
        pytest.skip("parsed; not run: set BIASLAB_DATA_DIR to the shared research data (the runs read it)")
    page_runs.run_through(command.page, index)


def test_getting_started_shows_the_readme_set_up():
    """getting-started.md repeats the README's install and test commands (the two lines .ci/run reads)."""

    def first_bash(page: Path) -> str:
        return next(b for lang, b in FENCE.findall(page.read_text(encoding="utf-8")) if lang == "bash")

    assert first_bash(REPO / "docs" / "getting-started.md") == first_bash(REPO / "README.md")


def _synopses() -> list[tuple[str, str]]:
    out = []
    for page in PAGES + CARDS:
        text = page.read_text(encoding="utf-8")
        for lang, body in FENCE.findall(text):
            if lang != "text":
                continue
            going = False
            for line in body.split("\n"):  # indented lines continue the synopsis above them
                if line.startswith("biaslab "):
                    out.append((str(page.relative_to(REPO)), line))
                elif going and line.startswith(" "):
                    out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
                    continue
                going = line.startswith("biaslab ")
    return out


@pytest.mark.parametrize("page", sorted({p for p, _ in _synopses()}))
def test_synopses_name_real_commands_and_options(page):
    """``biaslab CMD [--flag X] ...`` lines: CMD exists (``a|b`` alternatives each), and so does every flag."""
    from biaslab.cli.run import probe_flags

    problems = []
    for _, line in (s for s in _synopses() if s[0] == page):
        words = line.partition("#")[0].split()[1:]
        head = []
        while words and re.fullmatch(r"[a-z][\w-]*(\|[a-z][\w-]*)*", words[0]):
            head.append(words.pop(0))
        try:  # a flag of any of the alternatives (``list|show|cancel [--run TEXT]``) will do
            known, paths = {"--help"}, []
            for alt in head[-1].split("|") if head and "|" in head[-1] else [None]:
                path, cmd, _, _ = resolve(head[:-1] + [alt] if alt else head)
                known |= {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
                known |= set(probe_flags()) if path == ("run",) else set()
                paths.append(" ".join(path))
            flags = {f for w in words for f in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", w)}
            unknown = sorted(flags - known)
            if unknown:
                problems.append(f"{line}: biaslab {' | '.join(paths)} has no {', '.join(unknown)}")
        except AssertionError as exc:
            problems.append(f"{line}: {exc}")
    assert not problems, "\n".join(problems)
