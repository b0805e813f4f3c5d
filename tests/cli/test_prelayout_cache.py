"""A response cache written before the re-layout still answers every request after it.

``tests/fixtures/prelayout/`` holds the cache and the results of four small runs made by the
pre-re-layout code (see its README). Re-running the same commands on a copy of that cache must
make zero model calls (cache keys and model identities did not change) and give the same
metrics, parameters and model identity (results did not change). Fields added since (``n``
beside every interval, an interval's method where the bootstrap degenerates, new parameters)
may appear; nothing the old results held may change, except the intervals and p values that now come
from one cluster-inference procedure (their ``method`` says so), whose values stay.
"""

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_run import biaslab
from tests.conftest import requires_data

pytestmark = requires_data
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "prelayout"

RUNS = {
    "jobs": ["jobs-lum", "--model", "scripted/random-gender", "--limit", "6", "--repetitions", "2"],
    "olympics": ["olympics", "--model", "scripted/echo", "--limit", "4"],
    "wino": ["winosemitism", "--model", "smollm2", "--limit", "12"],
    "fsb": ["fsb-judge", "--model", "smollm2", "--limit", "3", "--max-tokens", "8"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_run_cached_before_the_relayout_reruns_with_zero_model_calls(tmp_path, name):
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(FIXTURE / "responses.sqlite", cache / "responses.sqlite")
    out = tmp_path / "out"
    biaslab("run", *RUNS[name], "--cache-dir", cache, "--out", out, "-q", cache=tmp_path / "unused")
    results = json.loads((out / "results.json").read_text())
    before = json.loads((FIXTURE / f"{name}.json").read_text())
    assert results["run"]["model_calls"] == 0
    assert results["run"]["cache_hits"] == before["n_attempts"] * (2 if name == "wino" else 1)
    for key in ("probe", "model", "n_items", "n_attempts"):
        assert results[key] == before[key], key
    assert {k: results["parameters"].get(k) for k in before["parameters"]} == before["parameters"]
    assert set(results["metrics"]) == set(before["metrics"])
    for name_, old in before["metrics"].items():
        new = results["metrics"][name_]
        if not (new.get("interval") or new.get("too_small") or new.get("degenerate") or new.get("method")):
            # the same numbers, up to the last bit of a quantile (numpy's interpolation differs across versions)
            for k, v in old.items():
                assert new.get(k) == (v if v is None else pytest.approx(v, rel=1e-12, abs=1e-15)), (name_, k)
        else:  # a degenerate bootstrap replaced by an exact interval or none, or interval and p now from one
            # procedure (``method``: cluster inference, by design): the value is unchanged
            assert new["value"] == old["value"], name_
