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
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from biaslab.errors import BackendError
from biaslab.models.base import GenerateRequest, GenerateResult, OnResult
from biaslab.models.batch.journal import BatchRecord
from biaslab.models.batch.provider import BatchProvider, BatchState, LineOutcome, NoBatchListing, retryable_status
from biaslab.models.openai.retry import Retrier

if TYPE_CHECKING:  # pragma: no cover
    from biaslab.models.openai.backend import OpenAIBackend

T = TypeVar("T")
TERMINAL = ("completed", "expired", "cancelled", "failed")
RETRY_CODES = frozenset({"batch_expired", "rate_limit_exceeded", "server_error", "timeout", "internal_error"})
MAX_LIST_PAGES = 20  # batches looked through (x 100) to find an interrupted submission


class _BatchRetrier(Retrier):
    """The backend's retry policy, with the batch endpoints' own messages for a server without them."""

    def _status_error(self, exc: Any, endpoint: str) -> Exception:
        if endpoint.startswith("batch") and exc.status_code in (404, 405, 501):
            if endpoint == "batches-list":
                return NoBatchListing(f"HTTP {exc.status_code} on {self.base_url}/batches")
            return BackendError(
                f"{self.base_url} has no Batch API (HTTP {exc.status_code} on its files or batches "
                f"endpoint: {self._server_message(exc)}); run without -P batch=true"
            )
        return super()._status_error(exc, endpoint)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


