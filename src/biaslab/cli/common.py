"""What every command module shares: the Typer app set-up, consoles, and output-file writing."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console

MODEL_HELP = (
    "Model spec: smollm2 (default, embedded), gemma3-270m, hf/<hub id or dir>, gguf/<path>, "
    "openai/<model> (with --base-url for vLLM, llama.cpp, Ollama...), anthropic/<model>, scripted/<rule>. "
    "See `biaslab models`."
)


MODEL_OPTION_HELP = (
    "A model option, as `biaslab run` takes it with -P: a local model's precision=bf16, a server's timeout=120 or "
    "max_retries=10, a hosted API's batch=true (repeat the flag for more; every model of the command gets it)."
)


CACHE_DIR_HELP = (
    "The response cache directory: responses.sqlite and the batch journal (default: the user cache; "
    "env BIASLAB_CACHE_DIR)."
)


SYSTEM_PROMPT_HELP = (
    "A system prompt put first in every chat request of every generation probe: TEXT, or @FILE to read it from "
    "a UTF-8 file (@@ starts a text with @). A probe's own system message follows it after a blank line. "
    "Log-likelihood probes take it only with -P chat_template=user|assistant. Recorded in results.json; "
    "answers are cached per system prompt."
)


def system_prompt_option() -> Any:
    """``--system-prompt TEXT|@FILE`` (:mod:`biaslab.probing.system_prompt`), the same on ``run`` and ``suite``."""
    return typer.Option(None, "--system-prompt", metavar="TEXT|@FILE", help=SYSTEM_PROMPT_HELP)


def temperature_option() -> Any:
    """``--temperature``: for every generation request, the same on ``run`` and ``suite``."""
    return typer.Option(None, "--temperature", help="Sampling temperature (default: the model's).")


def top_p_option() -> Any:
    return typer.Option(None, "--top-p", help="Nucleus sampling top-p (default: the model's).")


def max_tokens_option() -> Any:
    return typer.Option(None, "--max-tokens", help="Maximum new tokens per answer (default: the probe's).")


def cache_dir_option() -> Any:
    """``--cache-dir DIR``, the same on every command that reads or writes the response cache. Without it the
    response cache's own default applies, which honours ``BIASLAB_CACHE_DIR``
    (:func:`biaslab.models.open.cache_path`)."""
    return typer.Option(None, "--cache-dir", metavar="DIR", help=CACHE_DIR_HELP)


def model_option_flag() -> Any:
    """``-P KEY=VALUE`` for the commands that open models but run no probe (no probe options to tell apart)."""
    return typer.Option(None, "--model-option", "-P", metavar="KEY=VALUE", help=MODEL_OPTION_HELP)


def threads_option() -> Any:
    """``--threads N``: torch's CPU threads for local models (env ``BIASLAB_THREADS``)."""
    return typer.Option(
        None,
        "--threads",
        min=1,
        envvar="BIASLAB_THREADS",
        help="CPU threads for local models (default: every core this process may use; where torch was imported "
        "before biaslab, so that its threads spin while they wait, those other processes leave free).",
    )


def pin_threads(threads: int | None) -> None:
    """``--threads``: handed to every local model this command loads (through ``BIASLAB_THREADS``)."""
    if threads is not None:
        import os

        os.environ["BIASLAB_THREADS"] = str(threads)


def model_options_from(raw: list[str] | None) -> dict[str, Any]:
    """The ``-P`` values as a dict (a one-line error for an item that is not KEY=VALUE)."""
    from biaslab.probing.options import split_assignments

    return dict(split_assignments(raw or []))


def new_app(name: str, help: str) -> typer.Typer:
    """A command group: no tracebacks, no completion install, plain-text help."""
    return typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


def console(stderr: bool = False, **kwargs: Any) -> Console:
    """A Rich console for results (stdout) or progress and messages (``stderr=True``)."""
    return Console(highlight=False, stderr=stderr, **kwargs)


def retries_text(retries: int | None, causes: dict[str, int] | None) -> str:
    """``", retries 3 (HTTP 429: 2, timeout: 1)"`` for the summary line of a run on a server, ``""`` for a backend
    that never retries (``retries`` None)."""
    if retries is None:
        return ""
    listed = ", ".join(f"{cause}: {n}" for cause, n in (causes or {}).items())
    return f", retries {retries}" + (f" ({listed})" if listed else "")


def fmt(v: Any, digits: int = 3) -> str:
    """A number for a table cell; ``n/a`` for missing."""
    return "n/a" if v is None else f"{v:.{digits}f}"
