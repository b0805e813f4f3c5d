"""``vllm/<hub id or dir>``: a model run by vLLM in this process (``vllm.LLM``), on GPUs or vLLM's CPU build.

Everything that decides what the model sees is done here, on the model's own tokenizer (transformers, loaded
beside vLLM), by the rules the local engine follows (:mod:`biaslab.models.local.prompting`): the chat template
of generation requests, the stop tokens, and for log-likelihoods the token ids chosen by the shared rule
(:mod:`biaslab.models.likelihood_rule`). vLLM receives token ids only (:mod:`.engine`) and returns new ids or
``prompt_logprobs``, so a text gets the same tokens, the same conditioning and the same token ids as with the
local engine or a vLLM server (:mod:`biaslab.models.openai.prompt_logprobs`).

Generation: each request is sampled with its own seed (the request's, else one derived from it exactly as
the local backend derives it: :mod:`biaslab.models.local.sampling`), temperature and top_p (the checkpoint's
generation_config.json values, else 0.7 and 0.95) and max_tokens (512); vLLM draws a seeded request from its
own generator, so its text is reproducible whatever else runs beside it. Texts differ from the local
engine's: the random streams are vLLM's.

Options (``-P key=value``; :mod:`.options`):

============================ ========= ===============================================================
``tensor_parallel_size``     1         GPUs one replica's layers are split over (within a node)
``pipeline_parallel_size``   1         stages one replica's layers are cut into (may span nodes, over Ray)
``data_parallel_size``       1         replicas, each a Ray actor with its own engine (:mod:`.replicas`)
``gpu_memory_utilization``   (sized)   share of each GPU's memory vLLM may take (weights + KV cache): vLLM's
                                       default when the GPU is that free, else what is free less 1 GiB; on
                                       the CPU build, of the machine's memory (then vLLM sizes the KV cache)
``max_model_len``            (sized)   context length: the model's, less where the KV cache cannot hold 4
                                       sequences of it (CPU build); a smaller one needs less KV-cache memory
``max_num_seqs``             (vLLM's)  sequences one engine runs at once
``enforce_eager``            false     no CUDA graphs / torch.compile: starts faster, runs slower
``dtype``                    auto      ``float32``, ``bfloat16``, ``float16``; auto: float32 on vLLM's CPU
                                       build, bfloat16 on GPUs (float16 before Ampere)
``chat_template``            auto      ``none``: chat messages as plain text, as for a base model
``distributed_executor_backend`` (vLLM's) ``mp``, ``ray`` or ``uni``
============================ ========= ===============================================================

Sizing (:mod:`.sizing`, read where the engine starts, :mod:`.memory`): on vLLM's CPU build, which would reserve
92% of the machine's memory, the engine gets an explicit KV cache (vLLM's ``kv_cache_memory_bytes``): the memory
available now (MemAvailable, or the cgroup's limit) less the weights at the dtype that runs (read from the
safetensors headers) and a margin for activations and vLLM's processes, at most 8 sequences of the model's
context; the environment variable ``VLLM_CPU_KVCACHE_SPACE`` (GiB) sets it instead. The options and that variable
always win over biaslab's sizes; what was chosen is recorded under ``engine`` in results.json's model section
(with the engine's start time), and is not part of the identity. An engine that cannot start is one line
(:mod:`.start`), its cause and the option that fixes it; vLLM's own output goes to a log file the line names.

The identity (which keys the cache) names the model's files (or hub id and revision), the dtype, vLLM's
version and build (``cpu`` / ``gpu``): answers of another vLLM, dtype or build are never reused. The
parallel layout is not part of it. With bfloat16 or float16 weights, :meth:`VLLMBackend.reference` is the
model at float32 (a second engine, started when its answers are first needed; only one engine of this
backend runs in a process at a time, so the reduced one is shut down first).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biaslab.errors import BackendError, ConfigError
from biaslab.models.base import (
    ContextLengthError,
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelBackend,
    OnResult,
    reference_identity,
)
from biaslab.models.lazy import LazyBackend
from biaslab.models.local import prompting
from biaslab.models.local import sampling as local_sampling
from biaslab.models.vllm.engine import GenerateJob, ScoreJob
from biaslab.models.vllm.identity import base_identity, check_source, resolved_dtype, vllm_build, vllm_version
from biaslab.models.vllm.options import engine_args, parse_options
from biaslab.models.vllm.replicas import make_replicas

_ACTIVE: list[VLLMBackend] = []  # the backend whose engines run (one at a time per process)
_ACTIVE_LOCK = threading.Lock()


def _torch_gpu_dtype() -> str:
    """The dtype ``auto`` means on this GPU, asked of torch (when the machine alone could not tell)."""
    import torch

    if torch.version.hip:
        return "bfloat16"
    from biaslab.models.device_info import BF16_MIN_CAPABILITY

    return "bfloat16" if torch.cuda.get_device_capability(0)[0] >= BF16_MIN_CAPABILITY else "float16"


def _load_tokenizer(source: str) -> Any:
    try:
        if Path(source).is_dir():
            from biaslab.models.local.light_tokenizer import transformers_tokenizer

            return transformers_tokenizer(Path(source))
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendError(f"could not load the tokenizer of vllm/{source}: {first}") from None


def _generation_config(source: str) -> Any:
    try:
        from transformers import GenerationConfig

        return GenerationConfig.from_pretrained(source, local_files_only=Path(source).is_dir())
    except (OSError, ValueError):
        return None  # no generation_config.json: biaslab's defaults


def _hub_revision(source: str) -> str | None:
    try:
        from huggingface_hub import try_to_load_from_cache

        path = try_to_load_from_cache(source, "config.json")
    except Exception:
        return None
    return Path(path).parent.name if isinstance(path, str) else None


class VLLMBackend(ModelBackend):
    kind = "vllm"
    supports_loglikelihood = True

    def __init__(self, source: str, **options: Any) -> None:
        from biaslab.models.versions import check_installed

        opts = parse_options(options)
        self.source, self.options = source, dict(options)
        self.version = vllm_version()
        check_installed("vllm", version=self.version)
        check_installed("transformers", "tokenizers", "torch")
        build = vllm_build(self.version)
        self.dtype = resolved_dtype(opts["dtype"], build) or _torch_gpu_dtype()
        self._engine_args = engine_args(opts, self.dtype)
        self._replica_count = opts["data_parallel_size"]
        self._gpus = build == "gpu"
        self.tokenizer = _load_tokenizer(source)
        gc = _generation_config(source)
        self.model_temperature, self.model_top_p = local_sampling.model_defaults(gc)
        self.use_chat_template = opts["chat_template"] == "auto" and prompting.has_chat_template(self.tokenizer)
        self.stop_ids = prompting.stop_ids(self.tokenizer, getattr(gc, "eos_token_id", None), self.use_chat_template)
        self._replicas: Any = None
        self._engine_info: dict[str, Any] | None = None  # the sizes of the engine started last
        self._lock = threading.Lock()
        self._limit = self._pool_limit()
        revision = None if Path(source).is_dir() else _hub_revision(source)
        self._identity = base_identity(source, self.dtype, self.version, build)
        if revision:
            self._identity["revision"] = revision
        if opts["chat_template"] == "none" and prompting.has_chat_template(self.tokenizer):
            self._identity["chat_template"] = "none"

    # -- engines ------------------------------------------------------------------------------
    def _pool(self) -> Any:
        """The running replicas (started again if another backend's engines took their place)."""
        with _ACTIVE_LOCK:
            for other in [b for b in _ACTIVE if b is not self]:
                other.release()
            if self._replicas is None:
                self._replicas = make_replicas(
                    self.source, self._engine_args, self._replica_count, gpus_per_replica=int(self._gpus)
                )
                _ACTIVE.append(self)
                info = getattr(self._replicas, "engine_info", None)
                self._engine_info = info() if info is not None else None
            return self._replicas

    def _pool_limit(self) -> int:
        return self._pool().max_model_len()

    def release(self) -> None:
        """Shut the engines down (they start again at the next request)."""
        replicas, self._replicas = self._replicas, None
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if replicas is not None:
            replicas.close()

    def close(self) -> None:
        with _ACTIVE_LOCK:
            self.release()

    # -- identity -----------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def engine_info(self) -> dict[str, Any] | None:
        return dict(self._engine_info) if self._engine_info else None

    def reference(self) -> ModelBackend | None:
        """With bfloat16 or float16 weights: the model at float32 (its own engine, started when first used)."""
        ident = reference_identity(self._identity)
        if ident is None:
            return None
        options = {**self.options, "dtype": "float32"}
        return LazyBackend(
            f"vllm/{self.source} at float32", ident, lambda: VLLMBackend(self.source, **options), kind=self.kind
        )

    def __repr__(self) -> str:
        return f"VLLMBackend({self.source!r}, dtype={self.dtype}, vllm={self.version})"

    # -- generate -----------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest], on_result: OnResult | None = None) -> list[GenerateResult]:
        results: list[GenerateResult | None] = [None] * len(requests)
        jobs: list[GenerateJob] = []
        where: list[tuple[int, int]] = []  # (request index, prompt length) of each job

        def finish(i: int, result: GenerateResult) -> None:
            results[i] = result
            if on_result is not None:
                on_result(i, result)

        for i, request in enumerate(requests):
            ids = prompting.prompt_ids(self.tokenizer, request, self.use_chat_template)
            try:
                dec = local_sampling.resolve(request, temperature=self.model_temperature, top_p=self.model_top_p)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
            if len(ids) >= self._limit:
                raise ContextLengthError(
                    f"a prompt of {len(ids)} tokens does not fit the model's context of {self._limit} tokens",
                    request=request,
                    n_tokens=len(ids),
                    limit=self._limit,
                )
            if dec.max_tokens == 0:
                finish(i, GenerateResult(text="", n_prompt_tokens=len(ids), n_new_tokens=0, finish_reason="length"))
                continue
            jobs.append(
                GenerateJob(ids, dec.temperature, dec.top_p, dec.max_tokens, dec.seed, tuple(sorted(self.stop_ids)))
            )
            where.append((i, len(ids)))

        def done(j: int, answer: tuple[list[int], str]) -> None:
            i, n_prompt = where[j]
            new_ids, reason = answer
            finish(i, prompting.generated_result(self.tokenizer, list(new_ids), reason, n_prompt, self.stop_ids))

        if jobs:
            self._pool().run(jobs, done)
        return self._complete(results)

    # -- loglikelihood ------------------------------------------------------------------------
    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_result: OnResult | None = None
    ) -> list[LoglikelihoodResult]:
        results: list[LoglikelihoodResult | None] = [None] * len(requests)
        jobs: list[ScoreJob] = []
        where: list[tuple[int, int]] = []  # (request index, where the scored tokens start)
        texts: dict[int, str] = {}

        def text(t: int) -> str:
            s = texts.get(t)
            if s is None:
                s = texts[t] = self.tokenizer.decode([t])
            return s

        for i, request in enumerate(requests):
            ids, n = prompting.score_ids(self.tokenizer, request)
            if len(ids) >= self._limit:  # vLLM also needs room for the one token it generates
                raise ContextLengthError(
                    f"a text of {len(ids)} tokens is longer than the model's context of {self._limit - 1} tokens",
                    request=request,
                    n_tokens=len(ids),
                    limit=self._limit - 1,
                )
            if n >= len(ids):
                results[i] = LoglikelihoodResult([], [], True, token_ids=[])
                if on_result is not None:
                    on_result(i, results[i])
                continue
            jobs.append(ScoreJob(ids))
            where.append((i, n))

        def done(j: int, answer: list[tuple[float, int | None]]) -> None:
            i, n = where[j]
            ids = jobs[j].ids
            scored = answer[n - 1 :]
            ranks = [rank for _, rank in scored]
            res = LoglikelihoodResult(
                [lp for lp, _ in scored],
                [text(t) for t in ids[n:]],
                None if None in ranks else all(r == 1 for r in ranks),
                token_ids=list(ids[n:]),
            )
            results[i] = res
            if on_result is not None:
                on_result(i, res)

        if jobs:
            self._pool().run(jobs, done)
        return self._complete(results)

    @staticmethod
    def _complete(results: list[Any]) -> list[Any]:
        missing = sum(r is None for r in results)
        if missing:  # pragma: no cover - engine bug guard
            raise BackendError(f"vLLM returned no result for {missing} request(s)")
        return results


def from_spec(name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None) -> VLLMBackend:
    """Registry factory for ``vllm/<hub id or dir>``."""
    return VLLMBackend(check_source(name, base_url), **(options or {}))