class OpenAIBatchProvider(BatchProvider):
    name = "openai"
    max_requests = 50_000
    max_bytes = 200 * 1000 * 1000

    def __init__(self, backend: OpenAIBackend) -> None:
        self.backend = backend
        self.base_url, self.model = backend.base_url, backend.model
        r = backend._retrier
        self.retrier = _BatchRetrier(
            r._openai,
            r._api_key,
            model=r.model,
            base_url=r.base_url,
            timeout=r.timeout,
            max_retries=r.max_retries,
            retry_base_delay=r.retry_base_delay,
            retry_max_delay=r.retry_max_delay,
            max_retry_after=r.max_retry_after,
        )
        self.client: Any = None
        self._files: dict[str, tuple[str | None, str | None]] = {}  # token -> (output, error) file ids

    def run_sync(self, make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return self.backend._run_sync(make_coro)

    async def open(self) -> None:
        self.client = self.backend._make_client()

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None

    # -- the requests --------------------------------------------------------------------
    def endpoint(self, request: GenerateRequest) -> str:
        return "/v1/chat/completions" if request.messages is not None else "/v1/completions"

    def body(self, request: GenerateRequest) -> dict[str, Any]:
        """The online call's arguments (:meth:`OpenAIBackend._generate_one`) as a JSON body."""
        p = request.params
        body: dict[str, Any] = {"model": self.model}
        if request.messages is not None:
            body["messages"] = [{"role": role, "content": content} for role, content in request.messages]
        else:
            body["prompt"] = request.prompt
        body.update(
            {k: v for k, v in (("temperature", p.temperature), ("top_p", p.top_p), ("seed", p.seed)) if v is not None}
        )
        if p.max_tokens is not None:
            field = self.backend._chat_max_tokens_field if request.messages is not None else "max_tokens"
            body[field] = p.max_tokens
        return body

    def line(self, custom_id: str, request: GenerateRequest) -> bytes:
        row = {"custom_id": custom_id, "method": "POST", "url": self.endpoint(request), "body": self.body(request)}
        return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    # -- submitting ----------------------------------------------------------------------
    async def submit(self, record: BatchRecord, lines: list[bytes], save: Callable[[], None]) -> None:
        data = b"\n".join(lines) + b"\n"
        upload = await self.retrier.call(
            lambda: self.client.files.create(file=("biaslab-batch.jsonl", data, "application/jsonl"), purpose="batch"),
            endpoint="batch-files",
        )
        record.input_file_id = str(_get(upload, "id"))
        save()
        tries = 0

        async def create() -> Any:
            nonlocal tries
            tries += 1
            if tries > 1:  # an earlier try may have made the batch before its answer was lost
                try:
                    found = await self._lookup(record, set())
                except NoBatchListing:
                    found = None
                if found is not None:
                    return found
            return await self.client.batches.create(
                input_file_id=record.input_file_id,
                endpoint=record.endpoint,
                completion_window="24h",
                metadata={"biaslab_token": record.token},
            )

        batch = await self.retrier.call(create, endpoint="batches")
        record.batch_id, record.state = str(_get(batch, "id")), str(_get(batch, "status") or "validating")
        save()

    async def _lookup(self, record: BatchRecord, claimed: set[str]) -> Any:
        after: str | None = None
        for _ in range(MAX_LIST_PAGES):
            kw: dict[str, Any] = {"limit": 100} | ({"after": after} if after else {})
            page = await self.retrier.call(functools.partial(self.client.batches.list, **kw), endpoint="batches-list")
            data = list(_get(page, "data") or [])
            for b in data:
                if _get(b, "id") in claimed:
                    continue
                meta = _get(b, "metadata") or {}
                if _get(meta, "biaslab_token") == record.token or (
                    record.input_file_id and _get(b, "input_file_id") == record.input_file_id
                ):
                    return b
            oldest = min((int(_get(b, "created_at") or 0) for b in data), default=0)
            if not data or not _get(page, "has_more", False) or oldest < record.created - 3600:
                return None
            after = str(_get(data[-1], "id"))
        return None

    async def find(self, record: BatchRecord, claimed: set[str]) -> str | None:
        batch = await self._lookup(record, claimed)
        return None if batch is None else str(_get(batch, "id"))

    # -- waiting ---------------------------------------------------------------------------
    def _state(self, record: BatchRecord | None, batch: Any) -> BatchState:
        status = str(_get(batch, "status") or "unknown")
        rc = _get(batch, "request_counts")
        counts = {k: int(_get(rc, k) or 0) for k in ("total", "completed", "failed")} if rc is not None else {}
        problem = None
        if status == "failed":
            errors = _get(_get(batch, "errors"), "data") or []
            why = "; ".join(str(_get(e, "message") or _get(e, "code")) for e in errors[:3]) or "no reason given"
            problem = f"the provider refused the batch ({self.retrier.clean(why)})"
        elif status == "cancelled":
            problem = "the batch was cancelled"
        if record is not None:
            self._files[record.token] = (_get(batch, "output_file_id"), _get(batch, "error_file_id"))
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
        batch = await self.retrier.call(lambda: self.client.batches.retrieve(record.batch_id), endpoint="batches")
        return self._state(record, batch)

    async def cancel(self, batch_id: str) -> BatchState:
        batch = await self.retrier.call(lambda: self.client.batches.cancel(batch_id), endpoint="batches")
        return self._state(None, batch)

    async def outcomes(self, record: BatchRecord, state: BatchState, wanted: set[str]) -> list[LineOutcome]:
        out: list[LineOutcome] = []
        for file_id in self._files.get(record.token, (None, None)):
            if not file_id:
                continue
            try:
                content = await self.retrier.call(
                    functools.partial(self.client.files.content, file_id), endpoint="batch-files"
                )
            except BackendError as exc:  # e.g. deleted after 30 days: its lines are missing, hence retried
                from biaslab import progress

                progress.note(f"cannot read file {file_id} of batch {record.label} ({exc})")
                continue
            raw = content.content if hasattr(content, "content") else content
            text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
            for line in text.splitlines():
                if line.strip():
                    out.append(self._outcome(record, json.loads(line)))
        return out

    def _outcome(self, record: BatchRecord, row: dict[str, Any]) -> LineOutcome:
        cid = str(row.get("custom_id"))
        error, response = row.get("error"), row.get("response")
        if error:
            code = str(_get(error, "code") or "")
            message = self.retrier.clean(str(_get(error, "message") or code or "failed"), 160)
            return LineOutcome(cid, error=f"{code}: {message}" if code else message, retry=code in RETRY_CODES)
        status = _get(response, "status_code")
        body = _get(response, "body") or {}
        if status == 200:
            try:
                return LineOutcome(cid, result=self.result(record.endpoint, body))
            except BackendError as exc:
                return LineOutcome(cid, error=str(exc))
        err = _get(body, "error") or {}
        message = self.retrier.clean(str(_get(err, "message") or body or "no message"), 160)
        retry = retryable_status(status)
        if status == 400 and "max_completion_tokens" in message and record.round == 1:
            self.backend._chat_max_tokens_field = "max_completion_tokens"  # newer models: the retry sends that
            retry = True
        return LineOutcome(cid, error=f"HTTP {status}: {message}", retry=retry)

    def result(self, endpoint: str, body: dict[str, Any]) -> GenerateResult:
        """The answer body of one line, read as the online call reads it."""
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or not choices:
            raise BackendError(f"a line of the batch's output has no choices ({self.retrier.clean(str(body), 80)})")
        choice = choices[0]
        if endpoint.endswith("/chat/completions"):
            msg = choice.get("message") or {}
            text = msg.get("content") or msg.get("refusal") or ""
        else:
            text = choice.get("text") or ""
        usage = body.get("usage") or {}
        return GenerateResult(
            text=text,
            n_prompt_tokens=usage.get("prompt_tokens"),
            n_new_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
        )

    async def online(self, requests: list[GenerateRequest], on_result: OnResult) -> None:
        await self.backend._run_all(requests, self.backend._generate_one, on_result)
