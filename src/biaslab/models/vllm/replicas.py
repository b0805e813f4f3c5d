"""Where the vLLM engines run: one in this process, or ``data_parallel_size`` replicas over Ray.

``vllm.LLM`` does not run data parallel inside one process, so each replica is a Ray actor holding its own
:class:`~.engine.VLLMEngine` (the way lm-evaluation-harness spreads vLLM, but with actors that live as long as
the backend instead of a task per call). A replica with one GPU asks Ray for it (``num_gpus=1``); one spread
over several GPUs (tensor / pipeline parallel) asks for none itself and lets vLLM's Ray executor place its
workers (``distributed_executor_backend=ray``), which also spans nodes: start a Ray cluster (``ray start
--head`` on one node, ``ray start --address=<head>:6379`` on the others) and run biaslab on one of them.

Jobs go to the replicas in chunks (about four per replica, at most 256 jobs each); each replica holds two
chunks at a time so that it never waits for the next one, and every answer of a finished chunk is handed to
``on_done`` at once (the cache keeps it), so a killed run loses at most the chunks in flight.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Any

from biaslab.errors import BackendError, ConfigError
from biaslab.models.vllm.engine import GenerateJob, OnDone, ScoreJob, VLLMEngine

MAX_CHUNK = 256
CHUNKS_PER_REPLICA = 4
IN_FLIGHT_PER_REPLICA = 2


class LocalReplica:
    """The engine in this process: answers stream out one by one."""

    def __init__(self, model: str, engine_args: dict[str, Any]) -> None:
        self.engine = VLLMEngine(model, engine_args)
        self.size = 1

    def max_model_len(self) -> int:
        return self.engine.max_model_len()

    def engine_info(self) -> dict[str, Any]:
        return self.engine.engine_info()

    def run(self, jobs: Sequence[GenerateJob | ScoreJob], on_done: OnDone) -> None:
        self.engine.run(jobs, on_done)

    def close(self) -> None:
        self.engine.close()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "data_parallel_size > 1 runs vLLM replicas over Ray, which is not installed; "
            "install it with: pip install 'ray[default]'"
        ) from None
    return ray


def chunks(n: int, replicas: int) -> list[list[int]]:
    """Job indices ``0..n-1`` in consecutive chunks: about :data:`CHUNKS_PER_REPLICA` per replica."""
    size = max(1, min(MAX_CHUNK, math.ceil(n / max(1, replicas * CHUNKS_PER_REPLICA))))
    return [list(range(start, min(n, start + size))) for start in range(0, n, size)]


class RayReplicas:
    """``size`` replicas as Ray actors (``ray``: the module, given by tests)."""

    def __init__(
        self, model: str, engine_args: dict[str, Any], size: int, *, gpus_per_replica: int, ray: Any = None
    ) -> None:
        self.ray = ray if ray is not None else _import_ray()
        if not self.ray.is_initialized():
            self.ray.init(ignore_reinit_error=True, log_to_driver=False)  # RAY_ADDRESS names a cluster
        args = dict(engine_args)
        world = args.get("tensor_parallel_size", 1) * args.get("pipeline_parallel_size", 1)
        num_gpus = 0
        if gpus_per_replica and world == 1:
            num_gpus = 1  # the actor holds its GPU
        elif gpus_per_replica:
            args.setdefault("distributed_executor_backend", "ray")  # vLLM places its workers itself
        actor = self.ray.remote(num_cpus=1, num_gpus=num_gpus)(VLLMEngine)
        self.actors = [actor.remote(model, args) for _ in range(size)]
        self.size = size

    def max_model_len(self) -> int:
        return int(self._get(self.actors[0].max_model_len.remote()))

    def engine_info(self) -> dict[str, Any]:
        """The first replica's sizes (each replica sizes its own engine)."""
        return dict(self._get(self.actors[0].engine_info.remote()), replicas=self.size)

    def _get(self, ref: Any) -> Any:
        try:
            return self.ray.get(ref)
        except Exception as exc:  # RayTaskError / RayActorError: one line, the cause's last line
            lines = [line for line in str(exc).strip().splitlines() if line.strip()]
            raise BackendError(f"a vLLM replica failed: {lines[-1] if lines else type(exc).__name__}") from None

    def run(self, jobs: Sequence[GenerateJob | ScoreJob], on_done: OnDone) -> None:
        queue = deque(chunks(len(jobs), self.size))
        in_flight: dict[Any, tuple[Any, list[int]]] = {}

        def submit(actor: Any) -> None:
            if queue:
                idx = queue.popleft()
                in_flight[actor.run_all.remote([jobs[i] for i in idx])] = (actor, idx)

        for _ in range(IN_FLIGHT_PER_REPLICA):
            for actor in self.actors:
                submit(actor)
        try:
            while in_flight:
                done, _ = self.ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    actor, idx = in_flight.pop(ref)
                    answers = self._get(ref)
                    for i, answer in zip(idx, answers):
                        on_done(i, answer)
                    submit(actor)
        finally:
            for ref in in_flight:  # after an error or Ctrl-C: stop what the replicas still run
                try:
                    self.ray.cancel(ref)
                except Exception:  # pragma: no cover - a finished or already failed task
                    pass

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


def make_replicas(model: str, engine_args: dict[str, Any], size: int, *, gpus_per_replica: int) -> Any:
    if size == 1:
        return LocalReplica(model, engine_args)
    return RayReplicas(model, engine_args, size, gpus_per_replica=gpus_per_replica)
