"""Data-parallel replicas over Ray: chunks, answers handed on as chunks finish, GPUs asked for, failures.

Ray is replaced by a small stand-in with its API (remote actors, wait, get, cancel, kill) whose actors run an
engine stand-in in threads, so the dispatch logic of :class:`RayReplicas` runs as it does with Ray.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

import pytest

from biaslab.errors import BackendError
from biaslab.models.vllm import replicas
from biaslab.models.vllm.engine import ScoreJob
from biaslab.models.vllm.replicas import RayReplicas, chunks


class FakeEngine:
    instances: list[FakeEngine] = []

    def __init__(self, model, args):
        self.model, self.args, self.calls = model, args, []
        FakeEngine.instances.append(self)

    def max_model_len(self):
        return 2048

    def engine_info(self):
        return {"kv_cache_gib": 1.0}

    def run_all(self, jobs):
        self.calls.append(len(jobs))
        if any(job.ids[0] == 666 for job in jobs):
            raise RuntimeError("CUDA out of memory\nTried to allocate 2.00 GiB")
        return [[(-float(job.ids[0]), 1)] for job in jobs]


class FakeRay:
    """Ray's API as RayReplicas uses it; each actor runs its calls one at a time, in order, like a Ray actor."""

    def __init__(self):
        self.initialized, self.resources, self.cancelled, self.killed = False, [], [], []

    def is_initialized(self):
        return self.initialized

    def init(self, **kw):
        self.initialized = True

    def remote(self, **resources):
        ray = self

        def wrap(cls):
            ray.resources.append(resources)

            class Handle:
                def __init__(self, *args):
                    self.obj, self.pool = cls(*args), ThreadPoolExecutor(1)

                def __getattr__(self, name):
                    method = getattr(self.obj, name)
                    return type("M", (), {"remote": lambda _s, *a: self.pool.submit(method, *a)})()

            return type("Actor", (), {"remote": staticmethod(lambda *args: Handle(*args))})

        return wrap

    def wait(self, refs, num_returns=1):
        done, _ = wait(refs, return_when="FIRST_COMPLETED")
        return list(done)[:num_returns], [r for r in refs if r not in done]

    def get(self, ref: Future):
        return ref.result()

    def cancel(self, ref):
        self.cancelled.append(ref)

    def kill(self, actor):
        self.killed.append(actor)


@pytest.fixture
def fake_ray(monkeypatch):
    FakeEngine.instances = []
    monkeypatch.setattr(replicas, "VLLMEngine", FakeEngine)
    return FakeRay()


def test_chunks_spread_the_work():
    assert chunks(10, 2) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]  # about four per replica
    assert [len(c) for c in chunks(3000, 2)] == [256] * 11 + [184]  # at most 256 jobs each
    assert chunks(0, 2) == [] and chunks(1, 8) == [[0]]


def test_replicas_answer_every_job_once_as_chunks_finish(fake_ray):
    pool = RayReplicas("m", {"dtype": "bfloat16", "tensor_parallel_size": 1}, 3, gpus_per_replica=1, ray=fake_ray)
    assert fake_ray.initialized and fake_ray.resources == [{"num_cpus": 1, "num_gpus": 1}]  # one GPU per replica
    assert len(FakeEngine.instances) == 3 and pool.max_model_len() == 2048
    assert pool.engine_info() == {"kv_cache_gib": 1.0, "replicas": 3}  # the first replica's sizes
    got: dict[int, object] = {}
    lock = threading.Lock()

    def on_done(i, answer):
        with lock:
            assert i not in got
            got[i] = answer

    jobs = [ScoreJob([i, 1]) for i in range(100)]
    pool.run(jobs, on_done)
    assert got == {i: [(-float(i), 1)] for i in range(100)}
    calls = [c for e in FakeEngine.instances for c in e.calls]
    assert sum(calls) == 100 and max(calls) == 9 and len(calls) == len(chunks(100, 3))
    assert all(e.calls for e in FakeEngine.instances)  # every replica worked
    pool.close()
    assert len(fake_ray.killed) == 3


def test_a_model_over_several_gpus_lets_vllm_place_its_workers(fake_ray):
    RayReplicas("m", {"tensor_parallel_size": 4, "pipeline_parallel_size": 2}, 2, gpus_per_replica=1, ray=fake_ray)
    assert fake_ray.resources == [{"num_cpus": 1, "num_gpus": 0}]
    assert FakeEngine.instances[0].args["distributed_executor_backend"] == "ray"
    RayReplicas("m", {"tensor_parallel_size": 1}, 2, gpus_per_replica=0, ray=fake_ray)  # vLLM's CPU build
    assert fake_ray.resources[-1] == {"num_cpus": 1, "num_gpus": 0}


def test_a_failing_replica_is_one_line_and_the_rest_is_cancelled(fake_ray):
    pool = RayReplicas("m", {}, 2, gpus_per_replica=1, ray=fake_ray)
    jobs = [ScoreJob([666 if i == 0 else i, 1]) for i in range(40)]
    done: list[int] = []
    with pytest.raises(BackendError) as err:
        pool.run(jobs, lambda i, a: done.append(i))
    assert str(err.value) == "a vLLM replica failed: Tried to allocate 2.00 GiB"
    assert fake_ray.cancelled and 0 not in done
