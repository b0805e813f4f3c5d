"""Backend for any OpenAI-compatible HTTP server: OpenAI, vLLM, llama.cpp server, Ollama.

Spec: ``openai/<model>``, with ``--base-url`` for anything but api.openai.com. The API key
comes from the environment only (``OPENAI_API_KEY``, or ``BIASLAB_API_KEY``); local servers
need none (a placeholder is sent). The key never appears in :meth:`identity`, ``repr``,
error messages, logs or results.

Requests go through the official ``openai`` SDK (``AsyncOpenAI``, imported only when this
backend is built), concurrently but at most ``max_concurrency`` at a time, on a private
event loop started by the synchronous :meth:`generate` / :meth:`loglikelihood`. Each result
is handed to ``on_result(i, result)`` as soon as it arrives.

Retries are ours (the SDK's are switched off): HTTP 408/409/429/5xx, timeouts and
connection errors are retried up to ``max_retries`` times with exponential backoff and
jitter, honouring ``Retry-After`` / ``retry-after-ms`` (capped at ``max_retry_after``). Other
errors (400, 401, 403, 404...) fail at once with a one-line :class:`BackendError`; the run
stops and the requests still in flight are cancelled (finished ones were already reported).

Options (``load_model("openai/<model>", base_url=..., **options)``):

==================== ======== ================================================================
``max_concurrency``  8        requests in flight at once
``max_retries``      6        retries per request after the first attempt
``timeout``          60.0     seconds per HTTP attempt
``retry_base_delay`` 0.5      first backoff delay (s); doubles each retry, +-50 % jitter
``retry_max_delay``  30.0     cap of the backoff delay (s)
``max_retry_after``  60.0     cap of a server's Retry-After (s)
==================== ======== ================================================================

Log-likelihoods use the legacy completions endpoint with ``echo=True, logprobs=1,
max_tokens=0``, which returns the log-probabilities of the prompt's own tokens (vLLM and
the old OpenAI completion models support it; chat-only APIs, Ollama and the llama.cpp
server do not -- those raise a BackendError saying so on first use). ``context +
continuation`` is sent as one prompt and the continuation's tokens are found through
``text_offset``:

* a token *straddling* the boundary (it starts inside the context and ends inside the
  continuation, e.g. context ``"It was "`` + continuation ``"good"`` tokenized as ``"It",
  " was", " good"``) is counted as part of the continuation: it is the token that produces
  the continuation's first characters, so its probability belongs to the continuation's
  score. Consequently ``tokens`` may start with a few context characters.
* the first token of the prompt has no log-probability on servers that add no
  beginning-of-sequence token (OpenAI; vLLM adds one for models that use it). When that
  token belongs to the continuation (empty context, or a first token straddling the
  boundary) it is left out of the result (its text is not in ``tokens`` either) and a
  warning is logged once; compare such scores only between texts that start alike.
* servers that reject ``max_tokens=0`` (vLLM) are retried once with ``max_tokens=1``; the
  generated token is ignored (it starts at or after the end of the prompt).
* ``is_greedy`` comes from ``top_logprobs`` when the server returns them, else None.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import random
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence, TypeVar

from ..errors import BackendError, BiaslabError, ConfigError
from .base import (
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelBackend,
    OnResult,
)

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
API_KEY_ENV = ("OPENAI_API_KEY", "BIASLAB_API_KEY")
PLACEHOLDER_KEY = "EMPTY"
RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every 5xx

DEFAULTS: dict[str, Any] = {
    "max_concurrency": 8,
    "max_retries": 6,
    "timeout": 60.0,
    "retry_base_delay": 0.5,
    "retry_max_delay": 30.0,
    "max_retry_after": 60.0,
}

T = TypeVar("T")


def _import_openai() -> Any:
    try:
        import openai
    except ImportError:
        raise ConfigError(
            "the openai backend needs the 'openai' package, which is not installed; "
            "install it with: pip install 'biaslab[openai]'"
        ) from None
    return openai


class _Secret:
    """Holds the API key; prints as ``'***'`` so it cannot leak through repr/vars()."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


