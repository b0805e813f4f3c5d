"""Concurrent HTTP calls from synchronous code, for the hosted-API backends.

:func:`run_sync` runs a coroutine to completion (``asyncio.run``, or on a private thread when the
calling thread already runs an event loop: Jupyter, an async application); :func:`run_all` answers
a list of requests with at most ``max_concurrency`` calls in flight, reports each result through
``on_result`` as it arrives, and on the first failure starts no other request and raises that failure
alone (one line for the user). The openai and anthropic backends both use them.

The requests already sent when one fails are not cancelled: the server answers them (and a hosted API
bills them) anyway, so their answers are awaited and reported, and the cache keeps them for the re-run.
Their retries stop, though (:func:`stopping`: the retry loops ask it before trying again), so a dead
server costs no more than the attempts already on the wire.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from biaslab.errors import BiaslabError
from biaslab.models.base import OnResult

T = TypeVar("T")

_STOPPING: contextvars.ContextVar[asyncio.Event | None] = contextvars.ContextVar("biaslab_stopping", default=None)


def stopping() -> bool:
    """Whether the :func:`run_all` this call belongs to has failed: then a failed attempt is not retried."""
    event = _STOPPING.get()
    return event is not None and event.is_set()


def run_sync(make_coro: Callable[[], Coroutine[Any, Any, T]], *, name: str = "biaslab-http") -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make_coro())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def run_all(
    requests: list[Any],
    one: Callable[[Any, Any], Awaitable[Any]],
    on_result: OnResult | None,
    *,
    max_concurrency: int,
    make_client: Callable[[], Any],
) -> list[Any]:
    """``one(client, request)`` for every request, ``max_concurrency`` at a time, on one client."""
    results: list[Any] = [None] * len(requests)
    if not requests:
        return results
    sem = asyncio.Semaphore(max_concurrency)
    client = make_client()
    failed = asyncio.Event()
    failures: list[Exception] = []

    async def run_one(i: int) -> None:
        async with sem:
            if failed.is_set():  # not sent yet: nothing to pay for, nothing to wait for
                return
            try:
                result = await one(client, requests[i])
                results[i] = result
                if on_result is not None:
                    on_result(i, result)
            except Exception as exc:
                failures.append(exc)
                failed.set()

    token = _STOPPING.set(failed)  # copied into the context of every task created here
    try:
        tasks = [asyncio.ensure_future(run_one(i)) for i in range(len(requests))]
    finally:
        _STOPPING.reset(token)
    try:
        await asyncio.gather(*tasks)
    except BaseException:  # cancelled (Ctrl-C), or a task's BaseException: stop everything
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        await client.close()
    if failures:
        raise next((e for e in failures if isinstance(e, BiaslabError)), failures[0])
    return results
