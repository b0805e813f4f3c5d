"""``biaslab run PROBE``: parse the flags, run the probe (:func:`biaslab.app.execute.execute_run`),
print the summary table.

Probe options are given as ``-P key=value``. A probe may declare a flag of its own for an option
(``ProbeOption.alias``, e.g. ``--pairs FILE`` for ``-P pairs=FILE``): :func:`rewrite_probe_flags` turns such
flags into their ``-P`` form before the command line is parsed, reading them from the probes (so no list of
them is kept here), and ``biaslab run --help`` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperCommand

from biaslab.cli.common import (
    MODEL_HELP,
    cache_dir_option,
    console,
    fmt,
    max_tokens_option,
    pin_threads,
    retries_text,
    system_prompt_option,
    temperature_option,
    threads_option,
    top_p_option,
)
from biaslab.cli.dry_run import PRICE_IN_HELP, PRICE_OUT_HELP, PRICES_HELP, check_price_flags, dry_run_option
from biaslab.probing.schema import RunResults

FLAG_ORIGINS: dict[str, str] = {}  # option key -> the probe flag it was given as (for error messages)


def probe_flags(names: Sequence[str] | None = None) -> dict[str, tuple[str, bool, list[str]]]:
    """``{flag: (option key, takes no value, probes)}`` for the flags the probes declare (all, or ``names``)."""
    from biaslab.probes import PROBES, get_probe_class
    from biaslab.probing.options import parse_bool

    out: dict[str, tuple[str, bool, list[str]]] = {}
    for name in names if names is not None else list(PROBES):
        for key, option in get_probe_class(name).options.items():
            if option.alias:
                entry = out.setdefault(option.alias, (key, option.type is parse_bool, []))
                entry[2].append(name)
    return out


def rewrite_probe_flags(args: list[str], own: dict[str, bool]) -> tuple[list[str], dict[str, str]]:
    """The arguments of ``biaslab run`` with every probe-declared flag turned into ``-P key=value``, and the flag
    each key came from. ``own``: the command's own options (name -> whether it takes a value). The run's probe
    is asked first; the other probes only when a flag is not the run's probe's."""
    from biaslab.probes import PROBES

    probe = _positional(args, own)
    flags = probe_flags([probe]) if probe is not None and probe in PROBES else {}
    out: list[str] = []
    origins: dict[str, str] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        name, eq, value = tok.partition("=")
        if tok.startswith("--") and name not in own and name != "--help":
            if name not in flags:
                flags = {**probe_flags(), **flags}
            if name in flags:
                key, is_bool, _ = flags[name]
                if not is_bool and not eq and i + 1 < len(args):
                    i, value = i + 1, args[i + 1]
                out += ["-P", f"{key}={value if (eq or not is_bool) else 'true'}"]
                origins[key] = name
                i += 1
                continue
        out.append(tok)
        i += 1
    return out, origins


def _positional(args: list[str], own: dict[str, bool]) -> str | None:
    """The first positional argument (the probe's name), skipping options and their values."""
    i = 0
    while i < len(args):
        tok = args[i]
        if tok.startswith("-"):
            i += 2 if own.get(tok.partition("=")[0]) and "=" not in tok else 1
            continue
        return tok
    return None


def own_options() -> dict[str, bool]:
    """The run command's own options: ``{"--model": True (takes a value), "--quiet": False, ...}``."""
    import inspect

    from typer.models import OptionInfo

    out: dict[str, bool] = {}
    for param in inspect.signature(run).parameters.values():
        if isinstance(param.default, OptionInfo):
            takes_value = str(param.annotation) != "bool"
            out.update(dict.fromkeys(param.default.param_decls or (), takes_value))
    return out


def preprocess(args: list[str]) -> list[str]:
    """``biaslab run`` arguments with the probe flags rewritten (:func:`rewrite_probe_flags`)."""
    args, origins = rewrite_probe_flags(args, own_options())
    FLAG_ORIGINS.clear()
    FLAG_ORIGINS.update(origins)
    return args


class RunCommand(TyperCommand):
    """`biaslab run`, whose help ends with the probes and the flags they declare."""

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        from biaslab.probes import PROBES

        with formatter.section("Probes"):
            formatter.write_text(", ".join(PROBES) + " (`biaslab probes` says what each measures and takes)")
        flags = probe_flags()
        if flags:
            with formatter.section("Probe flags (each the same as its -P form)"):
                formatter.write_dl(
                    [
                        (flag if is_bool else f"{flag} {key.upper()}", f"-P {key}=... ({', '.join(probes)})")
                        for flag, (key, is_bool, probes) in flags.items()
                    ]
                )
        super().format_epilog(ctx, formatter)


def run(
    probe: str = typer.Argument(
        ...,
        help="Probe to run (`biaslab probes` lists them), or file:PATH for a probe defined by a YAML file.",
        metavar="PROBE",
    ),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_HELP, envvar="BIASLAB_MODEL"),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Base URL of an OpenAI-compatible server.", envvar="BIASLAB_BASE_URL"
    ),
    repetitions: int = typer.Option(1, "--repetitions", "-r", help="Samples per prompt (each with its own seed)."),
    limit: int | None = typer.Option(None, "--limit", "-n", help="Run only N items, evenly spread over the probe."),
    seed: int = typer.Option(0, "--seed", help="Run seed: every request's sampling seed derives from it."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output directory (default runs/<probe>/<model>)."),
    temperature: float | None = temperature_option(),
    top_p: float | None = top_p_option(),
    max_tokens: int | None = max_tokens_option(),
    system_prompt: str | None = system_prompt_option(),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Parallel requests to an HTTP server."),
    cache_dir: Path | None = cache_dir_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace a finished run in --out of another probe or model, or with other settings (refused without it).",
    ),
    probe_option: list[str] | None = typer.Option(
        None,
        "--probe-option",
        "-P",
        metavar="KEY=VALUE",
        help="A probe-specific option, a local model's option such as "
        "precision=bf16, or a hosted API's batch option such as "
        "batch=true (repeat the flag for more); `biaslab probes` "
        "lists each probe's options.",
    ),
    dry_run: bool = dry_run_option(),
    price_in: float | None = typer.Option(None, "--price-in", help=PRICE_IN_HELP),
    price_out: float | None = typer.Option(None, "--price-out", help=PRICE_OUT_HELP),
    prices: Path | None = typer.Option(None, "--prices", help=PRICES_HELP),
    threads: int | None = threads_option(),
) -> None:
    """Run a probe on a model; write results.json, attempts.jsonl and report.html to --out.

    Every model answer is cached: re-running the same command makes no model calls, and a run
    that was interrupted resumes where it stopped.
    """
    from biaslab.app.execute import execute_run
    from biaslab.models.base import GenerationParams
    from biaslab.probing.options import split_assignments
    from biaslab.probing.system_prompt import read_system_prompt

    pin_threads(threads)
    system = read_system_prompt(system_prompt)
    options: dict[str, Any] = dict(split_assignments(probe_option or []))
    flags = {k: FLAG_ORIGINS.get(k, f"-P {k}") for k in options}
    params = GenerationParams(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
    check_price_flags(dry_run, price_in, price_out, prices)
    if dry_run:
        from biaslab.app.dry_run import estimate_run
        from biaslab.cli.dry_run import print_estimates

        print_estimates(
            [
                estimate_run(
                    probe,
                    model=model,
                    base_url=base_url,
                    repetitions=repetitions,
                    limit=limit,
                    seed=seed,
                    params=params,
                    cache_dir=cache_dir,
                    probe_options=options,
                    option_flags=flags,
                    price_in=price_in,
                    price_out=price_out,
                    prices_file=prices,
                    system_prompt=system,
                )
            ],
            Console(),
        )
        return
    results, out_dir = execute_run(
        probe,
        model=model,
        base_url=base_url,
        repetitions=repetitions,
        limit=limit,
        seed=seed,
        out=out,
        params=params,
        max_concurrency=max_concurrency,
        cache_dir=cache_dir,
        quiet=quiet,
        console=console(stderr=True),
        probe_options=options,
        option_flags=flags,
        overwrite=overwrite,
        system_prompt=system,
    )
    print_summary(results, out_dir, Console())


run.command_options = {"cls": RunCommand}  # type: ignore[attr-defined]


def print_summary(results: RunResults, out_dir: Path, out: Console) -> None:
    from biaslab.report.html import ci_text

    metrics = results.metric_dicts()
    table = Table(
        title=f"{results.probe} · {results.model.get('model')} · {results.n_items} items, {results.n_attempts} attempts"
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("n", justify="right")
    has_q = any("q" in m for m in metrics.values())
    if has_q:
        table.add_column("p", justify="right")
        table.add_column("q", justify="right")
    for name, m in metrics.items():
        row = [name, fmt(m.get("value")), escape(ci_text(m)), str(m["n"]) if m.get("n") is not None else ""]
        if has_q:
            row += [fmt(m.get("p"), 4), fmt(m.get("q"), 4)]
        table.add_row(*row)
    out.print(table)
    if any(m.get("too_small") or m.get("interval") for m in metrics.values()):
        out.print(
            "n: units the interval is over; exact: Clopper-Pearson (every unit had the same outcome); "
            "too small: too few units to interpret, no interval"
        )
    from biaslab.probes import get_probe_class

    probe = get_probe_class(results.probe)
    for h, reading in zip(probe.headlines, probe.readings(results), strict=False):
        mark = h.mark(results.metric(h.metric))
        words = f" · mark [bold]{mark.letter}[/], {escape(mark.status)}" if mark and mark.letter else ""
        out.print(escape(reading) + words)
    out.print(
        f"model calls {results.run.model_calls}, cache hits {results.run.cache_hits}"
        f"{retries_text(results.run.retries, results.run.retry_causes)}; "
        f"wrote {out_dir}/results.json, attempts.jsonl, report.html"
    )
