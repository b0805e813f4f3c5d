"""Built benchmarks kept in the model store: read back equal to a fresh build, keyed by what decides the pairs,
rebuilt when the file is broken, and never an error where the store cannot be written."""

from __future__ import annotations

import json

import pytest

from biaslab.wino.build import stored
from biaslab.wino.build.build import build_pairs
from biaslab.wino.build.custom import load_custom
from biaslab.wino.build.example import EXAMPLE_DIR


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASLAB_MODELS_DIR", str(tmp_path / "store"))
    return tmp_path / "store" / "built-pairs"


def test_the_stored_pairs_are_the_built_ones_and_a_second_call_reads_them(store, monkeypatch):
    comps = load_custom(EXAMPLE_DIR)
    fresh = tuple(build_pairs(comps, seed=3).pairs)
    assert len(fresh) > 10
    assert stored.stored_pairs(comps, seed=3, faithful=False) == fresh
    [path] = store.glob("*.json")
    calls = []
    monkeypatch.setattr(stored, "build_pairs", lambda *a, **k: calls.append(a))
    assert stored.stored_pairs(load_custom(EXAMPLE_DIR), seed=3, faithful=False) == fresh  # read back
    assert calls == [] and list(store.glob("*.json")) == [path]


def test_the_key_follows_the_components_seed_mode_and_code(store, tmp_path, monkeypatch):
    comps = load_custom(EXAMPLE_DIR)
    base = stored.key(comps, seed=0, faithful=False)
    assert base == stored.key(load_custom(EXAMPLE_DIR), seed=0, faithful=False)  # by content, not identity
    assert base != stored.key(comps, seed=1, faithful=False)
    assert base != stored.key(comps, seed=0, faithful=True)
    other = load_custom(EXAMPLE_DIR)
    other.predicates = other.predicates[:-1]
    assert base != stored.key(other, seed=0, faithful=False)
    monkeypatch.setattr(stored, "_code_digest", lambda: "another builder")
    assert base != stored.key(comps, seed=0, faithful=False)


@pytest.mark.parametrize("broken", ["", "{", '{"pairs": [["too", "short"]]}', '{"pairs": 3}'])
def test_a_broken_file_is_built_again_and_replaced(store, broken):
    comps = load_custom(EXAMPLE_DIR)
    fresh = stored.stored_pairs(comps, seed=0, faithful=False)
    [path] = store.glob("*.json")
    path.write_text(broken)
    assert stored.stored_pairs(comps, seed=0, faithful=False) == fresh
    assert len(json.loads(path.read_text())["pairs"]) == len(fresh)


def test_a_store_that_cannot_be_written_still_gives_the_pairs(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("BIASLAB_MODELS_DIR", str(blocker))
    comps = load_custom(EXAMPLE_DIR)
    assert stored.stored_pairs(comps, seed=0, faithful=False) == tuple(build_pairs(comps, seed=0).pairs)


def test_biaslab_cache_lists_the_built_benchmarks(store):
    from typer.testing import CliRunner

    from biaslab.cli import mount

    stored.stored_pairs(load_custom(EXAMPLE_DIR), seed=0, faithful=False)
    shown = CliRunner().invoke(mount(), ["cache"], terminal_width=300)
    assert shown.exit_code == 0, shown.output
    assert f"built paired-sentence benchmarks: 1, 0 MB in {store}" in shown.output


BUILD_ONCE = """
import sys, time
from biaslab.wino.build import stored
from biaslab.wino.build.custom import load_custom
from biaslab.wino.build.example import EXAMPLE_DIR
real = stored.build_pairs
def slow_build(*a, **k):
    with open(sys.argv[1], "a") as f:
        f.write("built\\n")
    time.sleep(1.5)  # long enough for the other process to arrive while this one builds
    return real(*a, **k)
stored.build_pairs = slow_build
print(len(stored.stored_pairs(load_custom(EXAMPLE_DIR), seed=5, faithful=False)))
"""


def test_two_processes_that_need_one_build_build_it_once(store, tmp_path):
    import os
    import subprocess
    import sys

    log = tmp_path / "builds.log"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD_ONCE, str(log)], stdout=subprocess.PIPE, text=True, env=os.environ
        )
        for _ in range(2)
    ]
    counts = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(counts) == 1 and int(counts.pop()) > 10  # the same pairs for both
    assert log.read_text().splitlines() == ["built"]  # the second waited for the first and read its file