def _api_key_from_env() -> str | None:
    for var in API_KEY_ENV:
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return None


def _parse_options(options: dict[str, Any]) -> dict[str, Any]:
    opts = dict(DEFAULTS)
    for key, value in options.items():
        if value is None:  # unset CLI flag: keep the default
            continue
        if key in ("api_key", "key"):
            raise ConfigError("do not pass the API key as an option; set OPENAI_API_KEY (or BIASLAB_API_KEY)")
        if key not in DEFAULTS:
            raise ConfigError(
                f"unknown option {key!r} for the openai backend; known: {', '.join(sorted(DEFAULTS))}"
            )
        kind = type(DEFAULTS[key])
        try:
            value = kind(value)
        except (TypeError, ValueError):
            raise ConfigError(f"option {key} of the openai backend must be a number, got {value!r}") from None
        opts[key] = value
    if opts["max_concurrency"] < 1:
        raise ConfigError("max_concurrency must be at least 1")
    if opts["max_retries"] < 0:
        raise ConfigError("max_retries must be 0 or more")
    if opts["timeout"] <= 0:
        raise ConfigError("timeout must be a positive number of seconds")
    for key in ("retry_base_delay", "retry_max_delay", "max_retry_after"):
        if opts[key] < 0:
            raise ConfigError(f"{key} must be 0 or more seconds")
    return opts


