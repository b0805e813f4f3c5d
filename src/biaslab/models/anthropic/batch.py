"""Anthropic's Message Batches API for ``anthropic/<model>`` with ``-P batch=true``.

As Anthropic documents it: ``POST /v1/messages/batches`` takes ``{"requests": [{"custom_id",
"params"}]}`` (``params`` is the Messages API body; at most 100,000 requests and 256 MB);
``GET /v1/messages/batches/{id}`` gives ``processing_status`` (``in_progress``, ``canceling``,
``ended``), ``request_counts`` (processing, succeeded, errored, canceled, expired) and, once ended,
``results_url``, a JSONL file of ``{"custom_id", "result": {"type": "succeeded", "message"} |
{"type": "errored", "error"} | {"type": "canceled"} | {"type": "expired"}}``. A Message Batch has no
metadata, so an interrupted submission is looked up by its size and time (``GET
/v1/messages/batches``, newest first): the newest batch of the same number of requests created
since the record was written, not claimed by another record; adopting a wrong one costs nothing but
time (its lines have other custom ids, so ours come back missing and are submitted again).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from biaslab.errors import BackendError
from biaslab.models.anthropic.backend import message_params, message_result
from biaslab.models.base import GenerateRequest, OnResult
from biaslab.models.batch.journal import BatchRecord
from biaslab.models.batch.provider import BatchProvider, BatchState, LineOutcome

if TYPE_CHECKING:  # pragma: no cover
    from biaslab.models.anthropic.backend import AnthropicBackend

T = TypeVar("T")
RETRY_ERRORS = frozenset({"rate_limit_error", "overloaded_error", "api_error", "timeout_error"})
MAX_LIST_PAGES = 20
CLOCK_SLACK = 600.0  # seconds a server's clock may be behind ours


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _epoch(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


class AnthropicBatchProvider(BatchProvider):
    name = "anthropic"
    max_requests = 100_000
    max_bytes = 256 * 1000 * 1000

    def __init__(self, backend: AnthropicBackend) -> None:
        self.backend = backend
        self.base_url, self.model = backend.base_url, backend.model
        self.retrier = backend._retrier
        self.client: Any = None

    def run_sync(self, make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return self.backend._run_sync(make_coro)

    async def open(self) -> None:
        self.client = self.backend._make_client()

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None

    def endpoint(self, request: GenerateRequest) -> str:
        return "/v1/messages"

    def line(self, custom_id: str, request: GenerateRequest) -> bytes:
        row = {"custom_id": custom_id, "params": message_params(self.model, request)}
        return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    async def submit(self, record: BatchRecord, lines: list[bytes], save: Callable[[], None]) -> None:
        requests = [json.loads(x) for x in lines]
        tries = 0

        async def create() -> Any:
            nonlocal tries
            tries += 1
            if tries > 1:  # the batch may exist though its answer was lost
                found = await self._lookup(record, set())
                if found is not None:
                    return found
            return await self.client.messages.batches.create(requests=requests)

        batch = await self.retrier.call(create, endpoint="batches")
        record.batch_id, record.state = str(_get(batch, "id")), str(_get(batch, "processing_status") or "in_progress")
        save()

    async def _lookup(self, record: BatchRecord, claimed: set[str]) -> Any:
        after: str | None = None
        for _ in range(MAX_LIST_PAGES):
            kw: dict[str, Any] = {"limit": 100} | ({"after_id": after} if after else {})
            page = await self.retrier.call(
                functools.partial(self.client.messages.batches.list, **kw), endpoint="batches-list"
            )
            data = list(_get(page, "data") or [])
            for b in data:
                created = _epoch(_get(b, "created_at"))
                counts = _get(b, "request_counts")
                total = (
                    sum(
                        int(_get(counts, k) or 0) for k in ("processing", "succeeded", "errored", "canceled", "expired")
                    )
                    if counts is not None
                    else -1
                )
                if (
                    _get(b, "id") not in claimed
                    and created >= record.created - CLOCK_SLACK
                    and total == len(record.ids)
                ):
                    return b
            oldest = min((_epoch(_get(b, "created_at")) for b in data), default=0.0)
            if not data or not _get(page, "has_more", False) or oldest < record.created - CLOCK_SLACK:
                return None
            after = str(_get(data[-1], "id"))
        return None

    async def find(self, record: BatchRecord, claimed: set[str]) -> str | None:
        batch = await self._lookup(record, claimed)
        return None if batch is None else str(_get(batch, "id"))

    def _state(self, batch: Any) -> BatchState:
        status = str(_get(batch, "processing_status") or "unknown")
        rc = _get(batch, "request_counts")
        counts = (
            {k: int(_get(rc, k) or 0) for k in ("processing", "succeeded", "errored", "canceled", "expired")}
            if rc is not None
            else {}
        )
        total = sum(counts.values())
        cancelled = _get(batch, "cancel_initiated_at") is not None
        return BatchState(
            status=status,
            terminal=status == "ended",
            done=total - counts.get("processing", 0),
            total=total,
            counts=counts,
            problem="the batch was cancelled" if cancelled else None,
            usable=not cancelled,
        )

    async def poll(self, record: BatchRecord) -> BatchState:
        batch = await self.retrier.call(
            lambda: self.client.messages.batches.retrieve(record.batch_id), endpoint="batches"
        )
        return self._state(batch)

    async def cancel(self, batch_id: str) -> BatchState:
        batch = await self.retrier.call(lambda: self.client.messages.batches.cancel(batch_id), endpoint="batches")
        return self._state(batch)

    async def outcomes(self, record: BatchRecord, state: BatchState, wanted: set[str]) -> list[LineOutcome]:
        async def fetch() -> list[Any]:
            decoder = await self.client.messages.batches.results(record.batch_id)
            return [row async for row in decoder]

        problem: str | None = None
        try:
            rows = await self.retrier.call(fetch, endpoint="batches")
        except BackendError as exc:  # results are kept 29 days: missing lines are submitted again
            problem = str(exc)
        except self.backend._sdk.AnthropicError as exc:  # e.g. no results_url
            problem = self.retrier.clean(str(exc), 160)
        if problem is not None:
            from biaslab import progress

            progress.note(f"cannot read the results of batch {record.label} ({problem})")
            return []
        return [self._outcome(row) for row in rows]

    def _outcome(self, row: Any) -> LineOutcome:
        cid = str(_get(row, "custom_id"))
        result = _get(row, "result")
        kind = str(_get(result, "type") or "")
        if kind == "succeeded":
            try:
                return LineOutcome(cid, result=message_result(_get(result, "message")))
            except BackendError as exc:
                return LineOutcome(cid, error=str(exc))
        if kind == "errored":
            err = _get(_get(result, "error"), "error") or _get(result, "error")
            etype = str(_get(err, "type") or "error")
            message = self.retrier.clean(str(_get(err, "message") or etype), 160)
            return LineOutcome(cid, error=f"{etype}: {message}", retry=etype in RETRY_ERRORS)
        if kind == "expired":
            return LineOutcome(cid, error="expired (not processed within 24 hours)", retry=True)
        return LineOutcome(cid, error="the batch was cancelled" if kind == "canceled" else kind or "no result")

    async def online(self, requests: list[GenerateRequest], on_result: OnResult) -> None:
        await self.backend._run_all(requests, self.backend._generate_one, on_result)
