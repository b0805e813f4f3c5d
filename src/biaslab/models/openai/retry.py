"""Retries and error messages of the openai backend: :class:`Retrier`, which the backend holds.

:meth:`Retrier.call` runs one SDK call under the backend's retry policy (see :mod:`.backend`)
and turns the SDK's exceptions into one-line :class:`BackendError` messages that never show the
API key, or into :class:`Unsupported` when the server cannot return prompt logprobs;
:meth:`Retrier.first_choice` rejects answers that do not look like the OpenAI API's.

A 200 answer that is broken (cut short, not JSON, a proxy's HTML page, no choices: :class:`BadReply`)
is a transient fault like a 5xx: retried with the same backoff, as often. Every retry is counted by its
cause in :attr:`Retrier.retries` (``HTTP 429``, ``timeout``, ``bad reply``...), which the run reports.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from biaslab.errors import BackendError
from biaslab.models.async_calls import stopping
from biaslab.models.batch.errors import batch_status_error
from biaslab.models.openai.options import PLACEHOLDER_KEY, Secret

log = logging.getLogger(__name__.rpartition(".")[0] + ".backend")  # the backend's logger

RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every 5xx
CONNECT_RETRIES = 2

T = TypeVar("T")


class Unsupported(Exception):
    """The server cannot return prompt logprobs (converted to a BackendError by the caller)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadReply(BackendError):
    """A 200 answer that is not the API's: ``what`` came back, ``advice`` says what to do about it.

    Raised by the checks of an answer inside :meth:`Retrier.call`, it is retried like a 5xx; raised
    elsewhere it is a one-line error like any other."""

    def __init__(self, what: str, advice: str) -> None:
        super().__init__(f"{what}; {advice}")
        self.what = what
        self.advice = advice

    def after(self, tries: str) -> BackendError:
        """The error once the retries ran out."""
        return BackendError(f"{self.what}, after {tries}; {self.advice}")


