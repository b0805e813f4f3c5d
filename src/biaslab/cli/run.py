"""`biaslab run`: wire probe, model, cache, progress bar, outputs and the summary table."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from biaslab.models.base import GenerationParams
from biaslab.models.cache import CachedModel, ResponseCache, default_cache_path
from biaslab.models.registry import DEFAULT_MODEL, load_model
from biaslab.probing.core import spread_subset
from biaslab.probing.runner import RunConfig, count_requests, run_probe, validate_config, write_run
from biaslab.progress import attempt_progress


def default_out_dir(probe: str, model_spec: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_spec.split("/")[-1])[:60] or "model"
    return Path("runs") / probe / slug


def execute_run(probe_name: str, *, model: str | None, base_url: str | None, repetitions: int, limit: int | None,
                seed: int, out: Path | None, params: GenerationParams, max_concurrency: int = 8,
                cache_dir: Path | None = None, quiet: bool = False, console: Console, out_console: Console,
                probe_options: dict[str, Any] | None = None) -> dict[str, Any]:
    cfg = RunConfig(repetitions=repetitions, limit=limit, seed=seed, params=params)
    validate_config(cfg)  # fail on nonsense flags before loading anything heavy
    probe = _create(probe_name, probe_options or {})
    spec = model or DEFAULT_MODEL
    out_dir = Path(out) if out else default_out_dir(probe_name, spec)
    if out_dir.exists() and not out_dir.is_dir():
        from biaslab.errors import ConfigError

        raise ConfigError(f"--out {out_dir} is a file; give a directory")
    cache = ResponseCache(Path(cache_dir) / "responses.sqlite" if cache_dir else default_cache_path())
    items = probe.load_items()  # validates data before the model loads
    n_requests = count_requests(probe, spread_subset(items, limit), cfg)
    options = {"max_concurrency": max_concurrency} if spec.startswith("openai/") else {}

    def announce(what: str) -> None:  # local models load at the first answer the cache lacks
        if not quiet:
            console.print(f"loading model [bold]{what}[/] ...")

    backend = load_model(spec, base_url=base_url, on_load=announce, **options)
    cached = CachedModel(backend, cache)
    try:
        with attempt_progress(n_requests, f"{probe_name} on {spec}", console=console, enabled=not quiet) as bar:
            results, attempts = run_probe(probe, cached, cfg, progress=bar, items=items)
        write_run(out_dir, probe, results, attempts)
    finally:
        cached.close()
    print_summary(results, out_dir, out_console)
    return results


_FLAGS = {"items_file": "--items", "pairs": "--pairs", "scoring": "--scoring"}


def _create(probe_name: str, options: dict[str, Any]):
    """The probe, with probe-specific options (--pairs, --scoring) for the probes that take them."""
    import inspect

    from biaslab.errors import ConfigError
    from biaslab.probes import PROBES, get_probe_class

    cls = get_probe_class(probe_name)
    accepted = inspect.signature(cls.__init__).parameters
    wrong = [k for k in options if k not in accepted]
    if wrong:
        flag = _FLAGS.get(wrong[0], wrong[0])
        takers = sorted(n for n in PROBES if wrong[0] in inspect.signature(get_probe_class(n).__init__).parameters)
        raise ConfigError(f"{flag} does not apply to the {probe_name} probe; it works with: "
                          f"{', '.join(takers) or 'no probe'}")
    return cls(**options)


def print_summary(results: dict[str, Any], out_dir: Path, console: Console) -> None:
    table = Table(title=f"{results['probe']} · {results['model'].get('model')} · {results['n_items']} items, "
                        f"{results['n_attempts']} attempts")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    has_q = any("q" in m for m in results["metrics"].values())
    if has_q:
        table.add_column("p", justify="right")
        table.add_column("q", justify="right")
    for name, m in results["metrics"].items():
        row = [name, _f(m.get("value")), escape(f"[{_f(m.get('ci_low'))}, {_f(m.get('ci_high'))}]")]
        if has_q:
            row += [_f(m.get("p"), 4), _f(m.get("q"), 4)]
        table.add_row(*row)
    console.print(table)
    run = results.get("run", {})
    console.print(f"model calls {run.get('model_calls', 0)}, cache hits {run.get('cache_hits', 0)}; "
                  f"wrote {out_dir}/results.json, attempts.jsonl, report.html")


def _f(v: Any, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"
