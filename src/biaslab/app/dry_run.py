"""``biaslab run ... --dry-run`` (and each run of ``biaslab suite --dry-run``, :mod:`biaslab.suite.estimate`): what a
run would send, and what it would cost.

The run is planned exactly as :func:`~biaslab.app.execute.execute_run` plans it (same probe
options, ``--limit``, repetitions and decoding parameters), then each request's cache key is looked
up read-only in the answer cache (:mod:`biaslab.models.spec_identity`: the model's identity without
building or loading it). Nothing is sent, no model is loaded and nothing is written.

For the requests not cached: input tokens (:mod:`biaslab.probing.token_count`: the model's tokenizer where it is
local, a stated approximation otherwise), output tokens at most (the requests' ``max_tokens``; unknown
when a request leaves it to the model) and, when the cache holds answers of this model to the same
kind of request, expected (their mean new tokens). With prices (``--price-in``/``--price-out`` in
dollars per million tokens, or a price file naming models), the cost of the input, of the output at
most and expected; with ``-P batch=true`` at the batch price (a file's ``batch_input``/``batch_output``,
else half the online price: both providers' batch discount).

Many repetitions are not planned one by one: past :data:`EXACT_REQUESTS` planned requests, the first
repetitions are, and the others are counted from them (a repetition asks the same prompts with a seed of
its own: as many requests, the same input tokens and token limits; counted as not cached). A run larger than
:data:`~biaslab.probing.config.MAX_REQUESTS` is refused at once, as the run itself refuses it.
"""

from __future__ import annotations

import json
import sqlite3
import tomllib
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from biaslab.app.time_estimate import is_local
from biaslab.errors import ConfigError
from biaslab.models.base import GenerateRequest, GenerationParams, LoglikelihoodRequest
from biaslab.models.cache import request_cache_key
from biaslab.models.spec import ModelSpec
from biaslab.models.spec_identity import spec_identity
from biaslab.probing.config import RunConfig, check_run_size
from biaslab.probing.generation import GenerationProbe

BATCH_DISCOUNT = 0.5
EXACT_REQUESTS = 100_000  # requests a dry run plans one by one at most (about 10 s); further repetitions are counted


@dataclass
class Prices:
    input: float  # dollars per million input tokens
    output: float | None
    source: str  # how they were given, for the output


@dataclass
class Estimate:
    probe: str
    model: str
    requests: int = 0
    generations: int = 0
    loglikelihoods: int = 0
    cached: int | None = 0  # None: unknown (the model's identity needs it loaded)
    to_send: int = 0  # distinct requests not in the cache
    input_tokens: int = 0  # of the requests to send
    output_tokens_max: int | None = 0  # None: some request leaves max_tokens to the model
    output_tokens_expected: int | None = None
    tokens_by: str = ""
    batch: bool = False
    cost: dict[str, float] = field(default_factory=dict)  # input, output_max, output_expected (dollars)
    price_note: str = ""
    extrapolated: str = ""  # how repetitions past those planned one by one were counted
    seconds: float | None = None  # estimated wall time (local models: :mod:`.time_estimate`)
    seconds_note: str = ""
    measured: bool = False  # the model loaded to measure its speed on this machine

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def read_prices(
    price_in: float | None, price_out: float | None, prices_file: Path | None, spec: str, batch: bool
) -> Prices | None:
    """The prices to apply to ``spec`` (None: no price given for it)."""
    if price_in is not None or price_out is not None:
        if prices_file is not None:
            raise ConfigError("give prices either as --price-in/--price-out or as --prices FILE, not both")
        if price_in is None or price_in < 0 or (price_out is not None and price_out < 0):
            raise ConfigError(
                "--price-in (and --price-out) are dollars per million tokens, 0 or more; "
                "--price-in is needed with --price-out"
            )
        factor, how = (BATCH_DISCOUNT, ", halved for the batch API") if batch else (1.0, "")
        return Prices(
            price_in * factor,
            None if price_out is None else price_out * factor,
            f"--price-in {price_in:g} --price-out {price_out if price_out is not None else '-'} per "
            f"million tokens{how}",
        )
    if prices_file is None:
        return None
    table = _price_table(prices_file)
    row = table.get(spec) or table.get(spec.partition("/")[2])
    if row is None:
        return None
    try:
        p_in, p_out = float(row["input"]), (float(row["output"]) if row.get("output") is not None else None)
        if batch:
            p_in = float(row.get("batch_input", p_in * BATCH_DISCOUNT))
            b_out = row.get("batch_output")
            p_out = float(b_out) if b_out is not None else (None if p_out is None else p_out * BATCH_DISCOUNT)
    except (KeyError, TypeError, ValueError):
        raise ConfigError(
            f"{prices_file}: {spec} needs input (and output) prices in dollars per million tokens, "
            'e.g. ["openai/gpt-4o-mini"] input = 0.15 output = 0.6'
        ) from None
    how = " (batch prices" + ("" if "batch_input" in row else ": half the online ones") + ")" if batch else ""
    return Prices(p_in, p_out, f"{prices_file}{how}")


