"""Claude through Anthropic's Messages API: ``anthropic/<model>`` (e.g. ``anthropic/claude-haiku-4-5``).

The official ``anthropic`` SDK (extra ``anthropic``) is imported only when this backend is built.
The key comes from ``ANTHROPIC_API_KEY`` only and never appears in :meth:`identity`, ``repr``,
errors, logs, caches or results; ``--base-url`` points at another server speaking the same API
(a gateway, a test server), which may need no key. Requests run like the openai backend's: at most
``max_concurrency`` at a time, our retries (the SDK's are off) on 408/409/429/5xx/529, timeouts and
connection errors and broken 200 answers (cut short, not JSON, a proxy's page, no content) with
exponential backoff honouring ``Retry-After``, counted by cause, one-line errors otherwise; each
answer is reported as it arrives, so the answer cache stores it at once.

A request's messages become the API's: ``system`` turns go to the ``system`` field, the rest stay
user/assistant turns; ``temperature`` and ``top_p``, when the request has them, are sent in the body as
they are (newer SDKs no longer type them; a model that refuses them gets a one-line error saying so).
Anthropic has no sampling seed (repetitions differ by their own cache keys)
and requires ``max_tokens``: a request without one asks for :data:`DEFAULT_MAX_TOKENS`. The stop
reason is mapped to the openai backend's words (``end_turn``/``stop_sequence`` -> ``stop``,
``max_tokens`` -> ``length``). Raw-prompt requests and log-likelihoods are refused with one line:
the Messages API takes conversations and returns no prompt log-probabilities. ``-P batch=true``
sends generations through the Message Batches API (:mod:`.batch`).

Options: ``max_concurrency`` (8), ``max_retries`` (6), ``timeout`` (60 s), ``retry_base_delay``
(0.5 s), ``retry_max_delay`` (30 s), ``max_retry_after`` (60 s), and the batch options.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from biaslab.errors import BackendError, ConfigError
from biaslab.models.anthropic.batch import AnthropicBatchProvider
from biaslab.models.anthropic.messages import (  # noqa: F401 (re-exported)
    DEFAULT_MAX_TOKENS,
    STOP_REASONS,
    message_params,
    message_result,
)
from biaslab.models.async_calls import run_all, run_sync
from biaslab.models.base import (
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelBackend,
    OnResult,
)
from biaslab.models.batch.options import split_batch_options
from biaslab.models.batch.runner import run_batched
from biaslab.models.openai.options import PLACEHOLDER_KEY, Secret, call_option
from biaslab.models.openai.retry import AGAIN, BadReply, Retrier

T = TypeVar("T")
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
API_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULTS: dict[str, Any] = {
    "max_concurrency": 8,
    "max_retries": 6,
    "timeout": 60.0,
    "retry_base_delay": 0.5,
    "retry_max_delay": 30.0,
    "max_retry_after": 60.0,
}


def normalize_base_url(base_url: str | None) -> str:
    """The server's root (the SDK adds ``/v1/messages``): a trailing ``/`` or ``/v1`` is dropped."""
    url = (base_url or "").strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[:-3]
    return url or ANTHROPIC_BASE_URL


def anthropic_identity(model: str, base_url: str | None) -> dict[str, Any]:
    """What keys this backend's answers in the cache (the same whether batch is on or off)."""
    return {"backend": "anthropic", "model": model, "base_url": normalize_base_url(base_url)}


def _parse_options(options: dict[str, Any]) -> dict[str, Any]:
    opts = dict(DEFAULTS)
    for key, value in options.items():
        if value is None:
            continue
        if key in ("api_key", "key"):
            raise ConfigError(f"do not pass the API key as an option; set {API_KEY_ENV}")
        if key not in DEFAULTS:
            raise ConfigError(f"unknown option {key!r} for the anthropic backend; known: {', '.join(sorted(DEFAULTS))}")
        opts[key] = call_option(key, value)
    return opts


class AnthropicRetrier(Retrier):
    """The openai backend's retry policy (the SDKs share their error classes' shapes), Anthropic's messages."""

    batch_api = "Message Batches API"

    def _status_error(self, exc: Any, endpoint: str) -> Exception:
        status = exc.status_code
        if status == 401:
            return BackendError(
                f"the server rejected the API key (HTTP 401 from {self.base_url}); set {API_KEY_ENV} "
                "to a valid Anthropic API key"
            )
        if status == 404 and endpoint == "messages":
            return BackendError(
                f"model {self.model!r} not found at {self.base_url} (HTTP 404: "
                f"{self._server_message(exc)}); check the name after anthropic/"
            )
        if status == 400 and any(w in self._server_message(exc) for w in ("temperature", "top_p")):
            return BackendError(
                f"{self.base_url} refused the sampling parameters for model {self.model!r} (HTTP 400: "
                f"{self._server_message(exc)}); this model takes no temperature/top_p, which the "
                "probe or --temperature/--top-p set"
            )
        return super()._status_error(exc, endpoint)


