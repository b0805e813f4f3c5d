"""Generation requests through a provider's batch API (``-P batch=true``), provider-neutral.

:func:`run_batched` is what a hosted-API backend's ``generate`` does with batch on. The requests it
gets are those the answer cache lacks (:class:`~biaslab.models.cache.CachedModel` asked first), and
every answer goes back through ``on_result`` as it is read, so it enters the cache under the same
key as an online answer would.

1. Each request gets a ``custom_id``: the SHA-256 of its cache-relevant fields (messages or prompt,
   decoding parameters, repetition), the same on every run.
2. The journal (:mod:`.journal`) is read first, under the journal's lock for this model (held until
   the new batches are journaled, so a run started beside this one waits, then finds them). A request
   already in a batch submitted earlier (by a run that was killed, or that is still waiting elsewhere)
   is *resumed*: that batch is polled, not submitted again, and no online call is made for it. A
   journal record whose submission was interrupted before the batch id came back is looked up at the
   provider first.
3. The other requests are split by endpoint and by the provider's limits (requests and bytes per
   batch) and submitted; each record is written durably before the submission and again once the
   batch id is known.
4. Batches are polled (after 1, 2, 4 ... seconds, then every ``batch_poll_seconds``); the bar shows
   their states. An ended batch's lines are read (:mod:`.collect`): answers are reported at once;
   lines that failed for a reason a retry may cure (expired, rate limited, server errors) go again in
   a new batch or online (``-P batch_retry``), up to three submissions per request; a request the
   batch gave no usable line for (none, an unreadable one, disagreeing ones) is asked again once;
   other failures end the run with a one-line error once everything else is in the cache. A retry
   batch is submitted under the lock too, and a run that finds another's retry of the same lines
   waits for it. A batch the provider no longer knows (HTTP 404) ends the run with a line that names
   its record and ``biaslab batches forget``, once the other batches are read.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from biaslab import progress
from biaslab.errors import BackendError
from biaslab.models.base import GenerateRequest, GenerateResult, OnResult, stable_json
from biaslab.models.batch.collect import read_output
from biaslab.models.batch.errors import stale_record_error
from biaslab.models.batch.journal import DROPPED, BatchRecord, Journal
from biaslab.models.batch.options import BatchSettings
from biaslab.models.batch.provider import BatchProvider, BatchState, NoBatchListing, StaleBatch

LOCK_WAIT_NOTE = 1.0  # seconds of waiting for another run's lock before it is said


def custom_id(request: GenerateRequest) -> str:
    """The request's id inside a batch (64 hex characters: fits both providers' custom_id rules)."""
    return hashlib.sha256(stable_json(request.as_key()).encode("utf-8")).hexdigest()


def journal_dir(settings: BatchSettings) -> Path:
    if settings.journal_dir is not None:
        return settings.journal_dir
    from biaslab.models.cache import default_cache_path

    return default_cache_path().parent / "batches"


def split(ids: list[str], lines: list[bytes], max_requests: int, max_bytes: int) -> list[tuple[list[str], list[bytes]]]:
    """Consecutive chunks of at most ``max_requests`` lines and ``max_bytes`` bytes (newlines counted)."""
    chunks: list[tuple[list[str], list[bytes]]] = []
    size = 0
    for cid, line in zip(ids, lines, strict=True):
        if not chunks or len(chunks[-1][0]) >= max_requests or size + len(line) + 1 > max_bytes:
            chunks.append(([], []))
            size = 0
        chunks[-1][0].append(cid)
        chunks[-1][1].append(line)
        size += len(line) + 1
    return chunks


def run_batched(
    provider: BatchProvider, settings: BatchSettings, requests: Sequence[GenerateRequest], on_result: OnResult | None
) -> list[GenerateResult]:
    """Answer ``requests`` through ``provider``'s batch API (see the module); results in request order."""
    runner = _Runner(provider, settings, list(requests), on_result)
    return provider.run_sync(runner.run)


