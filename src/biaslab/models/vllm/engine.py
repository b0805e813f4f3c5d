"""One vLLM engine (``vllm.LLM``) running token-id jobs: generations and prompt log-probabilities.

The backend (:mod:`.backend`) tokenizes; an engine receives plain data and returns plain data, so the same
class runs in this process or as a Ray actor (a data-parallel replica, :mod:`.replicas`):

* a :class:`GenerateJob` is a prompt's token ids and its decoding (temperature, top_p, max_tokens, the
  request's own seed: vLLM draws each seeded request from its own generator, so a text does not depend on
  the other requests in flight), with the stop ids; it comes back as ``(new token ids, finish reason)``;
* a :class:`ScoreJob` is the token ids of a text; it comes back as ``(logprob, rank)`` of every token after
  the first (``prompt_logprobs``: vLLM's log-softmax of the raw logits, rank 1 is the argmax).

Jobs are added to vLLM's engine together and stepped until all are done; each finished job is handed to
``on_done`` at once (:meth:`VLLMEngine.run`), so the caller can cache it before the next one finishes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

OnDone = Callable[[int, Any], None]


@dataclass(frozen=True)
class GenerateJob:
    ids: list[int]
    temperature: float
    top_p: float
    max_tokens: int
    seed: int
    stop_ids: tuple[int, ...]


@dataclass(frozen=True)
class ScoreJob:
    ids: list[int]


class VLLMEngine:
    """``vllm.LLM(model, **engine_args)``, loaded on construction: sized for the memory free now where the user set
    no size (:mod:`.memory`), its output in a log file, a failure to start one line (:mod:`.start`)."""

    def __init__(self, model: str, engine_args: dict[str, Any]) -> None:
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")  # its INFO lines would bury the progress bar
        from biaslab.models.vllm.memory import size_engine
        from biaslab.models.vllm.start import engine_log, start_error

        started = time.monotonic()
        with engine_log() as log:  # from the import on: vLLM prints as it is imported
            from vllm import LLM

            cpu = _is_cpu_build()
            args, self.record = size_engine(model, engine_args, cpu=cpu, default_share=_default_share())
            try:
                self.llm = LLM(model=model, **args)
            except Exception as exc:
                raise start_error(exc, log, model=model, cpu=cpu) from None
        self.record["max_model_len"] = self.max_model_len()  # what vLLM took (the model's, when not given)
        self.record["start_seconds"] = round(time.monotonic() - started, 1)
        self._calls = 0

    def max_model_len(self) -> int:
        return int(self.llm.llm_engine.model_config.max_model_len)

    def engine_info(self) -> dict[str, Any]:
        """The sizes this engine was started with (see :meth:`biaslab.models.base.ModelBackend.engine_info`)."""
        return dict(self.record)

    def _params(self, job: GenerateJob | ScoreJob) -> Any:
        from vllm import SamplingParams

        if isinstance(job, ScoreJob):
            params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False)
        else:
            params = SamplingParams(
                temperature=job.temperature,
                top_p=job.top_p,
                max_tokens=job.max_tokens,
                seed=job.seed,
                stop_token_ids=list(job.stop_ids),
                detokenize=False,
            )
        try:  # only the final output of each request (what LLM.generate asks for)
            from vllm.sampling_params import RequestOutputKind

            params.output_kind = RequestOutputKind.FINAL_ONLY
        except ImportError:  # pragma: no cover - older vLLM: outputs are filtered by .finished below
            pass
        return params

    def run(self, jobs: Sequence[GenerateJob | ScoreJob], on_done: OnDone) -> None:
        """Run ``jobs`` together; ``on_done(i, answer)`` as each finishes (see the module)."""
        from vllm.inputs import TokensPrompt

        engine = self.llm.llm_engine
        self._calls += 1
        ids = {f"biaslab-{self._calls}-{i}": i for i in range(len(jobs))}
        left: set[str] = set()
        try:
            for request_id, i in ids.items():
                engine.add_request(request_id, TokensPrompt(prompt_token_ids=list(jobs[i].ids)), self._params(jobs[i]))
                left.add(request_id)
            while left and engine.has_unfinished_requests():
                for out in engine.step():
                    if not out.finished or out.request_id not in left:
                        continue
                    left.discard(out.request_id)
                    i = ids[out.request_id]
                    on_done(i, _answer(jobs[i], out))
            if left:  # pragma: no cover - vLLM dropped requests without an error
                raise RuntimeError(f"vLLM finished without answering {len(left)} request(s)")
        except BaseException:
            if left:  # Ctrl-C or an error: the engine must not go on with them
                try:
                    engine.abort_request(sorted(left))
                except Exception:  # pragma: no cover - the engine is going down anyway
                    pass
            raise

    def run_all(self, jobs: Sequence[GenerateJob | ScoreJob]) -> list[Any]:
        """:meth:`run`, answers returned in job order (for a Ray actor, which cannot call back)."""
        answers: list[Any] = [None] * len(jobs)

        def keep(i: int, answer: Any) -> None:
            answers[i] = answer

        self.run(jobs, keep)
        return answers

    def close(self) -> None:
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        shutdown = getattr(core, "shutdown", None)
        if shutdown is not None:
            shutdown()
        del self.llm


def _is_cpu_build() -> bool:
    try:
        from vllm.platforms import current_platform

        return bool(current_platform.is_cpu())
    except Exception:  # pragma: no cover - an older vLLM: told by its distribution
        from biaslab.models.vllm.identity import vllm_build, vllm_version

        return vllm_build(vllm_version()) == "cpu"


def _default_share() -> float:
    """vLLM's default ``gpu_memory_utilization``."""
    try:
        from vllm.engine.arg_utils import EngineArgs

        return float(EngineArgs.gpu_memory_utilization)
    except Exception:  # pragma: no cover - another vLLM
        return 0.9


def _answer(job: GenerateJob | ScoreJob, out: Any) -> Any:
    if isinstance(job, ScoreJob):
        plp = out.prompt_logprobs or []
        values: list[tuple[float, int | None]] = []
        for pos in range(1, len(job.ids)):
            entry = plp[pos] if pos < len(plp) else None
            info = entry.get(job.ids[pos]) if entry else None
            if info is None:
                raise RuntimeError(f"vLLM returned no log-probability for prompt token {pos}")
            values.append((float(info.logprob), None if info.rank is None else int(info.rank)))
        return values
    completion = out.outputs[0]
    return list(completion.token_ids), str(completion.finish_reason or "length")
