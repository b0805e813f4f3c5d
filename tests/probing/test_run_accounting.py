"""A run's model calls, cache hits and new tokens are its own when runs share one model (as a suite's probes do)."""

from __future__ import annotations

from biaslab.models.open import open_cached_model
from biaslab.probes import create_probe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data


@requires_data
def test_runs_on_one_model_each_count_their_own(tmp_path):
    model = open_cached_model("scripted/random-gender", cache_dir=tmp_path)
    try:
        runs = [
            run_probe(create_probe(name), model, RunConfig(limit=4))
            for name in ("jobs-lum", "direct", "jobs-lum")  # the third asks what the first did: all cached
        ]
    finally:
        model.close()
    counts = [(r.run.model_calls, r.run.cache_hits) for r, _ in runs]
    assert counts == [(4, 0), (4, 0), (0, 4)]
    tokens = [r.run.new_tokens for r, _ in runs]
    assert tokens == [sum(a.n_new_tokens or 0 for a in att) for _, att in runs[:2]] + [0] and min(tokens[:2]) > 0
    assert all(r.run.retries is None for r, _ in runs)  # a scripted model calls no server: nothing to retry