class _Unsupported(Exception):
    """The server cannot return prompt logprobs (converted to a BackendError by the caller)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class OpenAIBackend(ModelBackend):
    """Chat / completion requests (and echo log-likelihoods) against an OpenAI-compatible server."""

    kind = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        model = (model or "").strip()
        if not model:
            raise ConfigError("the openai backend needs a model name: openai/<model>, e.g. openai/gpt-4o-mini")
        self._openai = _import_openai()
        opts = _parse_options(options)
        self.model = model
        self.base_url = (base_url or "").strip().rstrip("/") or OPENAI_BASE_URL
        if base_url and not re.match(r"^https?://", self.base_url):
            raise ConfigError(f"--base-url must start with http:// or https://, got {self.base_url!r}")
        key = _api_key_from_env()
        if key is None:
            if not base_url:
                raise ConfigError(
                    "set OPENAI_API_KEY (or BIASLAB_API_KEY) to use the OpenAI API, "
                    "or pass --base-url for a local OpenAI-compatible server"
                )
            key = PLACEHOLDER_KEY  # local servers (vLLM, llama.cpp, Ollama) need no key
        self._api_key = _Secret(key)
        self.max_concurrency: int = opts["max_concurrency"]
        self.max_retries: int = opts["max_retries"]
        self.timeout: float = opts["timeout"]
        self.retry_base_delay: float = opts["retry_base_delay"]
        self.retry_max_delay: float = opts["retry_max_delay"]
        self.max_retry_after: float = opts["max_retry_after"]
        self.supports_loglikelihood = True  # until the server proves otherwise
        self._unsupported_reason: str | None = None
        self._echo_max_tokens = 0  # becomes 1 for servers that reject max_tokens=0
        self._chat_max_tokens_field = "max_tokens"  # or "max_completion_tokens"
        self._warned_first_token = False

    # -- identity -------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        return {"backend": "openai", "model": self.model, "base_url": self.base_url}

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    # -- public API -----------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest], on_result: OnResult | None = None) -> list[GenerateResult]:
        requests = list(requests)
        return self._run_sync(lambda: self._run_all(requests, self._generate_one, on_result))

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None
    ) -> list[LoglikelihoodResult]:
        requests = list(requests)
        if self._unsupported_reason is not None:
            raise BackendError(self._unsupported_message(self._unsupported_reason))
        return self._run_sync(lambda: self._run_all(requests, self._loglikelihood_one, on_result))

    # -- event loop / concurrency ---------------------------------------------------------
    def _run_sync(self, make_coro: Callable[[], Awaitable[T]]) -> T:
        """Run a coroutine to completion from synchronous code.

        From a plain thread this is ``asyncio.run``; when the calling thread already runs an
        event loop (Jupyter, an async application) the work goes to a private thread with
        its own loop and this call blocks until it is done.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(make_coro())  # type: ignore[arg-type]
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = asyncio.run(make_coro())  # type: ignore[arg-type]
            except BaseException as exc:  # re-raised in the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=target, name="biaslab-openai", daemon=True)
        thread.start()
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _make_client(self) -> "AsyncOpenAI":
        return self._openai.AsyncOpenAI(
            api_key=self._api_key.reveal(),
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # retries are ours (see _with_retries)
        )

    async def _run_all(
        self,
        requests: list[Any],
        one: Callable[["AsyncOpenAI", Any], Awaitable[Any]],
        on_result: OnResult | None,
    ) -> list[Any]:
        results: list[Any] = [None] * len(requests)
        if not requests:
            return results
        sem = asyncio.Semaphore(self.max_concurrency)
        client = self._make_client()

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
            # The first failure cancelled the rest; report it alone (one line for the user).
            leaves = _leaves(eg)
            first = next((e for e in leaves if isinstance(e, BiaslabError)), leaves[0])
            raise first from None
        finally:
            await client.close()
        return results

    # -- retries --------------------------------------------------------------------------
    async def _with_retries(self, call: Callable[[], Awaitable[T]], *, endpoint: str) -> T:
        """Run ``call`` with our retry policy; translate SDK errors into BackendError.

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
                return await call()
            except openai.APIStatusError as exc:
                if exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500:
                    retry_after = _retry_after_seconds(exc.response.headers)
                    message = self._describe(exc)
                    final = self._exhausted_error(exc, attempt + 1)
                else:
                    fatal = self._status_error(exc, endpoint)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                message = self._describe(exc)
                final = self._exhausted_error(exc, attempt + 1)
                if not isinstance(exc, openai.APITimeoutError):
                    # refused / DNS: a restarting server gets two more tries, a wrong URL fails fast
                    limit = min(limit, CONNECT_RETRIES)
            if fatal is not None:
                raise fatal
            if attempt >= limit:
                raise final
            delay = self._backoff(attempt, retry_after)
            log.info("%s: %s; retry %d/%d in %.2f s", self.base_url, message, attempt + 1, self.max_retries, delay)
            await asyncio.sleep(delay)
            attempt += 1

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        delay = min(self.retry_base_delay * (2**attempt), self.retry_max_delay)
        return delay * random.uniform(0.5, 1.5)

    # -- error messages (one line, no secrets) ----------------------------------------------
    def _clean(self, text: str, limit: int = 200) -> str:
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
        return self._clean(str(msg))

    def _describe(self, exc: Exception) -> str:
        openai = self._openai
        if isinstance(exc, openai.APIStatusError):
            return f"HTTP {exc.status_code}"
        if isinstance(exc, openai.APITimeoutError):
            return f"no answer within {self.timeout:g} s"
        cause = exc.__cause__ or exc.__context__
        reason = str(cause) if cause is not None and str(cause) else str(exc)
        return self._clean(reason, 120) or type(exc).__name__

    def _exhausted_error(self, exc: Exception, attempts: int) -> BackendError:
        openai = self._openai
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code == 429:
                return BackendError(
                    f"{self.base_url} kept answering 429 (rate limited) after {tries}; lower max_concurrency, "
                    "raise max_retries, or try again later"
                )
            return BackendError(
                f"{self.base_url} kept failing with HTTP {exc.status_code} after {tries} "
                f"({self._server_message(exc)}); check the server's logs and try again"
            )
        if isinstance(exc, openai.APITimeoutError):
            return BackendError(
                f"{self.base_url} did not answer within {self.timeout:g} s ({tries}); the server may be "
                "overloaded: raise the timeout option or lower max_concurrency"
            )
        return BackendError(
            f"cannot reach {self.base_url}: {self._describe(exc)} ({tries}); "
            "check --base-url / that the server is running"
        )

    def _status_error(self, exc: Any, endpoint: str) -> Exception:
        status = exc.status_code
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
                return _Unsupported(f"HTTP 404 on {self.base_url}/completions")
            path = "chat/completions" if endpoint == "chat" else "completions"
            return BackendError(
                f"{self.base_url}/{path} answered HTTP 404 ({self._server_message(exc)}); check --base-url "
                "(it usually ends in /v1)"
                + ("" if endpoint == "chat" else "; raw-prompt requests need a server with the completions API")
            )
        if endpoint == "completions-echo" and status in (400, 422, 501):
            detail = self._server_message(exc)
            if not _is_too_long(detail):  # a too-long text is this request's problem, not the server's
                return _Unsupported(f"HTTP {status}: {detail}")
        return BackendError(
            f"{self.base_url} rejected the request for model {self.model!r} "
            f"(HTTP {status}: {self._server_message(exc)})"
        )

    def _unsupported_message(self, detail: str) -> str:
        return (
            f"{self.model} at {self.base_url} is chat-only / does not return prompt logprobs ({detail}); "
            "likelihood probes need a local model (hf/..., gguf/...) or a completions server with "
            "echo+logprobs such as vLLM"
        )

    # -- generate -------------------------------------------------------------------------
    async def _generate_one(self, client: "AsyncOpenAI", req: GenerateRequest) -> GenerateResult:
        p = req.params
        kw: dict[str, Any] = {
            k: v
            for k, v in (("temperature", p.temperature), ("top_p", p.top_p), ("seed", p.seed))
            if v is not None
        }
        if req.messages is not None:
            messages = [{"role": role, "content": content} for role, content in req.messages]
            resp = await self._chat_call(client, messages, kw, p.max_tokens)
            choice = self._first_choice(resp, "chat/completions")
            msg = choice.message
            text = (getattr(msg, "content", None) or getattr(msg, "refusal", None) or "") if msg else ""
        else:
            if p.max_tokens is not None:
                kw["max_tokens"] = p.max_tokens
            resp = await self._with_retries(
                lambda: client.completions.create(model=self.model, prompt=req.prompt, **kw), endpoint="completions"
            )
            choice = self._first_choice(resp, "completions")
            text = getattr(choice, "text", None) or ""
        usage = getattr(resp, "usage", None)
        return GenerateResult(
            text=text,
            n_prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
            n_new_tokens=getattr(usage, "completion_tokens", None) if usage else None,
            finish_reason=getattr(choice, "finish_reason", None),
        )

    def _first_choice(self, resp: Any, path: str) -> Any:
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list):
            got = repr(self._clean(resp, 60)) if isinstance(resp, str) else "an answer without 'choices'"
            raise BackendError(
                f"{self.base_url}/{path} did not answer like an OpenAI-compatible API (got {got}); "
                "check --base-url (it usually ends in /v1)"
            )
        if not choices:
            raise BackendError(f"{self.base_url}/{path} returned no choices for model {self.model!r}")
        return choices[0]

    async def _chat_call(self, client: "AsyncOpenAI", messages: list[dict[str, str]], kw: dict[str, Any],
                         max_tokens: int | None) -> Any:
        async def call(field: str) -> Any:
            extra = {field: max_tokens} if max_tokens is not None else {}
            return await self._with_retries(
                lambda: client.chat.completions.create(model=self.model, messages=messages, **kw, **extra),  # type: ignore[arg-type]
                endpoint="chat",
            )

        field = self._chat_max_tokens_field
        try:
            return await call(field)
        except BackendError as exc:
            # Newer OpenAI models refuse max_tokens and want max_completion_tokens.
            if max_tokens is None or field != "max_tokens" or "max_completion_tokens" not in str(exc):
                raise
            self._chat_max_tokens_field = "max_completion_tokens"
            return await call("max_completion_tokens")

    # -- loglikelihood --------------------------------------------------------------------
    async def _loglikelihood_one(self, client: "AsyncOpenAI", req: LoglikelihoodRequest) -> LoglikelihoodResult:
        if not req.continuation:
            return LoglikelihoodResult(token_logprobs=[], tokens=[], is_greedy=True)
        prompt = req.context + req.continuation
        try:
            resp = await self._echo_call(client, prompt)
            return self._parse_echo(resp, prompt, len(req.context))
        except _Unsupported as exc:
            self.supports_loglikelihood = False
            self._unsupported_reason = exc.detail
            raise BackendError(self._unsupported_message(exc.detail)) from None

    async def _echo_call(self, client: "AsyncOpenAI", prompt: str) -> Any:
        def call(max_tokens: int) -> Awaitable[Any]:
            return self._with_retries(
                lambda: client.completions.create(
                    model=self.model, prompt=prompt, max_tokens=max_tokens, echo=True, logprobs=1, temperature=0
                ),
                endpoint="completions-echo",
            )

        max_tokens = self._echo_max_tokens
        try:
            return await call(max_tokens)
        except _Unsupported as exc:
            # vLLM refuses max_tokens=0: ask for one token, which _parse_echo ignores.
            if max_tokens != 0 or "max_tokens" not in exc.detail:
                raise
            self._echo_max_tokens = 1
            return await call(1)

    def _parse_echo(self, resp: Any, prompt: str, cont_start: int) -> LoglikelihoodResult:
        lp = getattr(self._first_choice(resp, "completions"), "logprobs", None)
        tokens = list(getattr(lp, "tokens", None) or []) if lp is not None else []
        values = list(getattr(lp, "token_logprobs", None) or []) if lp is not None else []
        offsets = getattr(lp, "text_offset", None) if lp is not None else None
        tops = getattr(lp, "top_logprobs", None) if lp is not None else None
        if not tokens or len(values) != len(tokens):
            raise _Unsupported("the completions answer has no prompt logprobs")
        if offsets is None or len(offsets) != len(tokens):
            offsets = _offsets_from_tokens(tokens, prompt)
            if offsets is None:
                raise _Unsupported("the completions answer has no text_offset")
        offsets = list(offsets)
        n = len(tokens)
        # Token i covers [offsets[i], end_i) with end_i the next token's offset (robust to
        # tokens whose text is not their exact characters, e.g. partial UTF-8 bytes).
        ends = [offsets[i + 1] if i + 1 < n else offsets[i] + len(tokens[i]) for i in range(n)]
        picked = [i for i in range(n) if offsets[i] < len(prompt) and ends[i] > cont_start]
        if not picked:
            raise _Unsupported("the echoed tokens do not cover the prompt")
        out_lp: list[float] = []
        out_tok: list[str] = []
        greedy: bool | None = True
        for i in picked:
            value = values[i]
            if value is None:
                if all(ends[j] <= offsets[i] for j in range(i)):  # first real token: no context
                    if not self._warned_first_token:
                        self._warned_first_token = True
                        log.warning(
                            "%s gives no logprob for the first token of a prompt; when it belongs to the "
                            "continuation (empty context) it is left out of the score", self.base_url)
                    continue
                raise BackendError(f"{self.base_url} returned no logprob for token {i} of a prompt; "
                                   "cannot score this text")
            out_lp.append(float(value))
            out_tok.append(tokens[i])
            top = tops[i] if tops is not None and i < len(tops) else None
            if greedy is not None:
                if top:
                    greedy = greedy and float(value) >= max(float(v) for v in top.values()) - 1e-6
                else:
                    greedy = None
        return LoglikelihoodResult(token_logprobs=out_lp, tokens=out_tok, is_greedy=greedy if out_lp else None)


# -- helpers -------------------------------------------------------------------------------
def _leaves(eg: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in eg.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out


CONNECT_RETRIES = 2


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


def _offsets_from_tokens(tokens: list[str], prompt: str) -> list[int] | None:
    """Character offsets from the token texts, when they spell the prompt exactly."""
    offsets, pos = [], 0
    for tok in tokens:
        offsets.append(pos)
        pos += len(tok)
    return offsets if "".join(tokens).startswith(prompt) else None


def from_spec(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None) -> OpenAIBackend:
    """Registry factory for ``openai/<model>``."""
    return OpenAIBackend(name, base_url=base_url, **(options or {}))
