"""Time estimates of local runs: the engine's schedule replayed on measured step times (hand-computed cases), and
a real calibration of the embedded model kept in the model store and used by ``--dry-run``."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from biaslab.app.time_estimate import START_SECONDS, duration, estimate_seconds
from biaslab.models.local.calibration import Calibration, predict
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def cal(slots: int = 2, kv_budget: int = 10**12) -> Calibration:
    return Calibration(
        step_seconds={1: 0.1, 16: 0.2, 48: 0.4},
        score_tokens_per_s=100.0,
        prefill_tokens_per_s=1000.0,
        load_seconds=3.0,
        threads=2,
        slots=slots,
        kv_bytes_per_token=1000,
        kv_budget_bytes=kv_budget,
    )


def test_step_time_is_interpolated_between_measured_counts_and_extended_past_them():
    c = cal()
    assert c.step(1) == 0.1 and c.step(16) == 0.2 and c.step(48) == 0.4
    assert c.step(2) == pytest.approx(0.1 + 0.1 / 15)
    assert c.step(32) == pytest.approx(0.3)
    assert c.step(64) == pytest.approx(0.5)  # the last slope, 0.2 per 32 rows
    assert Calibration.from_json(json.loads(json.dumps(c.to_json()))) == c


def test_the_schedule_of_three_requests_on_two_slots():
    """Prompts: 30 tokens at 1,000/s. Two in flight (5 and 3 steps left): 3 steps at step(2); the third enters
    beside the one with 2 left: 2 steps at step(2); the last alone: 2 steps at step(1). 50 scored tokens: 0.5 s."""
    step2 = 0.1 + 0.1 / 15
    want = 0.03 + 3 * step2 + 2 * step2 + 2 * 0.1
    assert predict(cal(), [(10, 5), (10, 3), (10, 4)], 0) == pytest.approx(want)
    assert predict(cal(), [(10, 5), (10, 3), (10, 4)], 50) == pytest.approx(want + 0.5)
    assert predict(cal(), [], 50) == pytest.approx(0.5)


def test_longer_contexts_add_their_measured_cost_per_token():
    """1e-4 s per sequence and token of context past 10: one sequence from a 10-token prompt, 4 steps: contexts
    10, 11, 12, 13 past 10 by 0+1+2+3 = 6 tokens; two from 20-token prompts, 3 steps each: 2 x (10+11+12) = 66."""
    c = replace(cal(), context_seconds=1e-4, short_context=10)
    assert predict(c, [(10, 4)], 0) == pytest.approx(0.01 + 4 * 0.1 + 6e-4)
    step2 = 0.1 + 0.1 / 15
    assert predict(c, [(20, 3), (20, 3)], 0) == pytest.approx(0.04 + 3 * step2 + 66e-4)


def test_long_requests_get_fewer_slots_from_the_kv_budget():
    """A budget of 20,000 bytes at 1,000 bytes per token holds one 20-token sequence: the three run one by one."""
    one_by_one = 0.03 + (5 + 3 + 4) * 0.1
    assert predict(cal(slots=48, kv_budget=20_000), [(10, 5), (10, 3), (10, 4)], 0) == pytest.approx(one_by_one)


def test_a_run_adds_start_up_and_load_and_repetitions_multiply_the_work():
    c = cal()
    work = predict(c, [(10, 5)], 0)
    assert estimate_seconds(c, [(10, 5)], 0) == pytest.approx(START_SECONDS + 3.0 + work)
    assert estimate_seconds(c, [(10, 5)], 0, repeat=3) == pytest.approx(START_SECONDS + 3.0 + 3 * work)
    assert estimate_seconds(c, [], 0) == START_SECONDS  # all cached: the model never loads
    assert [duration(s) for s in (4.4, 59.6, 61, 3725)] == ["4 s", "1 min 00 s", "1 min 01 s", "1 h 02 min"]


@requires_data
@pytest.mark.real_model
@pytest.mark.slow
def test_dry_run_measures_the_model_once_and_keeps_the_measurement(tmp_path):
    """The first dry run of SmolLM2 measures it (the model loads; nothing is sent or cached) and says its estimate
    is an upper bound; the measurement is kept in the model store, so the next dry run only reads it (estimates
    from the cached answers' length: tests/probing/test_dry_run.py)."""
    from biaslab.models.store import models_dir

    store = tmp_path / "store"  # calibrations of its own; the session's converted model linked in
    store.mkdir()
    (models_dir() / "converted").mkdir(parents=True, exist_ok=True)
    (store / "converted").symlink_to(models_dir() / "converted", target_is_directory=True)
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "cache"), "BIASLAB_MODELS_DIR": str(store), "COLUMNS": "200"}
    args = ["run", "jobs-lum", "--model", "smollm2", "--limit", "2", "--max-tokens", "12"]
    converted = store
    first = run_cli(*args, "--dry-run", env=env, check=True)
    assert "measuring smollm2" in first.stderr and "the model loaded once to measure its speed" in first.stdout
    assert "time           about" in first.stdout and "at most" in first.stdout
    assert list((converted / "calibration").glob("*.json")), "the calibration is kept"
    second = run_cli(*args, "--dry-run", env=env, check=True)
    assert "measuring" not in second.stderr and "no model loaded" in second.stdout
    assert "time           about" in second.stdout
    assert not (tmp_path / "cache").exists()  # the dry runs cached no answer
