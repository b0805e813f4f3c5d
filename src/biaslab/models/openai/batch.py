"""OpenAI's Batch API for the openai backend's ``-P batch=true`` (:class:`OpenAIBatchProvider`).

The wire format, as OpenAI documents it: the requests go up as a JSONL file (``POST /v1/files``,
``purpose=batch``), one line per request ``{"custom_id", "method": "POST", "url", "body"}`` whose
body is exactly what the online call sends; ``POST /v1/batches`` (``input_file_id``, ``endpoint``,
``completion_window: 24h``, and our token in ``metadata``) starts the batch; ``GET
/v1/batches/{id}`` gives its ``status`` (validating, in_progress, finalizing, completed, expired,
cancelling, cancelled, failed), ``request_counts`` and the ids of its output and error files; each
line of those (``GET /v1/files/{id}/content``) is ``{"custom_id", "response": {"status_code",
"body"}, "error"}``. A batch holds at most 50,000 requests and 200 MB. Every call goes through the
backend's retry policy; the creation of a batch, which is not idempotent, looks the batch up
(``GET /v1/batches``, by the token in its metadata) before it is tried again.

The provider uses the backend's public interface only (:class:`OpenAIHost`: the shared
:class:`~biaslab.models.batch.provider.BatchHost`, ``request_body`` and ``use_max_completion_tokens``), so a
batch line is the online call's body by construction.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, Protocol

from biaslab import progress
from biaslab.errors import BackendError
from biaslab.models.base import GenerateRequest, GenerateResult
from biaslab.models.batch.journal import BatchRecord
from biaslab.models.batch.provider import (
    BatchHost,
    BatchOutput,
    BatchProvider,
    BatchState,
    LineOutcome,
    custom_id_of,
    get_field,
    retryable_status,
)

TERMINAL = ("completed", "expired", "cancelled", "failed")
RETRY_CODES = frozenset({"batch_expired", "rate_limit_exceeded", "server_error", "timeout", "internal_error"})


class OpenAIHost(BatchHost, Protocol):
    """What the openai backend offers its batch provider beside :class:`BatchHost`."""

    def request_body(self, request: GenerateRequest) -> dict[str, Any]: ...

    def use_max_completion_tokens(self) -> None: ...


class OpenAIBatchProvider(BatchProvider):
    name = "openai"
    max_requests = 50_000
    max_bytes = 200 * 1000 * 1000
    list_slack = 3600.0
    host: OpenAIHost

    def __init__(self, host: OpenAIHost) -> None:
        super().__init__(host)
        self._files: dict[str, tuple[str | None, str | None]] = {}  # token -> (output, error) file ids

    # -- the requests --------------------------------------------------------------------
    def endpoint(self, request: GenerateRequest) -> str:
        return "/v1/chat/completions" if request.messages is not None else "/v1/completions"

    def line(self, custom_id: str, request: GenerateRequest) -> bytes:
        body = self.host.request_body(request)
        row = {"custom_id": custom_id, "method": "POST", "url": self.endpoint(request), "body": body}
        return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    # -- submitting ----------------------------------------------------------------------
    async def submit(self, record: BatchRecord, lines: list[bytes], save: Callable[[], None]) -> None:
        data = b"\n".join(lines) + b"\n"
        upload = await self.calls.call(
            lambda: self.client.files.create(file=("biaslab-batch.jsonl", data, "application/jsonl"), purpose="batch"),
            endpoint="batch-files",
        )
        record.input_file_id = str(get_field(upload, "id"))
        save()
        batch = await self.create_once(
            record,
            lambda: self.client.batches.create(
                input_file_id=record.input_file_id,
                endpoint=record.endpoint,
                completion_window="24h",
                metadata={"biaslab_token": record.token},
            ),
        )
        record.batch_id, record.state = str(get_field(batch, "id")), str(get_field(batch, "status") or "validating")
        save()

    async def list_page(self, after: str | None) -> tuple[list[Any], bool]:
        kw: dict[str, Any] = {"limit": 100} | ({"after": after} if after else {})
        page = await self.calls.call(functools.partial(self.client.batches.list, **kw), endpoint="batches-list")
        return list(get_field(page, "data") or []), bool(get_field(page, "has_more", False))

    def created_at(self, batch: Any) -> float:
        return float(get_field(batch, "created_at") or 0)

    def made_for(self, record: BatchRecord, batch: Any) -> bool:
        meta = get_field(batch, "metadata") or {}
        return get_field(meta, "biaslab_token") == record.token or bool(
            record.input_file_id and get_field(batch, "input_file_id") == record.input_file_id
        )

    # -- waiting ---------------------------------------------------------------------------
    def _state(self, record: BatchRecord | None, batch: Any) -> BatchState:
        status = str(get_field(batch, "status") or "unknown")
        rc = get_field(batch, "request_counts")
        counts = {k: int(get_field(rc, k) or 0) for k in ("total", "completed", "failed")} if rc is not None else {}
        problem = None
        if status == "failed":
            errors = get_field(get_field(batch, "errors"), "data") or []
            why = "; ".join(str(get_field(e, "message") or get_field(e, "code")) for e in errors[:3])
            why = why or "no reason given"
            problem = f"the provider refused the batch ({self.calls.clean(why)})"
        elif status == "cancelled":
            problem = "the batch was cancelled"
        if record is not None:
            self._files[record.token] = (get_field(batch, "output_file_id"), get_field(batch, "error_file_id"))
        return BatchState(
            status=status,
            terminal=status in TERMINAL,
            done=counts.get("completed", 0) + counts.get("failed", 0),
            total=counts.get("total", 0),
            counts=counts,
            problem=problem,
            usable=status in ("completed", "expired"),
        )

    async def poll(self, record: BatchRecord) -> BatchState:
        batch = await self.calls.call(lambda: self.client.batches.retrieve(record.batch_id), endpoint="batch")
        return self._state(record, batch)

    async def cancel(self, batch_id: str) -> BatchState:
        batch = await self.calls.call(lambda: self.client.batches.cancel(batch_id), endpoint="batch")
        return self._state(None, batch)

    async def outcomes(self, record: BatchRecord, state: BatchState, wanted: set[str]) -> BatchOutput:
        """The lines of the batch's output and error files (either may be absent: a batch whose every line
        failed has no output file); an unreadable line is noted, the others are kept."""
        out = BatchOutput()
        for file_id in self._files.get(record.token, (None, None)):
            if not file_id:
                continue
            try:
                content = await self.calls.call(
                    functools.partial(self.client.files.content, file_id), endpoint="batch-output"
                )
            except BackendError as exc:  # e.g. deleted after 30 days: its lines are missing, hence asked again
                progress.note(f"cannot read file {file_id} of batch {record.label} ({exc})")
                continue
            raw = content.content if hasattr(content, "content") else content
            data = raw if isinstance(raw, bytes) else str(raw).encode("utf-8")
            self.read_lines(f"file {file_id}", data, functools.partial(self._outcome, record), out)
        return out

    def _outcome(self, record: BatchRecord, row: dict[str, Any]) -> LineOutcome:
        cid = custom_id_of(row)
        error, response = row.get("error"), row.get("response")
        if error:
            code = str(get_field(error, "code") or "")
            message = self.calls.clean(str(get_field(error, "message") or code or "failed"), 160)
            return LineOutcome(cid, error=f"{code}: {message}" if code else message, retry=code in RETRY_CODES)
        status = get_field(response, "status_code")
        body = get_field(response, "body") or {}
        if status == 200:
            try:
                return LineOutcome(cid, result=self.result(record.endpoint, body))
            except BackendError as exc:  # an answer without choices: another submission may answer it
                return LineOutcome(cid, error=str(exc), retry=True)
        err = get_field(body, "error") or {}
        message = self.calls.clean(str(get_field(err, "message") or body or "no message"), 160)
        retry = retryable_status(status)
        if status == 400 and "max_completion_tokens" in message and record.round == 1:
            self.host.use_max_completion_tokens()  # newer models: the retry sends that
            retry = True
        return LineOutcome(cid, error=f"HTTP {status}: {message}", retry=retry)

    def result(self, endpoint: str, body: Any) -> GenerateResult:
        """The answer body of one line, read as the online call reads it."""
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise BackendError(f"a line of the batch's output has no choices ({self.calls.clean(str(body), 80)})")
        choice = choices[0]
        if endpoint.endswith("/chat/completions"):
            msg = choice.get("message") or {}
            text = msg.get("content") or msg.get("refusal") or ""
        else:
            text = choice.get("text") or ""
        usage = body.get("usage") or {}
        if not isinstance(text, str):
            raise BackendError(f"a line of the batch's output has no text ({self.calls.clean(str(body), 80)})")
        return GenerateResult(
            text=text,
            n_prompt_tokens=usage.get("prompt_tokens"),
            n_new_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
        )
