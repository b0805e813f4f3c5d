"""``biaslab batches``: the batches of a cache directory's journal, listed, looked at, cancelled and forgotten.

Listing reads the journal only (nothing is sent). ``show`` and ``cancel`` ask the provider, with the
key from the environment, and write what they learn back to the journal; a cancelled batch's
answered lines are still read by the next run that needs them, and its other requests are
submitted anew then. ``forget`` marks records that no run should wait for any more (a batch the
provider no longer knows: deleted, or made with another key or project); the record stays in the
journal, marked ``forgotten``, and the next run submits the requests the cache lacks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.batch.errors import StaleBatch, stale_record_error
from biaslab.models.batch.journal import DROPPED, BatchRecord, Journal
from biaslab.models.batch.provider import BatchProvider, BatchState

PROVIDERS = ("openai", "anthropic")
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
ENDED = ("completed", "expired", "cancelled", "failed", "ended", *DROPPED)


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
    make = getattr(backend, "batch_provider", None)
    if make is None:  # pragma: no cover - the registry's openai/ and anthropic/ backends have one
        raise ConfigError(f"{record.spec} has no batch API")
    provider: BatchProvider = make()
    return provider


def _ask(journal: Journal, record: BatchRecord, what: str) -> BatchState:
    """The batch's state at the provider (``what``: poll or cancel); a stale record is one line naming it."""
    provider = provider_for(record)

    async def go() -> BatchState:
        await provider.open()
        try:
            if what == "cancel":
                return await provider.cancel(record.batch_id or "")
            return await provider.poll(record)
        finally:
            await provider.close()

    try:
        return provider.run_sync(go)
    except StaleBatch as exc:
        raise stale_record_error(record, str(exc), journal.directory) from None


def refresh(journal: Journal, record: BatchRecord) -> BatchState | None:
    """The batch's state at the provider now (written to the journal); None when it was never submitted."""
    if record.batch_id is None:
        return None
    state = _ask(journal, record, "poll")
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
        state = _ask(journal, rec, "cancel")
        rec.state, rec.counts = state.status, dict(state.counts or {})
        journal.save(rec)
        done.append((rec, f"cancel requested: now {state.status}"))
    return done


def forget(journal: Journal, records: list[BatchRecord]) -> list[tuple[BatchRecord, str]]:
    """Mark ``records`` forgotten: no run waits for their batches again (nothing is sent to the provider)."""
    done = []
    for rec in records:
        with journal.lock(rec.provider, rec.base_url, rec.model):  # not while a run of this model submits
            if rec.state == "forgotten":
                done.append((rec, "already forgotten"))
                continue
            was = rec.state
            rec.state = "forgotten"
            journal.save(rec)
        done.append((rec, f"forgotten (was {was}); a run that needs its requests submits them again"))
    return done


def stale(journal: Journal, records: list[BatchRecord]) -> list[BatchRecord]:
    """Those of ``records`` (submitted, not forgotten) whose batch the provider answers HTTP 404 for."""
    out = []
    for rec in records:
        if rec.batch_id is None or rec.state in DROPPED:
            continue
        try:
            _ask(journal, rec, "poll")
        except StaleBatch:
            out.append(rec)
    return out


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
