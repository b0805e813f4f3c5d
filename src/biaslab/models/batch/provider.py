"""What the batch runner asks of a provider (:class:`BatchProvider`), and what it gets back.

A provider turns requests into its wire format (one JSONL line each), submits a batch, looks at
it, reads its results, finds a batch whose submission was interrupted, cancels one, and answers
requests online when failed lines are retried that way. The OpenAI and Anthropic providers live
with their backends.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from biaslab.errors import BackendError
from biaslab.models.base import GenerateRequest, GenerateResult, OnResult
from biaslab.models.batch.journal import BatchRecord

T = TypeVar("T")


class NoBatchListing(BackendError):
    """The server cannot list batches (an interrupted submission cannot be looked up there)."""


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


class BatchProvider(abc.ABC):
    name: str  # "openai" | "anthropic"
    base_url: str
    model: str
    max_requests: int  # the provider's limits per batch
    max_bytes: int

    @abc.abstractmethod
    def run_sync(self, make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run a coroutine from synchronous code (the backend's event-loop rule)."""

    @abc.abstractmethod
    async def open(self) -> None:
        """Make the HTTP client (inside the running event loop)."""

    @abc.abstractmethod
    async def close(self) -> None: ...

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
    async def find(self, record: BatchRecord, claimed: set[str]) -> str | None:
        """The id of the batch an interrupted submission of ``record`` made, if it exists (not in ``claimed``)."""

    @abc.abstractmethod
    async def poll(self, record: BatchRecord) -> BatchState: ...

    @abc.abstractmethod
    async def outcomes(self, record: BatchRecord, state: BatchState, wanted: set[str]) -> list[LineOutcome]:
        """The results of an ended batch (every line it has; ``wanted`` may limit what is parsed)."""

    @abc.abstractmethod
    async def cancel(self, batch_id: str) -> BatchState: ...

    @abc.abstractmethod
    async def online(self, requests: list[GenerateRequest], on_result: OnResult) -> None:
        """Answer ``requests`` with ordinary (online) calls, each reported through ``on_result``."""


def retryable_status(status: int | None) -> bool:
    """HTTP statuses that another attempt may cure (the online retry policy's)."""
    return status is not None and (status in (408, 409, 429) or status >= 500)
