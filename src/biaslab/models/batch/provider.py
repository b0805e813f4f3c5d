"""What the batch runner asks of a provider (:class:`BatchProvider`), what it gets back, and what a provider
uses of its backend (:class:`BatchHost`).

A provider turns requests into its wire format (one JSONL line each), submits a batch, looks at
it, reads its results, finds a batch whose submission was interrupted, cancels one, and answers
requests online when failed lines are retried that way. The OpenAI and Anthropic providers live
with their backends and hold only the wire format; the plumbing they share is here: the client's
life, the search of the provider's batch list for an interrupted submission, the creation of a
batch that looks the batch up before it is tried again, and the reading of a JSONL results file
line by line (a line that cannot be read is named, the others are kept).
"""

from __future__ import annotations

import abc
import json
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from biaslab.models.base import GenerateRequest, GenerateResult, OnResult
from biaslab.models.batch.errors import NoBatchListing, StaleBatch  # noqa: F401 (re-exported)
from biaslab.models.batch.journal import BatchRecord

T = TypeVar("T")
MAX_LIST_PAGES = 20  # pages of the provider's batch list (x 100) looked through for an interrupted submission


class Calls(Protocol):
    """The backend's retry policy (:class:`biaslab.models.openai.retry.Retrier`)."""

    async def call(self, call: Callable[[], Awaitable[T]], *, endpoint: str) -> T: ...

    def clean(self, text: str, limit: int = 200) -> str: ...