def _price_table(path: Path) -> dict[str, dict[str, Any]]:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the price file {path} ({exc.strerror})") from None
    try:
        table = json.loads(raw) if path.suffix.lower() == ".json" else tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"the price file {path} is not valid {'JSON' if path.suffix == '.json' else 'TOML'} ({exc})"
        ) from None
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise ConfigError(
            f"the price file {path} maps model specs to tables of prices (input, output, "
            "batch_input, batch_output: dollars per million tokens)"
        )
    return table


def cached_answers(cache_db: Path, keys: list[str]) -> dict[str, str]:
    """The cache's answers under ``keys``, read-only (an absent cache holds none; nothing is created)."""
    if not cache_db.is_file():
        return {}
    found: dict[str, str] = {}
    try:
        with closing(sqlite3.connect(f"file:{cache_db}?mode=ro", uri=True, timeout=30)) as db:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                rows = db.execute(
                    f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk
                )
                found.update(dict(rows))
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"cannot read the response cache {cache_db} ({exc})") from None
    return found


def estimate(
    probe: Any,
    planned: list[Any],
    spec: ModelSpec,
    *,
    cache_db: Path,
    model_options: dict[str, Any],
    prices_for: Any,
    more: float = 0.0,
) -> Estimate:
    """The estimate of ``planned`` (a probe's planned requests) on ``spec``; ``more``: how many times over the run
    asks each planned request again under other repetitions (extrapolated: none of them cached)."""
    from biaslab.models.batch.options import BATCH_OPTIONS, split_batch_options
    from biaslab.models.model_options import check_model_options
    from biaslab.probing.token_count import counter

    check_model_options(spec.prefix, spec.text, model_options)
    batch_opts = {k: v for k, v in model_options.items() if k in BATCH_OPTIONS}
    local = {k: v for k, v in model_options.items() if k not in BATCH_OPTIONS}
    batch = split_batch_options(batch_opts)[0].enabled
    ident = spec_identity(spec, model_options=local)
    requests = [p.request for p in planned]
    est = Estimate(
        probe=probe.name,
        model=spec.text,
        requests=round(len(requests) * (1 + more)),
        batch=batch,
        generations=round(sum(isinstance(r, GenerateRequest) for r in requests) * (1 + more)),
        loglikelihoods=round(sum(isinstance(r, LoglikelihoodRequest) for r in requests) * (1 + more)),
    )
    keys: list[str | None] = [None] * len(requests)
    if ident.model_key is not None:
        keys = [
            request_cache_key(
                ident.model_key,
                "loglikelihood" if isinstance(r, LoglikelihoodRequest) else "generate",
                r.as_key(),
                ident.rule,
            )
            for r in requests
        ]
    found = cached_answers(cache_db, sorted({k for k in keys if k})) if ident.model_key is not None else {}
    est.cached = sum(1 for k in keys if k in found) if ident.model_key is not None else None
    distinct: dict[str, Any] = {}
    for i, (key, r) in enumerate(zip(keys, requests)):
        if key is None or key not in found:
            distinct.setdefault(key or f"#{i}", r)
    todo = list(distinct.values())
    est.to_send = len(todo) + round(len(requests) * more)
    count, est.tokens_by = counter(ident.prefix, ident.name, chat_template=local.get("chat_template", "auto") == "auto")
    est.input_tokens = sum(count(r) for r in todo) + (round(sum(count(r) for r in requests) * more) if more else 0)
    gens = [r for r in todo if isinstance(r, GenerateRequest)]
    all_gens = [r for r in requests if isinstance(r, GenerateRequest)]
    maxima = [r.params.max_tokens for r in gens + (all_gens if more else [])]
    if any(m is None for m in maxima):
        est.output_tokens_max = None
    else:
        est.output_tokens_max = sum(r.params.max_tokens or 0 for r in gens)
        est.output_tokens_max += round(sum(r.params.max_tokens or 0 for r in all_gens) * more)
    n_gens = len(gens) + len(all_gens) * more
    seen = [
        json.loads(found[k]).get("n_new_tokens")
        for k, r in zip(keys, requests)
        if k in found and isinstance(r, GenerateRequest)
    ]
    seen = [n for n in seen if isinstance(n, int)]
    if seen and n_gens:
        est.output_tokens_expected = round(sum(seen) / len(seen) * n_gens)
    elif not n_gens:
        est.output_tokens_expected = 0
    if is_local(ident.prefix):
        from biaslab.app.time_estimate import local_estimate

        lengths = None if not seen else sum(seen) / len(seen)
        repeat = (len(todo) + len(requests) * more) / len(todo) if todo else 1.0
        local_estimate(est, spec, local, [(count(r), r) for r in todo], lengths, repeat)
    prices = prices_for(spec.text, batch)
    if prices is not None:
        est.price_note = prices.source
        est.cost["input"] = est.input_tokens * prices.input / 1e6
        if prices.output is not None:
            if est.output_tokens_max is not None:
                est.cost["output_max"] = est.output_tokens_max * prices.output / 1e6
            if est.output_tokens_expected is not None:
                est.cost["output_expected"] = est.output_tokens_expected * prices.output / 1e6
    return est


