"""How many CPU threads torch computes with: every core this process may use, unless its threads would spin.

torch's default is one OpenMP thread per core of the machine. The threads of one matrix product meet at a barrier
after every operation; on a machine other jobs share, a thread whose partner waits for a core another process
holds spins there under OpenMP's default wait policy (``biaslab`` burned 4-7x the CPU for the same answers), and
sleeps under ``OMP_WAIT_POLICY=PASSIVE``, which :mod:`biaslab` sets before torch starts. Measured on 2 cores with
``bench/bench_threads.py engine`` (2 sequences decoded by SmolLM2; tokens/s, 1 thread against 2): quiet 7.0
against 9.6, with 2 busy background processes 4.5 against 7.5, with 4 busy 2.3 against 3.2, at the same CPU time:
sleeping threads cost nothing, and more threads hold more of a shared machine's time. Spinning threads, though,
took 153 s for what 1 thread did in 30 s with 2 busy processes. So the choice, when a local model loads:

* ``-P threads=N``, ``--threads N`` or ``BIASLAB_THREADS=N``: N, as given;
* ``OMP_NUM_THREADS`` set by the caller (as the test suite does): torch's own reading of it, kept;
* otherwise (:func:`auto_threads`): the usable cores (the CPU affinity mask, within a cgroup CPU quota); where the
  wait policy is not in effect (torch was imported before biaslab, or ``OMP_WAIT_POLICY`` says otherwise), less the
  cores other processes' runnable threads would take from them, at least one. Their demand is counted from the
  kernel's count of runnable threads (``procs_running`` in ``/proc/stat``, sampled over a quarter of a second,
  this process's own threads left out) and the CPU time the other processes used over the same interval; it is
  sampled again before a batch of requests once :data:`RECHECK_SECONDS` have passed, so a long run follows the
  machine.

The choice is recorded in each run's results.json (``run.threads``) with what it was made from.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ENV = "BIASLAB_THREADS"
SAMPLE_SECONDS = 0.25
_SAMPLES = 6
RECHECK_SECONDS = 30.0


@dataclass(frozen=True)
class ThreadChoice:
    """torch's thread count and why: ``source`` is ``option`` (``-P threads``/``--threads``), ``BIASLAB_THREADS``,
    ``OMP_NUM_THREADS`` or ``auto``; ``cores`` the cores this process may use; ``others`` (auto only) the cores'
    worth of runnable threads other processes had while it was chosen."""

    torch_threads: int
    source: str
    cores: int
    others: float | None = None
    wait_policy: str = ""

    def record(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v != ""}


_applied: ThreadChoice | None = None
_chosen_at = 0.0


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask), capped by a cgroup CPU quota (containers)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = cgroup_quota()
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota - 1e-9)))
    return max(1, cores)


def cgroup_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """CPUs' worth of time the cgroup may use (``cpu.max`` of cgroup v2, ``cfs_quota_us`` of v1), None if unlimited."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None


def _busy_ticks(cpus: set[int]) -> tuple[int, int]:
    """(busy, total) clock ticks of ``cpus`` since boot, from /proc/stat."""
    busy = total = 0
    for line in Path("/proc/stat").read_text().splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or int(name[3:]) not in cpus:
            continue
        values = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
        total += sum(values)
        busy += sum(values) - values[3] - values[4]
    return busy, total


def _running() -> int:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("procs_running"):
            return int(line.split()[1])
    return 0


def _own_ticks() -> int:
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (all threads)