class AnthropicBackend(ModelBackend):
    kind = "anthropic"
    supports_loglikelihood = False
    base_url: str  # always set by __init__

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        model = (model or "").strip()
        if not model:
            raise ConfigError(
                "the anthropic backend needs a model name: anthropic/<model>, e.g. anthropic/claude-haiku-4-5"
            )
        try:
            import anthropic
        except ImportError:
            raise ConfigError(
                "the anthropic backend needs the 'anthropic' package, which is not installed; "
                "install it with: pip install 'biaslab[anthropic]'"
            ) from None
        self._sdk = anthropic
        self.batch_settings, options = split_batch_options(options)
        opts = _parse_options(options)
        self.model = model
        if base_url and not base_url.strip().startswith(("http://", "https://")):
            raise ConfigError(f"--base-url must start with http:// or https://, got {base_url.strip()!r}")
        self.base_url = normalize_base_url(base_url)
        key = os.environ.get(API_KEY_ENV, "").strip() or None
        if key is None:
            if not base_url:
                raise ConfigError(
                    f"set {API_KEY_ENV} to use Anthropic's API (or pass --base-url for another server speaking it)"
                )
            key = PLACEHOLDER_KEY
        self._api_key = Secret(key)
        self.max_concurrency: int = opts["max_concurrency"]
        self.timeout: float = opts["timeout"]
        self._retrier = AnthropicRetrier(
            anthropic,
            self._api_key,
            model=model,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=opts["max_retries"],
            retry_base_delay=opts["retry_base_delay"],
            retry_max_delay=opts["retry_max_delay"],
            max_retry_after=opts["max_retry_after"],
        )

    def identity(self) -> dict[str, Any]:
        return anthropic_identity(self.model, self.base_url)

    def retry_counts(self) -> dict[str, int]:
        return dict(self._retrier.retries)

    def __repr__(self) -> str:
        return f"AnthropicBackend(model={self.model!r}, base_url={self.base_url!r})"

    # -- calls (public: what the batch provider uses, biaslab.models.batch.provider.BatchHost) --
    @property
    def retrier(self) -> AnthropicRetrier:
        """The retry policy and one-line errors of every call to this server."""
        return self._retrier

    def run_sync(self, make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run a coroutine to completion from synchronous code (:func:`biaslab.models.async_calls.run_sync`)."""
        return run_sync(make_coro, name="biaslab-anthropic")

    def make_client(self) -> Any:
        """A new ``AsyncAnthropic`` client for this server (the SDK's own retries off: ours apply)."""
        return self._sdk.AsyncAnthropic(
            api_key=self._api_key.reveal(), base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    async def generate_online(self, requests: list[GenerateRequest], on_result: OnResult | None) -> list[Any]:
        """Answer ``requests`` with ordinary Messages API calls, each reported through ``on_result``."""
        return await run_all(
            requests, self._generate_one, on_result, max_concurrency=self.max_concurrency, make_client=self.make_client
        )

    def batch_provider(self) -> AnthropicBatchProvider:
        """The Message Batches API for this model and server (``-P batch=true``, ``biaslab batches``)."""
        return AnthropicBatchProvider(self)

    async def _generate_one(self, client: Any, request: GenerateRequest) -> GenerateResult:
        params = message_params(self.model, request)
        # sampling parameters go in the JSON body as they are: SDK versions that no longer type them still send them
        sampling = {k: params.pop(k) for k in ("temperature", "top_p") if k in params}
        message = await self._retrier.call(
            lambda: client.messages.create(**params, extra_body=sampling or None),
            endpoint="messages",
            check=self._check_message,
        )
        return message_result(message)

    def _check_message(self, answer: Any) -> None:
        """A :class:`BadReply` (retried) for an answer that is no message: a proxy's page, no content blocks."""
        where = f"{self.base_url}/v1/messages"
        if isinstance(answer, str):
            raise BadReply(
                f"{where} did not answer like the Messages API (got {self._retrier.clean(answer, 60)!r})",
                f"check --base-url; if it is right, {AGAIN}",
            )
        message_result(answer, where)

    def generate(self, requests: Sequence[GenerateRequest], on_result: OnResult | None = None) -> list[GenerateResult]:
        requests = list(requests)
        for r in requests:  # a raw prompt fails before anything is sent
            message_params(self.model, r)
        if self.batch_settings.enabled and requests:
            return run_batched(self.batch_provider(), self.batch_settings, requests, on_result)
        return self.run_sync(lambda: self.generate_online(requests, on_result))

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None
    ) -> list[LoglikelihoodResult]:
        raise ConfigError(
            f"anthropic/{self.model} cannot score log-likelihoods (Anthropic's Messages API returns "
            "no prompt log-probabilities); likelihood probes need a local model (smollm2, hf/..., "
            "gguf/...) or a vLLM server (openai/... --base-url)"
        )


def from_spec(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None) -> AnthropicBackend:
    """Registry factory for ``anthropic/<model>``."""
    return AnthropicBackend(name, base_url=base_url, **(options or {}))
