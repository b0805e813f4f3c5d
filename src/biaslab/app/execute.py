"""A whole ``biaslab run``: the probe by name (its class looked up once, :mod:`.resolve`), the model spec parsed
once (:class:`~biaslab.models.spec.ModelSpec`), the cache, the progress bar, then every output file written at once
(a failed run never replaces earlier results)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from biaslab.app.resolve import resolve_probe
from biaslab.app.results import write_run
from biaslab.errors import ConfigError, WriteError
from biaslab.io import json_safe
from biaslab.models.base import GenerationParams, model_identity
from biaslab.models.open import open_cached_model
from biaslab.models.registry import check_spec
from biaslab.out_lock import hold_out_dir
from biaslab.probing.config import RunConfig, RunContext, validate_config
from biaslab.probing.runner import plan_run, run_probe
from biaslab.probing.schema import SCHEMA_VERSION, RunResults
from biaslab.probing.system_prompt import not_applied_note, run_parameters, takes_system_prompt
from biaslab.progress import attempt_progress


def default_out_dir(probe: str, model_spec: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_spec.split("/")[-1])[:60] or "model"
    folder = re.sub(r"[^A-Za-z0-9._-]+", "_", probe.removeprefix("file:")) or "probe"  # file:x@hash -> x_hash
    return Path("runs") / folder / slug


def execute_run(
    probe_name: str,
    *,
    model: str | None,
    base_url: str | None,
    repetitions: int,
    limit: int | None,
    seed: int,
    out: Path | None,
    params: GenerationParams,
    max_concurrency: int = 8,
    cache_dir: Path | None = None,
    quiet: bool = False,
    console: Console,
    probe_options: dict[str, Any] | None = None,
    option_flags: dict[str, str] | None = None,
    overwrite: bool = False,
    system_prompt: str | None = None,
) -> tuple[RunResults, Path]:
    """Run ``probe_name`` on ``model`` and write its outputs; returns (results, output directory).

    ``probe_options``: the probe's options by name (``-P`` values; strings are converted), and options of a
    local model (``-P precision=bf16``: those the probe does not take, :meth:`.resolve.ResolvedProbe.split`);
    ``option_flags``: the flag each came from, for error messages. The model spec is resolved
    before the data loads (a bad spec fails at once). ``out`` is created and locked before the model opens
    (:func:`~biaslab.out_lock.hold_out_dir`: one writer per folder); a finished run in it of another probe or
    model, or with other settings, is refused unless ``overwrite`` (:func:`refuse_other_run`). ``system_prompt``:
    put first in every chat request (:mod:`biaslab.probing.system_prompt`).
    """
    cfg = RunConfig(repetitions=repetitions, limit=limit, seed=seed, params=params, system_prompt=system_prompt)
    validate_config(cfg)  # fail on nonsense flags before loading anything heavy
    spec = check_spec(model, base_url=base_url)  # parsed once; a bad model spec fails at once
    resolved = resolve_probe(probe_name)  # file:PATH -> file:<name>@<hash>, the file read and checked now
    probe_name = resolved.name
    probe_options, model_options = resolved.split(probe_options or {})
    probe = resolved.build(probe_options, via=option_flags)
    out_dir = Path(out) if out else default_out_dir(probe_name, spec.text)
    with hold_out_dir(out_dir):  # one writer per --out, from before the first model call to the last write
        cached = open_cached_model(
            spec,
            cache_dir=cache_dir,
            max_concurrency=max_concurrency,
            console=None if quiet else console,
            model_options=model_options,
        )
        try:
            if not overwrite:
                refuse_other_run(out_dir, probe_name, cached.identity())
            items = probe.load_items()  # validates data before the model loads
            if not overwrite:  # the settings are known once the data is (a probe may record what it loaded)
                settings = run_parameters(probe, cfg, RunContext(model=cached.identity()))
                refuse_other_run(out_dir, probe_name, cached.identity(), parameters=settings)
            planned = plan_run(probe, probe.select_items(items, cfg), cfg)
            say_system_prompt(probe, planned, cfg, console)
            generates = any(p.kind == "generate" for p in planned)
            with attempt_progress(
                len(planned), f"{probe_name} on {spec}", console=console, enabled=not quiet, generates=generates
            ) as bar:
                results, attempts = run_probe(probe, cached, cfg, progress=bar, items=items)
            try:
                write_run(out_dir, probe, results, attempts)
            except WriteError as exc:
                raise answers_kept(exc) from None
        finally:
            cached.close()
    return results, out_dir


def say_system_prompt(probe: Any, planned: list[Any], cfg: RunConfig, console: Console | None) -> None:
    """One line on ``console`` when the run's system prompt reaches none (or only some) of its requests."""
    if cfg.system_prompt is None or console is None:
        return
    note = not_applied_note(probe, planned, sum(takes_system_prompt(p.request) for p in planned))
    if note is not None:
        console.print(note, markup=False, highlight=False, soft_wrap=True)


