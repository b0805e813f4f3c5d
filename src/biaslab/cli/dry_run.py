"""The dry-run options shared by ``biaslab run`` and ``biaslab suite``, and how an estimate is printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from biaslab.app.time_estimate import duration

DRY_RUN_HELP = (
    "Count the requests, cached answers, tokens (and cost, with prices) without sending anything or loading a model."
)
PRICE_IN_HELP = "With --dry-run: dollars per million input tokens (online price; halved with -P batch=true)."
PRICE_OUT_HELP = "With --dry-run: dollars per million output tokens (online price; halved with -P batch=true)."
PRICES_HELP = (
    "With --dry-run: a TOML or JSON file of prices per model spec: input, output, optional "
    "batch_input, batch_output (dollars per million tokens)."
)


def dry_run_option() -> Any:
    return typer.Option(False, "--dry-run", help=DRY_RUN_HELP)


def check_price_flags(dry_run: bool, price_in: float | None, price_out: float | None, prices: Path | None) -> None:
    from biaslab.errors import ConfigError

    if not dry_run and (price_in is not None or price_out is not None or prices is not None):
        raise ConfigError("--price-in, --price-out and --prices go with --dry-run (they price a run before it is made)")


def _n(v: int | None) -> str:
    return "unknown" if v is None else f"{v:,}"


def _usd(v: float) -> str:
    return f"${v:,.2f}" if v >= 1 else f"${v:.4f}"


def print_estimates(estimates: list[Any], out: Console) -> None:
    total: dict[str, float] = {}
    for e in estimates:
        kinds = ", ".join(
            x
            for x in (
                f"{e.generations:,} generations" if e.generations else "",
                f"{e.loglikelihoods:,} log-likelihoods" if e.loglikelihoods else "",
            )
            if x
        )
        cached = (
            "cached answers unknown (only loading the model gives its identity)"
            if e.cached is None
            else f"{e.cached:,} cached"
        )
        how = " through the batch API (-P batch=true)" if e.batch else ""
        loaded = "the model loaded once to measure its speed here" if e.measured else "no model loaded"
        out.print(f"[bold]{escape(e.probe)}[/] on [bold]{escape(e.model)}[/]: dry run, nothing sent, {loaded}")
        out.print(f"  requests       {e.requests:,} ({kinds or 'none'}); {cached}; {e.to_send:,} to send{how}")
        out.print(f"  input tokens   {e.input_tokens:,} to send ({escape(e.tokens_by)})")
        expected = (
            ""
            if e.output_tokens_expected is None or not e.to_send
            else f", about {e.output_tokens_expected:,} expected (the cached answers' mean length)"
        )
        most = (
            "unknown at most (a request leaves max_tokens to the model; give --max-tokens)"
            if e.output_tokens_max is None
            else f"at most {e.output_tokens_max:,}"
        )
        out.print(f"  output tokens  {most}{expected}")
        if e.extrapolated:
            out.print(f"  extrapolated   {escape(e.extrapolated)}")
        if e.seconds is not None:
            out.print(f"  time           about {duration(e.seconds)} ({escape(e.seconds_note)})")
        elif e.seconds_note:
            out.print(f"  time           {escape(e.seconds_note)}")
        if e.cost:
            parts = [f"input {_usd(e.cost['input'])}"]
            if "output_max" in e.cost:
                parts.append(f"output at most {_usd(e.cost['output_max'])}")
            if "output_expected" in e.cost:
                parts.append(f"about {_usd(e.cost['output_expected'])} expected")
            out.print(f"  cost           {', '.join(parts)} ({escape(e.price_note)})")
            for k, v in e.cost.items():
                total[k] = total.get(k, 0.0) + v
        elif e.to_send:
            out.print("  cost           no price given (--price-in/--price-out, or --prices FILE naming this model)")
    if len(estimates) > 1:
        n = sum(e.to_send for e in estimates)
        tokens = sum(e.input_tokens for e in estimates)
        line = f"[bold]all[/]: {n:,} requests to send, {tokens:,} input tokens"
        if any(e.seconds is not None for e in estimates):
            line += f", about {duration(sum(e.seconds or 0.0 for e in estimates))} on local models"
        if total:
            line += f", input {_usd(total.get('input', 0.0))}"
            if all("output_max" in e.cost for e in estimates if e.to_send):
                line += f", output at most {_usd(total.get('output_max', 0.0))}"
        out.print(line)
