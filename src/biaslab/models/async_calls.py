"""Concurrent HTTP calls from synchronous code, for the hosted-API backends.

:func:`run_sync` runs a coroutine to completion (``asyncio.run``, or on a private thread when the
calling thread already runs an event loop: Jupyter, an async application); :func:`run_all` answers
a list of requests with at most ``max_concurrency`` calls in flight, reports each result through
``on_result`` as it arrives, and on the first failure cancels the rest and raises that failure alone
(one line for the user). The openai and anthropic backends both use them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from biaslab.errors import BiaslabError
from biaslab.models.base import OnResult

T = TypeVar("T")


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

    async def run_one(i: int) -> None:
        async with sem:
            result = await one(client, requests[i])
        results[i] = result
        if on_result is not None:
            on_result(i, result)

    try:
        async with asyncio.TaskGroup() as group:
            for i in range(len(requests)):
                group.create_task(run_one(i))
    except BaseExceptionGroup as eg:
        leaves = _leaves(eg)
        first = next((e for e in leaves if isinstance(e, BiaslabError)), leaves[0])
        raise first from None
    finally:
        await client.close()
    return results


def _leaves(eg: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in eg.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out
