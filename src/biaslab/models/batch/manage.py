"""``biaslab batches``: the batches of a cache directory's journal, listed, looked at and cancelled.

Listing reads the journal only (nothing is sent). ``show`` and ``cancel`` ask the provider, with the
key from the environment, and write what they learn back to the journal; a cancelled batch's
answered lines are still read by the next run that needs them, and its other requests are
submitted anew then.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.batch.journal import BatchRecord, Journal
from biaslab.models.batch.provider import BatchProvider, BatchState

PROVIDERS = {
    "openai": "biaslab.models.openai.batch:OpenAIBatchProvider",
    "anthropic": "biaslab.models.anthropic.batch:AnthropicBatchProvider",
}
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
ENDED = ("completed", "expired", "cancelled", "failed", "ended", "abandoned")


def journal_for(cache_dir: Path | str | None) -> Journal:
    from biaslab.models.open import cache_path

    return Journal(cache_path(cache_dir).parent / "batches")


def select(
    journal: Journal, *, model: str | None = None, run: str | None = None, unfinished: bool = False
) -> list[BatchRecord]:
    """The records of ``model`` (a spec, ``openai/gpt-4o-mini``) and of runs whose label or command line
    contains ``run``; ``unfinished``: only those not read back yet."""
    out = []
    for rec in journal.records():
        if model is not None and rec.spec != model:
            continue
        if run is not None and run not in (rec.run or "") and run not in rec.command:
            continue
        if unfinished and (rec.collected or rec.state in ENDED):
            continue
        out.append(rec)
    return out


def provider_for(record: BatchRecord) -> BatchProvider:
    """The provider of ``record``'s batch, with a backend built for its model and server (nothing is sent)."""
    from biaslab.models.registry import load_model

    if record.provider not in PROVIDERS:
        raise ConfigError(f"batch {record.label} is of an unknown provider {record.provider!r}")
    base_url = None if record.base_url == DEFAULT_URLS[record.provider] else record.base_url
    backend = load_model(record.spec, base_url=base_url)
    module, _, name = PROVIDERS[record.provider].partition(":")
    return getattr(importlib.import_module(module), name)(backend)


def _ask(record: BatchRecord, what: str) -> BatchState:
    provider = provider_for(record)

    async def go() -> BatchState:
        await provider.open()
        try:
            if what == "cancel":
                return await provider.cancel(record.batch_id or "")
            return await provider.poll(record)
        finally:
            await provider.close()

    return provider.run_sync(go)


def refresh(journal: Journal, record: BatchRecord) -> BatchState | None:
    """The batch's state at the provider now (written to the journal); None when it was never submitted."""
    if record.batch_id is None:
        return None
    state = _ask(record, "poll")
    record.state, record.counts = state.status, dict(state.counts or {})
    journal.save(record)
    return state


def cancel(journal: Journal, records: list[BatchRecord]) -> list[tuple[BatchRecord, str]]:
    """Cancel each unfinished batch of ``records`` at the provider; (record, what happened) for each."""
    done = []
    for rec in records:
        if rec.batch_id is None:
            done.append((rec, "never submitted: nothing to cancel"))
            continue
        if rec.state in ENDED:
            done.append((rec, f"already {rec.state}"))
            continue
        state = _ask(rec, "cancel")
        rec.state, rec.counts = state.status, dict(state.counts or {})
        journal.save(rec)
        done.append((rec, f"cancel requested: now {state.status}"))
    return done


def describe(record: BatchRecord, state: BatchState | None = None) -> dict[str, Any]:
    """What ``biaslab batches show`` prints (no key, no prompt: the journal has neither)."""
    row = {
        "batch": record.label,
        "token": record.token,
        "model": record.spec,
        "server": record.base_url,
        "endpoint": record.endpoint,
        "requests": len(record.ids),
        "state": record.state,
        "counts": record.counts,
        "submitted": record.created,
        "run": record.run,
        "command": record.command,
        "retry round": record.round,
        "input file": record.input_file_id,
        "read back": record.collected,
        "failed lines": len(record.failed),
    }
    if state is not None:
        row["state"], row["counts"] = state.status, state.counts
        if state.problem:
            row["problem"] = state.problem
    return row