def prices_from(price_in: float | None, price_out: float | None, prices_file: Path | None) -> Any:
    read_prices(price_in, price_out, prices_file, "", False)  # bad flags or an unreadable file fail first
    return lambda spec, batch: read_prices(price_in, price_out, prices_file, spec, batch)


def estimate_run(
    probe_name: str,
    *,
    model: str | None,
    base_url: str | None,
    repetitions: int,
    limit: int | None,
    seed: int,
    params: GenerationParams,
    cache_dir: Path | None = None,
    probe_options: dict[str, Any] | None = None,
    option_flags: dict[str, str] | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    prices_file: Path | None = None,
    system_prompt: str | None = None,
) -> Estimate:
    """``biaslab run PROBE --dry-run``: the arguments of :func:`~biaslab.app.execute.execute_run`, plus prices."""
    from biaslab.app.resolve import resolve_probe
    from biaslab.models.open import cache_path
    from biaslab.models.registry import check_spec
    from biaslab.probing.config import validate_config
    from biaslab.probing.runner import plan_run

    cfg = RunConfig(repetitions=repetitions, limit=limit, seed=seed, params=params, system_prompt=system_prompt)
    validate_config(cfg)
    spec = check_spec(model, base_url=base_url)  # parsed once
    prices_for = prices_from(price_in, price_out, prices_file)
    resolved = resolve_probe(probe_name)
    probe_options, model_options = resolved.split(probe_options or {})
    probe = resolved.build(probe_options, via=option_flags)
    items = probe.select_items(probe.load_items(), cfg)
    exact = cfg.repetitions
    if isinstance(probe, GenerationProbe):
        check_run_size(sum(len(item.prompts) for item in items), cfg)
        one = len(plan_run(probe, items, replace(cfg, repetitions=1)))
        exact = max(1, min(cfg.repetitions, EXACT_REQUESTS // max(1, one)))
    planned = plan_run(probe, items, replace(cfg, repetitions=exact))
    est = estimate(
        probe,
        planned,
        spec,
        cache_db=cache_path(cache_dir),
        model_options=model_options,
        prices_for=prices_for,
        more=cfg.repetitions / exact - 1,
    )
    if exact < cfg.repetitions:
        est.extrapolated = (
            f"repetitions {exact + 1:,} to {cfg.repetitions:,} counted from the first {exact:,} (as not cached)"
        )
    return est