def others_demand(seconds: float = SAMPLE_SECONDS) -> float | None:
    """Cores' worth of runnable threads other processes had over ``seconds``: the larger of the mean count of
    runnable threads (less this one, which is running while it reads) and the CPU time the others used on this
    process's CPUs over the interval; None where /proc cannot be read (not Linux)."""
    try:
        cpus = os.sched_getaffinity(0)
        busy0, total0 = _busy_ticks(cpus)
        own0 = _own_ticks()
        runnable = []
        for _ in range(_SAMPLES):
            time.sleep(seconds / _SAMPLES)
            runnable.append(max(0, _running() - 1))
        busy1, total1 = _busy_ticks(cpus)
        own1 = _own_ticks()
    except (AttributeError, OSError, ValueError, IndexError):
        return None
    ticks = total1 - total0
    used = max(0.0, (busy1 - busy0) - (own1 - own0)) / ticks * len(cpus) if ticks > 0 else 0.0
    return round(max(sum(runnable) / len(runnable), used), 2)


def auto_threads(cores: int, others: float | None, *, sleeping: bool = True) -> int:
    """The rule: every usable core where waiting threads sleep (``sleeping``); where they spin, those not taken by
    other processes' runnable threads, at least one (a fraction of a core left over counts when it is at least
    half)."""
    if sleeping or others is None:
        return cores
    return max(1, min(cores, math.floor(cores - others + 0.5)))


def waiting_sleeps() -> bool:
    """Whether torch's OpenMP threads sleep while they wait: ``OMP_WAIT_POLICY=PASSIVE`` was set before torch
    was imported."""
    import biaslab

    taken = biaslab.WAIT_POLICY_BEFORE if biaslab.TORCH_BEFORE_BIASLAB else os.environ.get("OMP_WAIT_POLICY", "")
    return taken.upper() == "PASSIVE"


def _env_threads() -> int | None:
    from biaslab.errors import ConfigError

    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    try:
        n = int(raw)
    except ValueError:
        raise ConfigError(f"{ENV}={raw!r} is not a whole number of threads; set it to e.g. 2, or unset it") from None
    if n < 1:
        raise ConfigError(f"{ENV}={raw} must be at least 1")
    return n


def choose(option: int | None = None, *, previous: ThreadChoice | None = None) -> ThreadChoice:
    """The thread count for a local model (see the module's text), without applying it. ``previous``: an automatic
    choice made less than :data:`RECHECK_SECONDS` ago is kept (the load is sampled again after that)."""
    cores = usable_cores()
    policy = os.environ.get("OMP_WAIT_POLICY", "")
    if option:
        return ThreadChoice(option, "option", cores, wait_policy=policy)
    pinned = _env_threads()
    if pinned:
        return ThreadChoice(pinned, ENV, cores, wait_policy=policy)
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    if omp.isdigit() and int(omp) > 0:
        return ThreadChoice(int(omp), "OMP_NUM_THREADS", cores, wait_policy=policy)
    if waiting_sleeps():
        return ThreadChoice(cores, "auto", cores, wait_policy=policy)
    if previous is not None and previous.source == "auto" and time.monotonic() - _chosen_at < RECHECK_SECONDS:
        return previous
    others = others_demand()
    import biaslab

    if biaslab.TORCH_BEFORE_BIASLAB:
        policy = f"{biaslab.WAIT_POLICY_BEFORE or 'default'} (torch imported before biaslab)"
    return ThreadChoice(auto_threads(cores, others, sleeping=False), "auto", cores, others, policy or "default")


def apply(option: int | None = None) -> ThreadChoice:
    """Choose the thread count and set torch to it: when a local model loads, and again before each batch of
    requests it answers (a pinned count costs nothing to check; the load is sampled again at most every
    :data:`RECHECK_SECONDS`), so a long run follows the machine and a model kept loaded follows ``--threads``."""
    global _applied, _chosen_at
    import torch

    choice = choose(option, previous=_applied)
    if choice is not _applied:
        _chosen_at = time.monotonic()
    if torch.get_num_threads() != choice.torch_threads:
        torch.set_num_threads(choice.torch_threads)
    _applied = choice
    return choice


def applied() -> ThreadChoice | None:
    """The choice :func:`apply` made last in this process, None if no local model set torch's threads."""
    return _applied