class BatchHost(Protocol):
    """The public interface a hosted-API backend offers its batch provider."""

    base_url: str
    model: str

    @property
    def retrier(self) -> Calls: ...

    def run_sync(self, make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T: ...

    def make_client(self) -> Any: ...

    async def generate_online(self, requests: list[GenerateRequest], on_result: OnResult | None) -> list[Any]: ...


@dataclass
class BatchState:
    status: str  # the provider's own word: validating, in_progress, completed, ended ...
    terminal: bool  # nothing more will happen to it
    done: int = 0  # requests answered so far (succeeded or failed)
    total: int = 0
    counts: dict[str, int] | None = None  # the provider's request counts, for the journal
    problem: str | None = None  # why the whole batch failed or was cancelled (a terminal state without results)
    usable: bool = True  # False: cancelled by someone, the unanswered lines are not retried


@dataclass
class LineOutcome:
    custom_id: str
    result: GenerateResult | None = None
    error: str | None = None  # one line, when it failed
    retry: bool = False  # a new submission may answer it (expired, rate limited, server error)


@dataclass
class BatchOutput:
    """What an ended batch's results hold: its readable lines, and a note on each line that could not be read."""

    lines: list[LineOutcome] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # e.g. "file-0003 line 2: not JSON (...)"


class BatchProvider(abc.ABC):
    name: str  # "openai" | "anthropic"
    max_requests: int  # the provider's limits per batch
    max_bytes: int
    list_slack: float = 3600.0  # seconds before a record's creation a listed batch may be dated (clocks differ)

    def __init__(self, host: BatchHost) -> None:
        self.host = host
        self.base_url, self.model = host.base_url, host.model
        self.calls = host.retrier
        self.client: Any = None

    def run_sync(self, make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run a coroutine from synchronous code (the backend's event-loop rule)."""
        return self.host.run_sync(make_coro)

    async def open(self) -> None:
        """Make the HTTP client (inside the running event loop)."""
        self.client = self.host.make_client()

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None

    async def online(self, requests: list[GenerateRequest], on_result: OnResult) -> None:
        """Answer ``requests`` with ordinary (online) calls, each reported through ``on_result``."""
        await self.host.generate_online(requests, on_result)

    # -- the wire format (each provider's) -------------------------------------------------
    @abc.abstractmethod
    def endpoint(self, request: GenerateRequest) -> str:
        """The API path a request goes to; one batch holds one endpoint's requests."""

    @abc.abstractmethod
    def line(self, custom_id: str, request: GenerateRequest) -> bytes:
        """The request as one line of the batch's input (JSON, no newline)."""

    @abc.abstractmethod
    async def submit(self, record: BatchRecord, lines: list[bytes], save: Callable[[], None]) -> None:
        """Send the batch; set ``record.input_file_id`` / ``record.batch_id`` and call ``save()`` after each."""

    @abc.abstractmethod
    async def poll(self, record: BatchRecord) -> BatchState:
        """The batch's state now; :class:`StaleBatch` when the provider does not know it."""

    @abc.abstractmethod
    async def outcomes(self, record: BatchRecord, state: BatchState, wanted: set[str]) -> BatchOutput:
        """The results of an ended batch (every line it has; ``wanted`` may limit what is parsed)."""

    @abc.abstractmethod
    async def cancel(self, batch_id: str) -> BatchState: ...

    @abc.abstractmethod
    async def list_page(self, after: str | None) -> tuple[list[Any], bool]:
        """One page of the provider's batches, newest first, after the batch ``after``; and whether more follow."""

    @abc.abstractmethod
    def created_at(self, batch: Any) -> float:
        """When a listed batch was made (seconds since the epoch)."""

    @abc.abstractmethod
    def made_for(self, record: BatchRecord, batch: Any) -> bool:
        """Whether a listed batch is the one ``record``'s (interrupted) submission made."""

    # -- shared plumbing -------------------------------------------------------------------
    async def lookup(self, record: BatchRecord, claimed: set[str]) -> Any:
        """The listed batch that ``record``'s submission made (not one of ``claimed``), or None."""
        after: str | None = None
        for _ in range(MAX_LIST_PAGES):
            data, more = await self.list_page(after)
            for batch in data:
                if get_field(batch, "id") not in claimed and self.made_for(record, batch):
                    return batch
            oldest = min((self.created_at(b) for b in data), default=0.0)
            if not data or not more or oldest < record.created - self.list_slack:
                return None
            after = str(get_field(data[-1], "id"))
        return None

    async def find(self, record: BatchRecord, claimed: set[str]) -> str | None:
        """The id of the batch an interrupted submission of ``record`` made, if it exists (not in ``claimed``)."""
        batch = await self.lookup(record, claimed)
        return None if batch is None else str(get_field(batch, "id"))

    async def create_once(self, record: BatchRecord, create: Callable[[], Awaitable[Any]]) -> Any:
        """``create()`` the batch under the retry policy; creating is not idempotent, so a try after the first
        looks the batch up first (an earlier try may have made it before its answer was lost)."""
        tries = 0

        async def attempt() -> Any:
            nonlocal tries
            tries += 1
            if tries > 1:
                try:
                    found = await self.lookup(record, set())
                except NoBatchListing:
                    found = None
                if found is not None:
                    return found
            return await create()

        return await self.calls.call(attempt, endpoint="batches")

    def read_lines(
        self, where: str, data: bytes, read: Callable[[dict[str, Any]], LineOutcome], out: BatchOutput
    ) -> None:
        """Add the lines of the JSONL ``data`` (named ``where`` in notes) to ``out``, each through ``read``; a
        line that is not UTF-8, not a JSON object, or not shaped as ``read`` expects is noted, not raised."""
        for number, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
                if not isinstance(row, dict):
                    raise ValueError(f"a JSON {type(row).__name__}, not an object")
                outcome = read(row)
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                if isinstance(exc, UnicodeDecodeError):
                    why = "not UTF-8"
                else:
                    why = "not JSON" if isinstance(exc, json.JSONDecodeError) else "not a result line"
                out.unreadable.append(f"{where} line {number}: {why} ({self.calls.clean(str(exc), 80)})")
                continue
            out.lines.append(outcome)


def get_field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` of a JSON object, or the SDK object's attribute ``name``."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def retryable_status(status: int | None) -> bool:
    """HTTP statuses that another attempt may cure (the online retry policy's)."""
    return isinstance(status, int) and (status in (408, 409, 429) or status >= 500)


def custom_id_of(row: dict[str, Any]) -> str:
    """A result line's ``custom_id`` (a ValueError when it has none: the line cannot be matched to a request)."""
    cid = row.get("custom_id")
    if not isinstance(cid, str) or not cid:
        raise ValueError("no custom_id")
    return cid
