"""torch's thread count for local models (:mod:`biaslab.models.local.threads`): what pins it, the automatic rule
from usable cores and other processes' demand, the load measured from /proc, and the choice in results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from biaslab.errors import ConfigError
from biaslab.models.local import threads
from tests.cli_runner import run_cli


@pytest.mark.parametrize(
    "cores, others, want",
    [
        (2, 0.0, 2),  # quiet: every core
        (2, 0.4, 2),  # a little background work: less than half a core taken
        (2, 0.6, 1),  # one core's worth taken (rounded)
        (2, 1.0, 1),
        (2, 2.0, 1),  # fully taken: never fewer than one
        (2, 7.5, 1),
        (8, 2.2, 6),
        (8, 2.5, 6),  # exactly half a core left over counts
        (8, 0.0, 8),
        (1, 0.0, 1),
        (4, None, 4),  # the load cannot be read: every usable core
    ],
)
def test_spinning_threads_leave_the_cores_others_use(cores, others, want):
    assert threads.auto_threads(cores, others, sleeping=False) == want


@pytest.mark.parametrize("others", [0.0, 1.0, 2.0, 7.5, None])
def test_sleeping_threads_use_every_usable_core(others):
    assert threads.auto_threads(2, others, sleeping=True) == 2


def test_the_wait_policy_in_effect_is_the_one_torch_started_with(monkeypatch):
    import biaslab

    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    monkeypatch.setattr(biaslab, "TORCH_BEFORE_BIASLAB", False)
    assert threads.waiting_sleeps()  # set by biaslab before torch started
    monkeypatch.setattr(biaslab, "TORCH_BEFORE_BIASLAB", True)
    monkeypatch.setattr(biaslab, "WAIT_POLICY_BEFORE", "")
    assert not threads.waiting_sleeps()  # torch started first, at OpenMP's default
    monkeypatch.setattr(biaslab, "WAIT_POLICY_BEFORE", "passive")
    assert threads.waiting_sleeps()  # the caller set it before torch started
    monkeypatch.setattr(biaslab, "TORCH_BEFORE_BIASLAB", False)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert not threads.waiting_sleeps()


def test_cgroup_quota_v2_v1_and_unlimited(tmp_path):
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert threads.cgroup_quota(tmp_path) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert threads.cgroup_quota(tmp_path) is None
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("300000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert threads.cgroup_quota(v1) == 3.0
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert threads.cgroup_quota(v1) is None
    assert threads.cgroup_quota(tmp_path / "missing") is None


def test_usable_cores_follow_the_affinity_mask_and_the_quota(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(threads, "cgroup_quota", lambda: None)
    assert threads.usable_cores() == 4
    monkeypatch.setattr(threads, "cgroup_quota", lambda: 1.5)
    assert threads.usable_cores() == 2  # a quota of 1.5 CPUs: two threads can use it
    monkeypatch.setattr(threads, "cgroup_quota", lambda: 0.2)
    assert threads.usable_cores() == 1


def test_what_pins_the_count_and_in_which_order(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads, "others_demand", lambda: 1.0)
    for var in ("BIASLAB_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(threads, "waiting_sleeps", lambda: True)
    auto = threads.choose()
    assert (auto.torch_threads, auto.source, auto.cores, auto.others) == (4, "auto", 4, None)  # not sampled
    monkeypatch.setattr(threads, "waiting_sleeps", lambda: False)
    auto = threads.choose()
    assert (auto.torch_threads, auto.source, auto.cores, auto.others) == (3, "auto", 4, 1.0)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert (threads.choose().torch_threads, threads.choose().source) == (2, "OMP_NUM_THREADS")
    monkeypatch.setenv("BIASLAB_THREADS", "5")
    assert (threads.choose().torch_threads, threads.choose().source) == (5, "BIASLAB_THREADS")
    assert (threads.choose(7).torch_threads, threads.choose(7).source) == (7, "option")
    for bad in ("two", "0", "-1", "1.5"):
        monkeypatch.setenv("BIASLAB_THREADS", bad)
        with pytest.raises(ConfigError, match="BIASLAB_THREADS"):
            threads.choose()


def test_an_automatic_choice_is_kept_for_a_while_then_sampled_again(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    for var in ("BIASLAB_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    demand = iter([0.0, 2.0])
    monkeypatch.setattr(threads, "others_demand", lambda: next(demand))
    monkeypatch.setattr(threads, "waiting_sleeps", lambda: False)  # spinning threads: the load matters
    monkeypatch.setattr(threads, "_applied", None)
    monkeypatch.setattr(threads, "_chosen_at", 0.0)
    first = threads.apply()
    assert first.torch_threads == 2 and threads.apply() is first  # within RECHECK_SECONDS: not sampled again
    monkeypatch.setattr(threads, "_chosen_at", time.monotonic() - threads.RECHECK_SECONDS - 1)
    assert threads.apply().torch_threads == 1  # the machine got busy
    import torch

    assert torch.get_num_threads() == 1
    monkeypatch.setenv("BIASLAB_THREADS", "2")  # a model kept loaded follows a pinned count at once
    assert threads.apply().source == "BIASLAB_THREADS" and torch.get_num_threads() == 2
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 1))


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads /proc")
def test_others_demand_counts_busy_processes():
    """Two busy processes on this machine: at least about two cores' worth of demand is seen (more if other work
    runs too); nothing of this process's own counts."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.3)
        busy = threads.others_demand(0.5)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert busy is not None and busy >= 1.5


@pytest.mark.real_model
def test_the_choice_is_in_results_json_and_threads_flag_pins_it(tmp_path):
    """A local model's run records torch's threads and why; `--threads` pins them (through BIASLAB_THREADS, for
    a model loaded in this process as for a new one); a scripted model's run records none."""
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "cache")}
    args = ["run", "jobs-lum", "--model", "smollm2", "--limit", "1", "--max-tokens", "4", "-q"]
    run_cli(*args, "--out", tmp_path / "a", env=env, check=True)
    recorded = json.loads((tmp_path / "a" / "results.json").read_text())["run"]["threads"]
    assert recorded["source"] == "OMP_NUM_THREADS" and recorded["torch_threads"] == int(os.environ["OMP_NUM_THREADS"])
    assert recorded["cores"] == threads.usable_cores() and recorded["wait_policy"] == "PASSIVE"
    run_cli(*args, "--seed", "1", "--threads", "2", "--out", tmp_path / "b", env=env, check=True)
    pinned = json.loads((tmp_path / "b" / "results.json").read_text())["run"]["threads"]
    assert (pinned["torch_threads"], pinned["source"]) == (2, "BIASLAB_THREADS")
    run_cli("run", "jobs-lum", "--model", "scripted/he", "--limit", "1", "-q", "--out", tmp_path / "c", env=env,
            check=True)  # fmt: skip
    assert "threads" not in json.loads((tmp_path / "c" / "results.json").read_text())["run"]
    assert threads.apply().torch_threads == int(os.environ["OMP_NUM_THREADS"])  # back to the suite's own
