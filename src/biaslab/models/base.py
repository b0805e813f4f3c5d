"""The model interface every backend implements.

A backend answers *batches* of requests (the lm-evaluation-harness shape):

* :meth:`ModelBackend.generate` -- chat messages or a raw prompt in, text out.
* :meth:`ModelBackend.loglikelihood` -- per-token log-probabilities of a given text,
  optionally conditioned on a context.

Backends report each finished request through ``on_result(index, result)`` as soon as it is
done, so the cache wrapper can persist it immediately: a run killed at any moment loses at
most the requests that were in flight.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from biaslab.errors import BackendError


@dataclass(frozen=True)
class GenerationParams:
    """Decoding parameters. ``None`` means "the backend's / model's own default"."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def as_key(self) -> dict[str, Any]:
        """The parameters that change output, for cache keys (None values dropped)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class GenerateRequest:
    """One generation request: either chat ``messages`` or a raw ``prompt``.

    ``messages`` is a tuple of ``(role, content)`` pairs. ``repetition`` distinguishes
    repeated samples of the same prompt (it is part of the cache key).
    """

    messages: tuple[tuple[str, str], ...] | None = None
    prompt: str | None = None
    params: GenerationParams = field(default_factory=GenerationParams)
    repetition: int = 0

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("GenerateRequest needs exactly one of messages= or prompt=")

    @classmethod
    def chat(cls, user: str, *, system: str | None = None, **kw: Any) -> GenerateRequest:
        msgs = ((("system", system),) if system else ()) + (("user", user),)
        return cls(messages=msgs, **kw)

    def as_key(self) -> dict[str, Any]:
        return {
            "messages": [list(m) for m in self.messages] if self.messages else None,
            "prompt": self.prompt,
            "params": self.params.as_key(),
            "repetition": self.repetition,
        }

    def display(self) -> str:
        """Human-readable prompt (for attempts.jsonl and reports)."""
        if self.prompt is not None:
            return self.prompt
        return "\n".join(content if role == "user" else f"[{role}] {content}" for role, content in self.messages or ())


@dataclass
class GenerateResult:
    text: str
    n_prompt_tokens: int | None = None
    n_new_tokens: int | None = None
    finish_reason: str | None = None  # "stop", "length", ...

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GenerateResult:
        return cls(**d)


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score ``continuation`` given ``context`` (which may be empty).

    ``chat``: ``"user"`` / ``"assistant"`` scores the continuation as that turn of the model's chat
    template (no context then), None the plain text (:mod:`biaslab.models.likelihood_rule`); ``system``: a
    system message before that turn (chat requests only).
    """

    continuation: str
    context: str = ""
    chat: str | None = None
    system: str | None = None

    def as_key(self) -> dict[str, Any]:
        key = {"context": self.context, "continuation": self.continuation}
        if self.chat is not None:  # plain-text keys stay as they were
            key["chat"] = self.chat
        if self.system is not None:  # and so do chat keys without a system message
            key["system"] = self.system
        return key