class Retrier:
    """The retry policy and the error messages of the requests to one server, for one model.

    ``openai`` is the imported SDK module (its exception classes), ``api_key`` the key that
    messages must never show; the other settings are the backend's options.
    """

    batch_api = "Batch API"  # what the provider calls its batch API, in messages

    def __init__(
        self,
        openai: Any,
        api_key: Secret,
        *,
        model: str,
        base_url: str,
        timeout: float,
        max_retries: int,
        retry_base_delay: float,
        retry_max_delay: float,
        max_retry_after: float,
    ) -> None:
        self._openai = openai
        self._api_key = api_key
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.max_retry_after = max_retry_after
        self.retries: Counter[str] = Counter()  # retries made, by cause

    # -- retries --------------------------------------------------------------------------
    async def call(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        endpoint: str,
        check: Callable[[T], object] | None = None,
    ) -> T:
        """Run ``call`` with our retry policy; translate SDK errors into BackendError.

        ``check(answer)`` raises :class:`BadReply` for an answer of the wrong shape, which is retried.
        Our errors are raised outside the ``except`` blocks so they carry no reference to
        the SDK's exception (whose request object holds the Authorization header).
        """
        openai = self._openai
        attempt = 0
        while True:
            retry_after: float | None = None
            fatal: Exception | None = None
            limit = self.max_retries
            try:
                answer = await call()
                if check is not None:
                    check(answer)
                return answer
            except openai.APIStatusError as exc:
                if exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500:
                    retry_after = _retry_after_seconds(exc.response.headers)
                    cause = message = self._describe(exc)
                    final = self._exhausted_error(exc, attempt + 1)
                else:
                    fatal = self._status_error(exc, endpoint)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                message = self._describe(exc)
                cause = "timeout" if isinstance(exc, openai.APITimeoutError) else "connection"
                final = self._exhausted_error(exc, attempt + 1)
                if not isinstance(exc, openai.APITimeoutError) and not _cut_short(exc):
                    # refused / DNS: a restarting server gets two more tries, a wrong URL fails fast
                    limit = min(limit, CONNECT_RETRIES)
            except (BadReply, ValueError) as exc:  # ValueError: the SDK's JSON decoding of a broken body
                if not isinstance(exc, BadReply | json.JSONDecodeError | UnicodeDecodeError):
                    raise
                bad = exc if isinstance(exc, BadReply) else self._not_json(exc, endpoint)
                cause, message = "bad reply", bad.what
                final = bad.after(_tries(attempt + 1))
            if fatal is not None:
                raise fatal
            if attempt >= limit or stopping():
                raise final
            delay = self.backoff(attempt, retry_after)
            self.retries[cause] += 1
            log.info("%s: %s; retry %d/%d in %.2f s", self.base_url, message, attempt + 1, self.max_retries, delay)
            await asyncio.sleep(delay)
            attempt += 1

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry ``attempt + 1``: the server's Retry-After (capped), else
        exponential backoff with jitter."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        delay = min(self.retry_base_delay * (2**attempt), self.retry_max_delay)
        return delay * random.uniform(0.5, 1.5)

    # -- error messages (one line, no secrets) ----------------------------------------------
    def first_choice(self, resp: Any, path: str) -> Any:
        """The first choice of an answer from ``path`` (e.g. ``"completions"``); a :class:`BadReply` if there is
        none (a proxy's page, a server's hiccup: retried when this checks an answer inside :meth:`call`)."""
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list):
            got = repr(self.clean(resp, 60)) if isinstance(resp, str) else "an answer without 'choices'"
            raise BadReply(
                f"{self.base_url}/{path} did not answer like an OpenAI-compatible API (got {got})",
                f"check --base-url (it usually ends in /v1); if it is right, {AGAIN}",
            )
        if not choices:
            raise BadReply(f"{self.base_url}/{path} returned no choices for model {self.model!r}", AGAIN)
        return choices[0]

    def _not_json(self, exc: ValueError, endpoint: str) -> BadReply:
        body = exc.doc if isinstance(exc, json.JSONDecodeError) else ""
        where = f"{self.base_url}/{_PATHS.get(endpoint, endpoint)}"
        if body.lstrip().startswith(("{", "[")):
            return BadReply(f"{where} sent an answer cut short (invalid JSON: {self.clean(str(exc), 80)})", AGAIN)
        got = f"got {self.clean(body, 60)!r}" if body.strip() else "got bytes that are not UTF-8 text"
        return BadReply(f"{where} sent an answer that is not JSON ({got})", AGAIN)

    def clean(self, text: str, limit: int = 200) -> str:
        """``text`` on one line, the API key masked, cut to ``limit`` characters."""
        text = " ".join(str(text).split())
        key = self._api_key.reveal()
        if key and key != PLACEHOLDER_KEY:
            text = text.replace(key, "***")
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def _server_message(self, exc: Any) -> str:
        body = getattr(exc, "body", None)
        msg: Any = None
        if isinstance(body, dict):
            err = body.get("error", body)
            msg = err.get("message") if isinstance(err, dict) else err
            msg = msg or body.get("detail") or body.get("message")
        if not msg:
            msg = getattr(exc, "message", None) or str(exc)
        return self.clean(str(msg))

    def _describe(self, exc: Exception) -> str:
        openai = self._openai
        if isinstance(exc, openai.APIStatusError):
            return f"HTTP {exc.status_code}"
        if isinstance(exc, openai.APITimeoutError):
            return f"no answer within {self.timeout:g} s"
        cause = exc.__cause__ or exc.__context__
        reason = str(cause) if cause is not None and str(cause) else str(exc)
        return self.clean(reason, 120) or type(exc).__name__

    def _exhausted_error(self, exc: Exception, attempts: int) -> BackendError:
        openai = self._openai
        tries = _tries(attempts)
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code == 429:
                return BackendError(
                    f"{self.base_url} kept answering 429 (rate limited) after {tries}; lower --max-concurrency, "
                    "raise max_retries (-P max_retries=N), or try again later"
                )
            return BackendError(
                f"{self.base_url} kept failing with HTTP {exc.status_code} after {tries} "
                f"({self._server_message(exc)}); check the server's logs and try again"
            )
        if isinstance(exc, openai.APITimeoutError):
            return BackendError(
                f"{self.base_url} did not answer within {self.timeout:g} s ({tries}); the server may be "
                "overloaded: raise the timeout (-P timeout=SECONDS) or lower --max-concurrency"
            )
        if _cut_short(exc):
            return BackendError(
                f"{self.base_url} kept breaking off its answers ({self._describe(exc)}; {tries}); {AGAIN}"
            )
        return BackendError(
            f"cannot reach {self.base_url}: {self._describe(exc)} ({tries}); "
            "check --base-url / that the server is running"
        )

    def _status_error(self, exc: Any, endpoint: str) -> Exception:
        status = exc.status_code
        if endpoint.startswith("batch"):
            batch_error = batch_status_error(self.base_url, self.batch_api, status, self._server_message(exc), endpoint)
            if batch_error is not None:
                return batch_error
        if status == 401:
            return BackendError(
                f"the server rejected the API key (HTTP 401 from {self.base_url}); set OPENAI_API_KEY "
                "(or BIASLAB_API_KEY) to a valid key for this server"
            )
        if status == 403:
            return BackendError(
                f"access denied (HTTP 403 from {self.base_url}) for model {self.model!r}; check that your "
                "API key may use this model"
            )
        if status == 404:
            if _is_model_not_found(exc, self._server_message(exc)):
                return BackendError(
                    f"model {self.model!r} not found at {self.base_url}; check the name after openai/ "
                    f"(the server lists its models at {self.base_url}/models)"
                )
            if endpoint == "completions-echo":
                return Unsupported(f"HTTP 404 on {self.base_url}/completions")
            if endpoint == "tokenize":
                return Unsupported("no /tokenize endpoint (HTTP 404)")
            path = "chat/completions" if endpoint == "chat" else "completions"
            return BackendError(
                f"{self.base_url}/{path} answered HTTP 404 ({self._server_message(exc)}); check --base-url "
                "(it usually ends in /v1)"
                + ("" if endpoint == "chat" else "; raw-prompt requests need a server with the completions API")
            )
        if endpoint == "tokenize" and status in (400, 405, 422, 501):
            return Unsupported(f"/tokenize answered HTTP {status}: {self._server_message(exc)}")
        if endpoint == "completions-echo" and status in (400, 422, 501):
            detail = self._server_message(exc)
            if not _is_too_long(detail):  # a too-long text is this request's problem, not the server's
                return Unsupported(f"HTTP {status}: {detail}")
        return BackendError(
            f"{self.base_url} rejected the request for model {self.model!r} "
            f"(HTTP {status}: {self._server_message(exc)})"
        )


AGAIN = "the server (or a proxy before it) is failing: try again later, or raise max_retries (-P max_retries=N)"
_PATHS = {  # the endpoint each call names, for messages
    "chat": "chat/completions",
    "completions": "completions",
    "completions-echo": "completions",
    "messages": "v1/messages",  # Anthropic's
}


def _cut_short(exc: Exception) -> bool:
    """Whether a connection error broke off an answer (the server was reached) rather than failed to connect."""
    cause = exc.__cause__ or exc.__context__
    return type(cause).__name__ in ("RemoteProtocolError", "ReadError")


def _tries(attempts: int) -> str:
    return f"{attempts} attempt{'s' if attempts != 1 else ''}"


def _retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _is_model_not_found(exc: Any, message: str) -> bool:
    if getattr(exc, "code", None) == "model_not_found":
        return True
    m = message.lower()
    return "model" in m and any(w in m for w in ("not found", "does not exist", "not exist", "unknown", "no such"))


def _is_too_long(message: str) -> bool:
    m = message.lower()
    return "context length" in m or "context window" in m or "too long" in m or "maximum context" in m