class _Runner:
    def __init__(
        self,
        provider: BatchProvider,
        settings: BatchSettings,
        requests: list[GenerateRequest],
        on_result: OnResult | None,
    ) -> None:
        self.p, self.settings, self.requests, self.on_result = provider, settings, requests, on_result
        self.journal = Journal(journal_dir(settings))
        self.results: list[Any] = [None] * len(requests)
        self.by_id: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            self.by_id.setdefault(custom_id(r), []).append(i)
        self.waiting: dict[str, BatchRecord] = {}  # custom_id -> the batch that will answer it
        self.read: dict[str, set[str]] = {}  # custom_id -> tokens of the batches read for it in this run
        self.unanswered: set[str] = set()  # custom ids an ended batch gave no usable line for (asked again once)
        self.fatal: list[str] = []
        self.stale: list[str] = []
        self.states: dict[str, BatchState] = {}

    # -- the whole run ----------------------------------------------------------------------
    async def run(self) -> list[Any]:
        if not self.requests:
            return self.results
        await self.p.open()
        try:
            async with self._locked():
                await self._resume()
                fresh = [cid for cid in self.by_id if cid not in self.waiting]
                if fresh:
                    await self._submit(fresh, round=1)
            await self._wait()
        except asyncio.CancelledError:
            progress.note(
                "interrupted: the submitted batches go on at the provider; the same command resumes them "
                "(`biaslab batches list` shows them, `biaslab batches cancel` stops them)"
            )
            raise
        finally:
            await self.p.close()
        if self.stale:
            more = len(self.stale) - 1 + len(self.fatal)
            raise BackendError(self.stale[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""))
        if self.fatal:
            first, more = self.fatal[0], len(self.fatal) - 1
            raise BackendError(
                f"{first}"
                + (f" (and {more} more failed request{'s' if more > 1 else ''})" if more else "")
                + "; the answers that came back are cached, "
                "run the same command again to retry the rest"
            )
        return self.results

    def _deliver(self, cid: str, result: GenerateResult) -> None:
        for i in self.by_id.get(cid, ()):
            if self.results[i] is None:
                self.results[i] = result
                if self.on_result is not None:
                    self.on_result(i, result)

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        """Hold the journal's lock of this provider, server and model (waiting for another run that holds it)."""
        lock = self.journal.lock(self.p.name, self.p.base_url, self.p.model)
        started, noted = time.monotonic(), False
        while not lock.acquire(blocking=False):
            if not noted and time.monotonic() - started >= LOCK_WAIT_NOTE:
                noted = True
                progress.note(
                    f"another run is submitting batches of {self.p.model} from this cache; waiting for it "
                    "(the requests it submits are then awaited, not submitted again)"
                )
            await asyncio.sleep(0.1)
        try:
            yield
        finally:
            lock.release()

    def _journaled(self) -> list[BatchRecord]:
        return self.journal.records(provider=self.p.name, base_url=self.p.base_url, model=self.p.model)

    def _attach(self, ids: set[str], records: list[BatchRecord]) -> None:
        """Wait for the journaled batches that hold requests of ``ids`` (oldest first: a later submission of a
        request takes over), except those already read for it in this run and those that failed it."""
        for rec in records:
            if rec.state in DROPPED or rec.batch_id is None:
                continue
            for cid in rec.ids:
                if cid in ids and cid not in rec.failed and rec.token not in self.read.get(cid, ()):
                    self.waiting[cid] = rec

    # -- 1. batches submitted earlier --------------------------------------------------------
    async def _resume(self) -> None:
        records = self._journaled()
        claimed = {r.batch_id for r in records if r.batch_id}
        for rec in records:  # under the lock, a record without a batch id is a submission whose run died
            if rec.batch_id is not None or rec.state in DROPPED or not any(c in self.by_id for c in rec.ids):
                continue
            try:
                found = await self.p.find(rec, claimed)
            except NoBatchListing as exc:
                progress.note(
                    f"cannot look up the interrupted submission {rec.token[:12]} ({exc}); submitting its requests again"
                )
                found = None
            if found:
                rec.batch_id, rec.state = found, "submitted"
                claimed.add(found)
                progress.note(f"found batch {found}, whose submission was interrupted; waiting for it")
            else:
                rec.state = "abandoned"
            self.journal.save(rec)
        self._attach(set(self.by_id), records)
        resumed = self._records()
        if resumed:
            n = len(self.waiting)
            progress.note(
                f"resuming {len(resumed)} batch{'es' if len(resumed) > 1 else ''} submitted earlier "
                f"({', '.join(r.label for r in resumed)}) for {n} request{'s' if n != 1 else ''}; "
                "nothing is sent again for them"
            )

    def _records(self) -> list[BatchRecord]:
        """The distinct batches still to be waited for."""
        seen: dict[str, BatchRecord] = {}
        for rec in self.waiting.values():
            seen.setdefault(rec.token, rec)
        return list(seen.values())

    # -- 2. new batches (under the lock) -------------------------------------------------------
    async def _submit(self, ids: list[str], *, round: int) -> None:
        from biaslab.probing.manifest import command_line

        groups: dict[str, list[str]] = {}
        for cid in ids:
            groups.setdefault(self.p.endpoint(self.requests[self.by_id[cid][0]]), []).append(cid)
        limit = min(self.settings.max_requests or self.p.max_requests, self.p.max_requests)
        for endpoint, group in groups.items():
            lines = [self.p.line(cid, self.requests[self.by_id[cid][0]]) for cid in group]
            for chunk_ids, chunk_lines in split(group, lines, limit, self.p.max_bytes):
                rec = BatchRecord.new(
                    provider=self.p.name,
                    base_url=self.p.base_url,
                    model=self.p.model,
                    endpoint=endpoint,
                    ids=chunk_ids,
                    command=command_line(),
                    run=progress.current_run(),
                    round=round,
                )
                self.journal.save(rec)  # durable before anything is sent

                def save(rec: BatchRecord = rec) -> None:
                    self.journal.save(rec)

                await self.p.submit(rec, chunk_lines, save)
                for cid in chunk_ids:
                    self.waiting[cid] = rec
                size, n = sum(len(x) + 1 for x in chunk_lines), len(chunk_ids)
                progress.note(
                    f"submitted batch {rec.batch_id} to {self.p.name} ({n} request{'s' if n != 1 else ''}, "
                    f"{size / 1e6:.1f} MB{'' if round == 1 else f', retry {round - 1}'}); the same "
                    "command resumes it if this run stops"
                )

    # -- 3. waiting ------------------------------------------------------------------------
    async def _wait(self) -> None:
        looks = 0
        while self.waiting:
            for rec in self._records():
                try:
                    state = await self.p.poll(rec)
                except StaleBatch as exc:  # the other batches are still read
                    self.stale.append(str(stale_record_error(rec, str(exc), self.journal.directory)))
                    self.waiting = {c: r for c, r in self.waiting.items() if r.token != rec.token}
                    continue
                self.states[rec.token] = state
                if state.status != rec.state or (state.counts and state.counts != rec.counts):
                    rec.state, rec.counts = state.status, dict(state.counts or {})
                    self.journal.save(rec)
                if state.terminal:
                    await self._collect(rec, state)
            self._show()
            if self.waiting:
                await asyncio.sleep(min(2.0**looks, self.settings.poll_seconds))
                looks += 1

    def _show(self) -> None:
        recs = self._records()
        if not recs:
            progress.status("")
            return
        states = [self.states.get(r.token) for r in recs]
        done = sum(s.done for s in states if s)
        total = sum((s.total if s and s.total else len(r.ids)) for s, r in zip(states, recs))
        if len(recs) <= 2:
            words = ", ".join(f"{r.label} {s.status if s else r.state}" for r, s in zip(recs, states))
        else:
            counted = Counter(s.status if s else r.state for r, s in zip(recs, states))
            words = f"{len(recs)} batches: " + ", ".join(f"{n} {k}" for k, n in counted.most_common())
        progress.status(f"{words} · {done:,}/{total:,} done at the provider")

    async def _collect(self, rec: BatchRecord, state: BatchState) -> None:
        mine = {cid for cid, r in self.waiting.items() if r.token == rec.token}
        reading = read_output(rec, state, await self.p.outcomes(rec, state, mine))
        for note in reading.notes:
            progress.note(note)
        retry: list[str] = []
        failures: Counter = Counter()
        for cid, result in reading.answers.items():
            rec.failed.pop(cid, None)
            if cid in mine:
                self._deliver(cid, result)
        for cid, line in reading.failures.items():
            rec.failed[cid] = line.error or "failed"
            if cid in mine:
                failures[line.error or "failed"] += 1
                if line.retry:
                    retry.append(cid)
                else:
                    self.fatal.append(f"batch {rec.label}: {line.error}")
        for cid, why in reading.unanswered.items():
            rec.failed[cid] = why
            if cid not in mine:
                continue
            failures[why] += 1
            if not state.usable:
                self.fatal.append(f"batch {rec.label} {state.status}: {why}")
            elif cid in self.unanswered:  # asked again once already: no loop
                self.fatal.append(f"no usable answer for a request in two batches, the last {rec.label} ({why})")
            else:
                self.unanswered.add(cid)
                retry.append(cid)
        rec.collected = True
        self.journal.save(rec)
        for cid in mine:
            self.waiting.pop(cid, None)
            self.read.setdefault(cid, set()).add(rec.token)
        if failures:
            top = "; ".join(f"{n} {k}" for k, n in failures.most_common(3))
            progress.note(
                f"batch {rec.label} {state.status}: {len(mine) - sum(failures.values())} answered, "
                f"{sum(failures.values())} not ({top})"
            )
        if retry:
            await self._retry(retry, rec)

    async def _retry(self, ids: list[str], rec: BatchRecord) -> None:
        if rec.round >= self.settings.max_rounds:
            self.fatal.extend(
                f"request failed in {rec.round} batches, last in {rec.label}: {rec.failed.get(cid)}" for cid in ids
            )
            return
        n = len(ids)
        if self.settings.retry == "online":
            progress.note(
                f"retrying {n} failed or expired line{'s' if n != 1 else ''} of batch "
                f"{rec.label} online (-P batch_retry=online: ordinary requests, full price)"
            )
            todo = [self.requests[self.by_id[cid][0]] for cid in ids]

            def report(j: int, result: GenerateResult) -> None:
                self._deliver(ids[j], result)

            await self.p.online(todo, report)
            return
        async with self._locked():  # another run reading the same batch may have submitted these already
            self._attach(set(ids), self._journaled())
            fresh = [cid for cid in ids if cid not in self.waiting]
            if len(fresh) < n:
                taken = {self.waiting[cid].label for cid in ids if cid in self.waiting}
                progress.note(
                    f"{n - len(fresh)} failed or expired line{'s' if n - len(fresh) != 1 else ''} of batch "
                    f"{rec.label} are in {', '.join(sorted(taken))}, submitted by another run; waiting for it"
                )
            if fresh:
                progress.note(
                    f"retrying {len(fresh)} failed or expired line{'s' if len(fresh) != 1 else ''} of batch "
                    f"{rec.label} in a new batch (-P batch_retry=online sends them online instead)"
                )
                await self._submit(fresh, round=rec.round + 1)