def answers_kept(exc: WriteError) -> WriteError:
    """``exc`` of a write after the model calls, saying that they are not lost."""
    return WriteError(f"{exc}; the answers are cached, so the same command again makes no model calls")


def refuse_other_run(
    out_dir: Path, probe_name: str, identity: dict[str, Any], parameters: dict[str, Any] | None = None
) -> None:
    """A ConfigError when ``out_dir`` holds a finished run (its results.json) of another probe or model, or,
    given this run's ``parameters`` (as results.json records them), of the same probe and model with other
    settings (another ``--scoring``, ``--limit``, ...): its message names what differs."""
    path = Path(out_dir) / "results.json"
    if not path.is_file():
        return
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = {}
    if not isinstance(earlier, dict):
        earlier = {}
    what = f"{earlier.get('probe', '?')} on {(earlier.get('model') or {}).get('model', '?')}"
    model = earlier.get("model")
    same_model = isinstance(model, dict) and model_identity(model) == json_safe(identity)  # the engine's sizes aside
    if earlier.get("probe") != probe_name or not same_model:
        raise ConfigError(
            f"--out {out_dir} already holds a finished run ({what}); give another --out, "
            "or add --overwrite to replace it"
        )
    if parameters is None or not isinstance(earlier.get("parameters"), dict):
        return
    # an older results.json may lack settings recorded since: then only the settings both record count
    both_only = earlier.get("schema_version") != SCHEMA_VERSION
    differ = settings_differences(earlier["parameters"], json_safe(parameters), both_only=both_only)
    if differ:
        raise ConfigError(
            f"--out {out_dir} already holds a finished run of {what} with other settings "
            f"({'; '.join(differ)}); give another --out, or add --overwrite to replace it"
        )
    # the same run again: it resumes from the cache and refreshes its files


def settings_differences(
    there: dict[str, Any], here: dict[str, Any], *, both_only: bool = False, prefix: str = ""
) -> list[str]:
    """``["scoring: shared-tokens there, full-sentence here", ...]``: the settings (nested ones as
    ``build.seed``) in which a finished run (``there``) and this one (``here``) differ."""
    out: list[str] = []
    for key in sorted(set(there) | set(here)):
        name = f"{prefix}{key}"
        if key not in there or key not in here:
            if not both_only:
                out.append(
                    f"{name}: {_shown(there.get(key), key in there)} there, {_shown(here.get(key), key in here)} here"
                )
        elif isinstance(there[key], dict) and isinstance(here[key], dict):
            out += settings_differences(there[key], here[key], both_only=both_only, prefix=f"{name}.")
        elif there[key] != here[key]:
            out.append(f"{name}: {_shown(there[key])} there, {_shown(here[key])} here")
    return out


def _shown(value: Any, present: bool = True) -> str:
    if not present:
        return "not set"
    text = "none" if value is None else value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