@dataclass
class LoglikelihoodResult:
    """Log-probabilities (natural log) of each token of the continuation.

    ``token_ids`` (local backends) and ``offsets`` (character offset of each token in
    ``context + continuation``, OpenAI-compatible servers) let callers map tokens back to the
    text, e.g. to score only the tokens two sentences share. Either may be None (older cache
    entries, servers without offsets). Masked LMs return pseudo-log-likelihoods: each token's
    log-probability with that token masked alone.
    """

    token_logprobs: list[float]
    tokens: list[str] = field(default_factory=list)
    is_greedy: bool | None = None
    token_ids: list[int] | None = None
    offsets: list[int] | None = None

    @property
    def total(self) -> float:
        return float(sum(self.token_logprobs))

    def to_json(self) -> dict[str, Any]:  # asdict's deep copy, without its cost per list item
        return {
            "token_logprobs": list(self.token_logprobs),
            "tokens": list(self.tokens),
            "is_greedy": self.is_greedy,
            "token_ids": None if self.token_ids is None else list(self.token_ids),
            "offsets": None if self.offsets is None else list(self.offsets),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> LoglikelihoodResult:
        return cls(**d)


OnResult = Callable[[int, Any], None]


class ContextLengthError(BackendError):
    """A request is longer than the model's context; ``request`` says which one."""

    def __init__(self, message: str, request: Any = None, n_tokens: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.request, self.n_tokens, self.limit = request, n_tokens, limit


class ModelBackend(abc.ABC):
    """Base class of all backends.

    Subclasses set :attr:`kind` and implement :meth:`identity` and the capabilities they
    have. ``generate`` / ``loglikelihood`` must call ``on_result(i, result)`` for every
    request ``i`` as soon as it is finished (any order) and return all results in request
    order.
    """

    kind: str = "base"
    supports_loglikelihood: bool = True
    base_url: str | None = None
    loglikelihood_rule: str | None = None  # a named scoring rule; keys the cache's log-likelihood entries

    @abc.abstractmethod
    def identity(self) -> dict[str, Any]:
        """What identifies the model's outputs (name, file size/hash, revision...).

        Used in cache keys and recorded in results.json. Never contains secrets.
        """

    def generate(self, requests: Sequence[GenerateRequest], on_result: OnResult | None = None) -> list[GenerateResult]:
        raise BackendError(f"the {self.kind} backend cannot generate text")

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None
    ) -> list[LoglikelihoodResult]:
        raise BackendError(
            f"the {self.kind} backend cannot score log-likelihoods; use a local model "
            "(hf/..., gguf/..., smollm2) or a completions server that supports echo+logprobs"
        )

    def retry_counts(self) -> dict[str, int] | None:
        """The retries made so far, by cause (``HTTP 429``, ``timeout``, ``bad reply``...), for backends that call a
        server and retry its faults; None for the others."""
        return None

    def loglikelihood_rest(
        self, requests: Sequence[LoglikelihoodRequest], answered: Collection[int], on_result: OnResult
    ) -> list[LoglikelihoodResult | None]:
        """Score the requests whose index is not in ``answered`` (the response cache holds their answers), calling
        ``on_result(i, result)`` as each is done (``i`` indexes ``requests``); the results by index, None where not
        scored. Here the rest are scored on their own. A backend whose scores' last bits depend on which requests
        share a batch (a local model's packed or padded batches) scores the batches a call on all ``requests``
        forms instead, less those whose requests are all answered, so that a call resumed after a kill gives the
        bits of an uninterrupted one; it may report answered requests that share a batch with the rest."""
        rest = [i for i in range(len(requests)) if i not in answered]
        got = self.loglikelihood([requests[i] for i in rest], lambda j, result: on_result(rest[j], result))
        results: list[LoglikelihoodResult | None] = [None] * len(requests)
        for i, result in zip(rest, got, strict=False):
            results[i] = result
        return results

    def engine_info(self) -> dict[str, Any] | None:
        """What the backend's engine chose for itself when it started (a vLLM engine's memory and context sizes,
        how long it took to start), recorded in results.json beside the identity (its ``engine`` key, one of
        :data:`RUN_ONLY_KEYS`) but not part of it: the answers do not depend on it. None when nothing started."""
        return None

    def reference(self) -> ModelBackend | None:
        """The same model at its reference precision when this backend computes in a reduced one (a local
        model's ``precision=bf16``, bfloat16 or float16 weights: ``dtype=bfloat16``, the default on GPUs),
        else None. Its identity is :func:`reference_identity` of this one, so its answers are cached apart;
        probes that decide close pairs re-score those with it (:mod:`biaslab.probing.recheck`)."""
        return None

    def close(self) -> None:  # noqa: B027 - an optional hook, a no-op by default  # pragma: no cover
        pass

    def __enter__(self) -> ModelBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


REDUCED_DTYPES = ("bfloat16", "float16")  # weights below the reference precision (float32)
RUN_ONLY_KEYS = ("engine",)  # keys of results.json's model section that are not the identity (engine_info)


def model_identity(section: dict[str, Any]) -> dict[str, Any]:
    """The identity in results.json's model section (the section less :data:`RUN_ONLY_KEYS`)."""
    return {k: v for k, v in section.items() if k not in RUN_ONLY_KEYS}


def reference_identity(identity: dict[str, Any]) -> dict[str, Any] | None:
    """The identity of the same model at the reference precision (float32 weights and products): without
    ``precision`` and with ``dtype`` float32; None when ``identity`` is at the reference precision already."""
    ref = {k: v for k, v in identity.items() if k != "precision"}
    if ref.get("dtype") in REDUCED_DTYPES:
        ref["dtype"] = "float32"
    return None if ref == identity else ref


def stable_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
