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

The results file is read line by line from the response's bytes (not through the SDK's decoder, which
stops at the first line that is not JSON): a line that cannot be read is named and its request asked
again, the others are kept. The provider uses its backend's public interface only
(:class:`~biaslab.models.batch.provider.BatchHost`) and the request and answer shapes of :mod:`.messages`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from biaslab import progress
from biaslab.errors import BackendError
from biaslab.models.anthropic.messages import message_params, message_result
from biaslab.models.base import GenerateRequest
from biaslab.models.batch.journal import BatchRecord
from biaslab.models.batch.provider import (
    BatchHost,
    BatchOutput,
    BatchProvider,
    BatchState,
    LineOutcome,
    custom_id_of,
    get_field,
)

RETRY_ERRORS = frozenset({"rate_limit_error", "overloaded_error", "api_error", "timeout_error"})
COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


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
    list_slack = 600.0  # seconds a server's clock may be behind ours

    def __init__(self, host: BatchHost) -> None:
        super().__init__(host)
        self._results: dict[str, str | None] = {}  # token -> results_url once ended

    def endpoint(self, request: GenerateRequest) -> str:
        return "/v1/messages"

    def line(self, custom_id: str, request: GenerateRequest) -> bytes:
        row = {"custom_id": custom_id, "params": message_params(self.model, request)}
        return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    async def submit(self, record: BatchRecord, lines: list[bytes], save: Callable[[], None]) -> None:
        requests = [json.loads(x) for x in lines]
        batch = await self.create_once(record, lambda: self.client.messages.batches.create(requests=requests))
        record.batch_id = str(get_field(batch, "id"))
        record.state = str(get_field(batch, "processing_status") or "in_progress")
        save()

    async def list_page(self, after: str | None) -> tuple[list[Any], bool]:
        kw: dict[str, Any] = {"limit": 100} | ({"after_id": after} if after else {})
        page = await self.calls.call(
            functools.partial(self.client.messages.batches.list, **kw), endpoint="batches-list"
        )
        return list(get_field(page, "data") or []), bool(get_field(page, "has_more", False))

    def created_at(self, batch: Any) -> float:
        return _epoch(get_field(batch, "created_at"))

    def made_for(self, record: BatchRecord, batch: Any) -> bool:
        counts = get_field(batch, "request_counts")
        total = sum(int(get_field(counts, k) or 0) for k in COUNTS) if counts is not None else -1
        return self.created_at(batch) >= record.created - self.list_slack and total == len(record.ids)

    def _state(self, record: BatchRecord | None, batch: Any) -> BatchState:
        status = str(get_field(batch, "processing_status") or "unknown")
        rc = get_field(batch, "request_counts")
        counts = {k: int(get_field(rc, k) or 0) for k in COUNTS} if rc is not None else {}
        total = sum(counts.values())
        cancelled = get_field(batch, "cancel_initiated_at") is not None
        if record is not None:
            self._results[record.token] = get_field(batch, "results_url")
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
        batch = await self.calls.call(lambda: self.client.messages.batches.retrieve(record.batch_id), endpoint="batch")
        return self._state(record, batch)

    async def cancel(self, batch_id: str) -> BatchState:
        batch = await self.calls.call(lambda: self.client.messages.batches.cancel(batch_id), endpoint="batch")
        return self._state(None, batch)

    async def outcomes(self, record: BatchRecord, state: BatchState, wanted: set[str]) -> BatchOutput:
        out = BatchOutput()
        if not self._results.get(record.token):  # ended without results: every line is missing
            progress.note(f"batch {record.label} {state.status} without results")
            return out

        async def fetch() -> bytes:
            decoder = await self.client.messages.batches.results(record.batch_id)
            return bytes(await decoder.http_response.aread())

        try:
            data = await self.calls.call(fetch, endpoint="batch-output")
        except BackendError as exc:  # results are kept 29 days: missing lines are asked again
            progress.note(f"cannot read the results of batch {record.label} ({exc})")
            return out
        self.read_lines(f"the results of {record.label}", data, self._outcome, out)
        return out

    def _outcome(self, row: dict[str, Any]) -> LineOutcome:
        cid = custom_id_of(row)
        result = row.get("result")
        kind = str(get_field(result, "type") or "")
        if kind == "succeeded":
            try:
                return LineOutcome(cid, result=message_result(get_field(result, "message")))
            except BackendError as exc:  # an answer without content: another submission may answer it
                return LineOutcome(cid, error=str(exc), retry=True)
        if kind == "errored":
            err = get_field(get_field(result, "error"), "error") or get_field(result, "error")
            etype = str(get_field(err, "type") or "error")
            message = self.calls.clean(str(get_field(err, "message") or etype), 160)
            return LineOutcome(cid, error=f"{etype}: {message}", retry=etype in RETRY_ERRORS)
        if kind == "expired":
            return LineOutcome(cid, error="expired (not processed within 24 hours)", retry=True)
        return LineOutcome(cid, error="the batch was cancelled" if kind == "canceled" else kind or "no result")
