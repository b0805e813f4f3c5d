"""Backend for any OpenAI-compatible HTTP server: OpenAI, vLLM, llama.cpp server, Ollama.

Spec: ``openai/<model>``, with ``--base-url`` for anything but api.openai.com. The API key
comes from the environment only (``OPENAI_API_KEY``, or ``BIASLAB_API_KEY``); local servers
need none (a placeholder is sent). The key never appears in :meth:`identity`, ``repr``,
error messages, logs or results.

Requests go through the official ``openai`` SDK (``AsyncOpenAI``, imported only when this
backend is built), concurrently but at most ``max_concurrency`` at a time, on a private
event loop started by the synchronous :meth:`generate` / :meth:`loglikelihood`. Each result
is handed to ``on_result(i, result)`` as soon as it arrives.

Retries are ours (the SDK's are switched off): HTTP 408/409/429/5xx, timeouts, connection
errors and broken 200 answers (cut short, not JSON, a proxy's HTML page, no choices) are retried
up to ``max_retries`` times with exponential backoff and jitter, honouring ``Retry-After`` /
``retry-after-ms`` (capped at ``max_retry_after``), and counted by cause (:meth:`retry_counts`).
Other errors (400, 401, 403, 404...) fail at once with a one-line :class:`BackendError`; the run
stops: no other request is sent, and the ones in flight are awaited and reported (the server
answers them anyway), without further retries.

Options (``load_model("openai/<model>", base_url=..., **options)``):

==================== ======== ================================================================
``max_concurrency``  8        requests in flight at once
``max_retries``      6        retries per request after the first attempt
``timeout``          60.0     seconds per HTTP attempt
``retry_base_delay`` 0.5      first backoff delay (s); doubles each retry, +-50 % jitter
``retry_max_delay``  30.0     cap of the backoff delay (s)
``max_retry_after``  60.0     cap of a server's Retry-After (s)

``likelihood``       token-ids  how log-likelihoods are scored: ``token-ids`` (exact, below) or
                                ``text-echo`` (the server tokenizes the text; approximate)
``tokenizer``        (server)   ``hf/<hub id or dir>``: tokenize here with the model's own tokenizer
                                (a server without /tokenize or /tokenizer_info: :mod:`.tokenizer_source`)
==================== ======== ================================================================

Log-likelihoods (``likelihood=token-ids``, :mod:`.prompt_logprobs`) are exact: the server's own
tokenizer (vLLM's ``/tokenize``) gives the token ids, the same rule as the local engine picks the
ids to run (BOS or the context first, or the chat template; :mod:`biaslab.models.likelihood_rule`),
and the ids are sent as the completions prompt with ``prompt_logprobs``. Servers without
``/tokenize`` or prompt log-probabilities (OpenAI, chat-only APIs, Ollama, the llama.cpp server)
get a one-line ConfigError on first use. The cache keys these results by the rule
(:attr:`OpenAIBackend.loglikelihood_rule`), so entries scored under another rule are not reused.

``likelihood=text-echo`` (:mod:`.echo`) sends ``context + continuation`` as text with
``echo=True, logprobs=1, max_tokens=0`` and finds the continuation's tokens through
``text_offset``; the server tokenizes and adds a BOS token or not, so the first token may go
unscored and scores can differ from the local engine's:

* a token *straddling* the boundary (it starts inside the context and ends inside the
  continuation) is counted as part of the continuation, so ``tokens`` may start with a few
  context characters.
* the first token of the prompt has no log-probability on servers that add no
  beginning-of-sequence token; when it belongs to the continuation it is left out (a warning
  is logged once).
* servers that reject ``max_tokens=0`` (vLLM) are retried once with ``max_tokens=1``.
* ``is_greedy`` comes from ``top_logprobs`` when the server returns them, else None.

With ``-P batch=true`` (:mod:`biaslab.models.batch.options`), :meth:`OpenAIBackend.generate` sends the
requests through OpenAI's Batch API instead (:mod:`.batch`, :mod:`biaslab.models.batch.runner`): same
request bodies, same answers, same cache keys; log-likelihoods stay online.

This module holds the backend class (its event loop, text generation) and the registry
factory; the rest lives beside it: :mod:`.options` (option defaults and checks, the API key),
:mod:`.retry` (:class:`~.retry.Retrier`: retries, error messages) and :mod:`.echo`
(:class:`~.echo.EchoLoglikelihood`: log-likelihoods from echoed prompt logprobs). The backend
holds one of each, built from its options.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from biaslab.errors import BackendError, ConfigError
from biaslab.models.async_calls import run_all, run_sync
from biaslab.models.base import (
    GenerateRequest,
    GenerateResult,
    GenerationParams,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelBackend,
    OnResult,
)
from biaslab.models.batch.options import note_likelihood_online, split_batch_options
from biaslab.models.batch.runner import run_batched
from biaslab.models.openai.batch import OpenAIBatchProvider
from biaslab.models.openai.echo import EchoLoglikelihood
from biaslab.models.openai.options import (  # noqa: F401 (re-exported)
    API_KEY_ENV,
    DEFAULTS,
    OPENAI_BASE_URL,
    PLACEHOLDER_KEY,
    Secret,
    api_key_from_env,
    import_openai,
    parse_options,
)
from biaslab.models.openai.prompt_logprobs import TokenLoglikelihood
from biaslab.models.openai.retry import CONNECT_RETRIES, RETRYABLE_STATUS, Retrier  # noqa: F401 (re-exported)

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

T = TypeVar("T")


class OpenAIBackend(ModelBackend):
    """Chat / completion requests (and echo log-likelihoods) against an OpenAI-compatible server."""

    kind = "openai"
    base_url: str  # always set by __init__

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        model = (model or "").strip()
        if not model:
            raise ConfigError("the openai backend needs a model name: openai/<model>, e.g. openai/gpt-4o-mini")
        self._openai = import_openai()
        self.batch_settings, options = split_batch_options(options)
        opts = parse_options(options)
        self.model = model
        self.base_url = (base_url or "").strip().rstrip("/") or OPENAI_BASE_URL
        if base_url and not re.match(r"^https?://", self.base_url):
            raise ConfigError(f"--base-url must start with http:// or https://, got {self.base_url!r}")
        key = api_key_from_env()
        if key is None:
            if not base_url:
                raise ConfigError(
                    "set OPENAI_API_KEY (or BIASLAB_API_KEY) to use the OpenAI API, "
                    "or pass --base-url for a local OpenAI-compatible server"
                )
            key = PLACEHOLDER_KEY  # local servers (vLLM, llama.cpp, Ollama) need no key
        self._api_key = Secret(key)
        self.max_concurrency: int = opts["max_concurrency"]
        self.timeout: float = opts["timeout"]
        self._retrier = Retrier(
            self._openai,
            self._api_key,
            model=self.model,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=opts["max_retries"],
            retry_base_delay=opts["retry_base_delay"],
            retry_max_delay=opts["retry_max_delay"],
            max_retry_after=opts["max_retry_after"],
        )
        self._echo: EchoLoglikelihood | TokenLoglikelihood = (
            EchoLoglikelihood(self._retrier, self.model)
            if opts["likelihood"] == "text-echo"
            else TokenLoglikelihood(self._retrier, self.model, tokenizer=opts["tokenizer"])
        )
        self.loglikelihood_rule: str | None = getattr(self._echo, "rule", None)  # text-echo: the old keys
        self.supports_loglikelihood = True  # until the server proves otherwise
        self._chat_max_tokens_field = "max_tokens"  # or "max_completion_tokens"

    # -- identity -------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        return {"backend": "openai", "model": self.model, "base_url": self.base_url}

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    def retry_counts(self) -> dict[str, int]:
        return dict(self._retrier.retries)

    # -- public API -----------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest], on_result: OnResult | None = None) -> list[GenerateResult]:
        requests = list(requests)
        if self.batch_settings.enabled and requests:
            return run_batched(self.batch_provider(), self.batch_settings, requests, on_result)
        return self.run_sync(lambda: self.generate_online(requests, on_result))

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None
    ) -> list[LoglikelihoodResult]:
        requests = list(requests)
        if self.batch_settings.enabled and requests:
            note_likelihood_online(self.kind)
        self._echo.check_supported()
        try:
            if isinstance(self._echo, TokenLoglikelihood) and requests:
                self.run_sync(self._prepare)
            return self.run_sync(lambda: self._run_all(requests, self._echo.score, on_result))
        finally:
            self.supports_loglikelihood = self._echo.unsupported_reason is None

    # -- what the batch provider uses (biaslab.models.batch.provider.BatchHost) ------------------
    @property
    def retrier(self) -> Retrier:
        """The retry policy and one-line errors of every call to this server."""
        return self._retrier

    def run_sync(self, make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run a coroutine to completion from synchronous code (:func:`biaslab.models.async_calls.run_sync`:
        ``asyncio.run``, or a private thread when the calling thread already runs an event loop)."""
        return run_sync(make_coro, name="biaslab-openai")

    async def generate_online(self, requests: list[GenerateRequest], on_result: OnResult | None) -> list[Any]:
        """Answer ``requests`` with ordinary (online) calls, each reported through ``on_result``."""
        return await self._run_all(requests, self._generate_one, on_result)

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The JSON body the online call sends for ``request`` (what a Batch API line carries)."""
        p = request.params
        body: dict[str, Any] = {"model": self.model}
        if request.messages is not None:
            body["messages"] = [{"role": role, "content": content} for role, content in request.messages]
        else:
            body["prompt"] = request.prompt
        body.update(sampling_args(p))
        if p.max_tokens is not None:
            body[self._chat_max_tokens_field if request.messages is not None else "max_tokens"] = p.max_tokens
        return body

    def use_max_completion_tokens(self) -> None:
        """Send ``max_completion_tokens`` instead of ``max_tokens`` in chat requests (newer OpenAI models)."""
        self._chat_max_tokens_field = "max_completion_tokens"

    def batch_provider(self) -> OpenAIBatchProvider:
        """OpenAI's Batch API for this model and server (``-P batch=true``, ``biaslab batches``)."""
        return OpenAIBatchProvider(self)

    # -- event loop / concurrency ---------------------------------------------------------
    async def _prepare(self) -> None:
        client = self.make_client()
        try:
            await self._echo.prepare(client)  # type: ignore[union-attr]
        finally:
            await client.close()

    def make_client(self) -> AsyncOpenAI:
        """A new ``AsyncOpenAI`` client for this server (the SDK's own retries off: ours apply)."""
        return self._openai.AsyncOpenAI(
            api_key=self._api_key.reveal(),
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # retries are ours (see Retrier.call)
        )

    async def _run_all(
        self,
        requests: list[Any],
        one: Callable[[AsyncOpenAI, Any], Awaitable[Any]],
        on_result: OnResult | None,
    ) -> list[Any]:
        return await run_all(
            requests, one, on_result, max_concurrency=self.max_concurrency, make_client=self.make_client
        )

    # -- generate -------------------------------------------------------------------------
    async def _generate_one(self, client: AsyncOpenAI, req: GenerateRequest) -> GenerateResult:
        p = req.params
        kw = sampling_args(p)
        if req.messages is not None:
            messages = [{"role": role, "content": content} for role, content in req.messages]
            resp = await self._chat_call(client, messages, kw, p.max_tokens)
            choice = self._retrier.first_choice(resp, "chat/completions")
            msg = choice.message
            text = (getattr(msg, "content", None) or getattr(msg, "refusal", None) or "") if msg else ""
        else:
            if p.max_tokens is not None:
                kw["max_tokens"] = p.max_tokens
            resp = await self._retrier.call(
                lambda: client.completions.create(model=self.model, prompt=req.prompt, **kw),
                endpoint="completions",
                check=lambda answer: self._retrier.first_choice(answer, "completions"),
            )
            choice = self._retrier.first_choice(resp, "completions")
            text = getattr(choice, "text", None) or ""
        usage = getattr(resp, "usage", None)
        return GenerateResult(
            text=text,
            n_prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
            n_new_tokens=getattr(usage, "completion_tokens", None) if usage else None,
            finish_reason=getattr(choice, "finish_reason", None),
        )

    async def _chat_call(
        self, client: AsyncOpenAI, messages: list[dict[str, str]], kw: dict[str, Any], max_tokens: int | None
    ) -> Any:
        async def call(field: str) -> Any:
            extra = {field: max_tokens} if max_tokens is not None else {}
            args: dict[str, Any] = {"model": self.model, "messages": messages, **kw, **extra}
            return await self._retrier.call(
                lambda: client.chat.completions.create(**args),
                endpoint="chat",
                check=lambda answer: self._retrier.first_choice(answer, "chat/completions"),
            )

        field = self._chat_max_tokens_field
        try:
            return await call(field)
        except BackendError as exc:
            # Newer OpenAI models refuse max_tokens and want max_completion_tokens.
            if max_tokens is None or field != "max_tokens" or "max_completion_tokens" not in str(exc):
                raise
            self.use_max_completion_tokens()
            return await call("max_completion_tokens")


# -- helpers -------------------------------------------------------------------------------
def sampling_args(p: GenerationParams) -> dict[str, Any]:
    """The sampling parameters a request sets (temperature, top_p, seed), as the API's arguments."""
    return {k: v for k, v in (("temperature", p.temperature), ("top_p", p.top_p), ("seed", p.seed)) if v is not None}


def from_spec(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None) -> OpenAIBackend:
    """Registry factory for ``openai/<model>``."""
    return OpenAIBackend(name, base_url=base_url, **(options or {}))
