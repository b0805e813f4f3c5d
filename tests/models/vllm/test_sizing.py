"""The sizes a vLLM engine is started with (:mod:`biaslab.models.vllm.sizing`, against sums done by hand), what they
are read from (:mod:`biaslab.models.vllm.memory`), and an engine that cannot start as one line
(:mod:`biaslab.models.vllm.start`; vLLM itself fails in tests/models/vllm/test_inprocess.py)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import types

import pytest

from biaslab.errors import BackendError, ConfigError
from biaslab.models.vllm import memory as vm
from biaslab.models.vllm.engine import VLLMEngine
from biaslab.models.vllm.sizing import GiB, Memory, MiB, ModelShape, fitting_context, plan_cpu, plan_gpu
from biaslab.models.vllm.start import EngineLog, engine_log, start_error

# SmolLM2-135M at float32: 2 * 30 layers * 3 KV heads * 64 * 4 bytes = 46,080 bytes of KV cache a token (360 MiB for
# its 8,192-token context); beside the weights vLLM needs 2 GiB + 2 * 4,096 tokens * 49,152 * 4 bytes = 3.5 GiB
SMOL = ModelShape(layers=30, kv_heads=3, head_dim=64, vocab=49152, context=8192, weight_bytes=512 * MiB)


def test_cpu_kv_cache_is_what_is_free_at_most_eight_whole_contexts():
    plan = plan_cpu(SMOL, "float32", Memory(free=20 * GiB, total=24 * GiB))
    # 20 - 0.5 - 3.5 = 16 GiB could be had: 8 * 360 MiB = 2,880 MiB are taken; share (512 + 2880 + 3584) / 24576 MiB
    assert plan.args == {"kv_cache_memory_bytes": 2880 * MiB, "gpu_memory_utilization": 0.29}
    assert plan.record == {
        "memory_free_gib": 20.0,
        "memory_total_gib": 24.0,
        "weights_gib": 0.5,
        "gpu_memory_utilization": 0.29,
        "kv_cache_gib": 2.81,
        "max_model_len": 8192,  # 2,880 MiB hold 16,384 tokens four times: the model's context stays
        "set_by": {"kv_cache_gib": "biaslab", "gpu_memory_utilization": "biaslab", "max_model_len": "model"},
    }


def test_cpu_with_little_free_memory_gets_a_shorter_context():
    plan = plan_cpu(SMOL, "float32", Memory(free=5 * GiB, total=24 * GiB))
    # 5 - 0.5 - 3.5 = 1 GiB; four sequences of 1 GiB / (4 * 46,080) = 5,825 tokens, in steps of 256: 5,632
    assert plan.args == {"kv_cache_memory_bytes": GiB, "gpu_memory_utilization": 0.21, "max_model_len": 5632}
    assert plan.record["set_by"]["max_model_len"] == "biaslab"
    tight = plan_cpu(SMOL, "float32", Memory(free=int(4.1 * GiB), total=24 * GiB))
    assert tight.args["kv_cache_memory_bytes"] == 102 * MiB and tight.args["max_model_len"] == 512  # 580 tokens
    with pytest.raises(BackendError, match=r"0.5 GiB .* 4.05 GiB of 24.0 GiB are free.*VLLM_CPU_KVCACHE_SPACE=1"):
        plan_cpu(SMOL, "float32", Memory(free=int(4.05 * GiB), total=24 * GiB))  # 0.05 GiB < 4 * 512 tokens


def test_cpu_user_settings_win():
    free = Memory(free=20 * GiB, total=24 * GiB)
    kv = plan_cpu(SMOL, "float32", free, user_kv_bytes=GiB)  # VLLM_CPU_KVCACHE_SPACE=1: 5,632 tokens fit 4 times
    assert kv.args == {"max_model_len": 5632} and kv.record["set_by"]["kv_cache_gib"] == "user"
    both = plan_cpu(SMOL, "float32", free, user_kv_bytes=GiB, user_len=2048)
    assert both.args == {} and both.record["max_model_len"] == 2048 and both.record["set_by"]["max_model_len"] == "user"
    share = plan_cpu(SMOL, "float32", free, user_share=0.5)  # vLLM's own cache: 12 - 0.5 - 2 GiB
    assert share.args == {} and share.record["kv_cache_gib"] == 9.5 and share.record["gpu_memory_utilization"] == 0.5
    by = {"gpu_memory_utilization": "user", "kv_cache_gib": "vllm", "max_model_len": "model"}
    assert share.record["set_by"] == by


def test_cpu_tensor_parallel_workers_share_the_cache_and_bfloat16_halves_it():
    plan = plan_cpu(SMOL, "float32", Memory(free=20 * GiB, total=24 * GiB), world=2)
    assert plan.args["kv_cache_memory_bytes"] == 1440 * MiB  # each worker: half of 2,880 MiB
    half = plan_cpu(SMOL, "bfloat16", Memory(free=20 * GiB, total=24 * GiB))
    assert half.args["kv_cache_memory_bytes"] == 1440 * MiB  # 23,040 bytes a token


def test_fitting_context():
    assert fitting_context(100 * MiB, MiB, 4096) == 16  # 25 tokens: steps of 16 below 256
    assert fitting_context(10 * MiB, MiB, 4096) is None  # not one step: vLLM says what fits
    assert fitting_context(4096 * 4 * MiB, MiB, 4096) is None  # the model's own fits


def test_gpu_share_is_vllms_when_the_gpu_is_free_else_what_is_free():
    gpu = 80 * GiB
    free = plan_gpu(Memory(free=79 * GiB, total=gpu), 0.92)
    assert free.args == {} and free.record["gpu_memory_utilization"] == 0.92
    assert free.record["set_by"] == {"gpu_memory_utilization": "vllm"}
    busy = plan_gpu(Memory(free=40 * GiB, total=gpu), 0.92, weight_bytes=16 * GiB)
    assert busy.args == {"gpu_memory_utilization": 0.48}  # (40 - 1) / 80, rounded down
    with pytest.raises(BackendError, match="10.0 GiB of 80.0 GiB are free and the weights take 16.0 GiB"):
        plan_gpu(Memory(free=10 * GiB, total=gpu), 0.92, weight_bytes=16 * GiB)  # 0.11 * 80 = 8.8 GiB
    assert plan_gpu(Memory(free=10 * GiB, total=gpu), 0.92, weight_bytes=16 * GiB, world=2).args == {
        "gpu_memory_utilization": 0.11
    }
    mine = plan_gpu(Memory(free=10 * GiB, total=gpu), 0.92, user_share=0.7, user_len=4096)
    assert mine.args == {} and mine.record["set_by"] == {"gpu_memory_utilization": "user", "max_model_len": "user"}


def _safetensors(path, tensors):
    header = json.dumps({"__metadata__": {}, **tensors}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header)


def test_memory_and_model_shape_are_read_from_the_machine_and_the_files(tmp_path, monkeypatch):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683656 kB\nMemFree:        10412352 kB\nMemAvailable:   23463760 kB\n")
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    assert vm.cpu_memory(meminfo, cgroup) == Memory(free=23463760 * 1024, total=24683656 * 1024)
    (cgroup / "memory.max").write_text("8589934592\n")
    (cgroup / "memory.current").write_text(f"{4 * GiB}\n")
    (cgroup / "memory.stat").write_text(f"anon 5\ninactive_file {GiB}\n")
    assert vm.cpu_memory(meminfo, cgroup) == Memory(free=5 * GiB, total=8 * GiB)  # 8 - 4 + 1 (reclaimable)
    (cgroup / "memory.max").write_text("max\n")
    assert vm.cpu_memory(meminfo, cgroup).total == 24683656 * 1024

    model = tmp_path / "m"
    model.mkdir()
    config = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "vocab_size": 100}
    (model / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 4096, "seq_length": 2048}))
    (model / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 1e30}))
    _safetensors(
        model / "model.safetensors",
        {
            "w": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]},
            "q": {"dtype": "I8", "shape": [4], "data_offsets": [12, 16]},
        },
    )
    shape = vm.model_shape(str(model), "float32")  # the bfloat16 tensor loaded at float32, the int8 one as stored
    assert shape == ModelShape(layers=2, kv_heads=4, head_dim=16, vocab=100, context=2048, weight_bytes=6 * 4 + 4)
    monkeypatch.setattr(vm, "cpu_memory", lambda: Memory(free=20 * GiB, total=24 * GiB))
    args, record = vm.size_engine(str(model), {"dtype": "float32", "max_model_len": 1024}, cpu=True, env={})
    assert args["max_model_len"] == 1024 and "kv_cache_memory_bytes" in args and record["weights_gib"] == 0.0
    with pytest.raises(ConfigError, match="VLLM_CPU_KVCACHE_SPACE must be a whole number of GiB"):
        vm.size_engine(str(model), {}, cpu=True, env={"VLLM_CPU_KVCACHE_SPACE": "1.5"})


CPU_SHARE = (
    "(EngineCore pid=7) ValueError: Available memory on node 0 (21.06/23.54 GiB) on startup is less than desired "
    "CPU memory utilization (0.92, 21.66 GiB). On the CPU backend, the `--gpu-memory-utilization` flag ..."
)
FAILED = "Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore': 1}"


@pytest.mark.parametrize(
    "logged, cpu, says",
    [
        (
            CPU_SHARE,
            True,
            "vLLM could not reserve 21.66 GiB (gpu_memory_utilization=0.92 of the machine's memory): "
            "21.06 GiB of 23.54 GiB are free; give -P gpu_memory_utilization=0.71",
        ),
        (
            "ValueError: Available memory on node 0 (20.41/23.54 GiB) on kv cache allocation is less than requested "
            "memory for kv (1000.0 GiB). Decrease",
            True,
            "vLLM could not reserve 1000 GiB of KV cache: 20.41 GiB of "
            "23.54 GiB are free; set VLLM_CPU_KVCACHE_SPACE=5",
        ),
        (
            "ValueError: Free memory on device cuda:0 (30.5/79.19 GiB) on startup is less than desired GPU memory "
            "utilization (0.92, 72.85 GiB).",
            False,
            "-P gpu_memory_utilization=0.37",
        ),
        (
            "ValueError: To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (6.5 GiB). Based on the available memory, the "
            "estimated maximum model length is 53248. Try",
            False,
            "cannot hold one sequence of 131072 tokens (16 GiB); "
            "give -P max_model_len=53248, or give a larger -P gpu_memory_utilization",
        ),
        (
            "ValueError: User-specified max_model_len (100000) is greater than the derived max_model_len "
            "(max_position_embeddings=8192 or model_max_length=None",
            True,
            "give -P max_model_len=8192 or less",
        ),
        ("(EngineCore pid=7) ERROR [core.py:1] KeyError: 'rope_type'", True, "KeyError: 'rope_type'"),
        ("", True, "signal 9"),
    ],
)
def test_start_failures_are_one_line_with_their_fix(tmp_path, logged, cpu, says):
    log = EngineLog(tmp_path / "engine.log")
    log.path.write_text(f"INFO loading\n{logged}\nRuntimeError: {FAILED}\n")
    failed = FAILED.replace("1}", "-9}") if not logged else FAILED
    err = start_error(RuntimeError(failed), log, model="m", cpu=cpu)
    text = str(err)
    assert isinstance(err, BackendError) and "\n" not in text and text.startswith("vllm/m did not start: ")
    assert says in text and text.endswith(f"(vLLM's log: {log.path})") and "See root cause" not in text


def test_a_failed_start_keeps_vllms_processes_output_in_the_log(tmp_path, monkeypatch, capfd):
    """vLLM's engine core is a process of its own: its root cause reaches the log through the stderr it inherits."""
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path))

    class FailingLLM:
        def __init__(self, model, **args):
            assert args == {"dtype": "float32", "kv_cache_memory_bytes": 1}
            os.write(1, b"vLLM's banner\n")  # what vLLM and its processes write reaches the descriptors
            subprocess.run([sys.executable, "-c", f"import sys; print({CPU_SHARE!r}, file=sys.stderr)"], check=True)
            raise RuntimeError(FAILED)

    fake = types.ModuleType("vllm")
    fake.LLM = FailingLLM  # type: ignore[attr-defined]
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_cpu=lambda: True)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    monkeypatch.setattr(vm, "size_engine", lambda model, args, **kw: ({**args, "kv_cache_memory_bytes": 1}, {}))
    with pytest.raises(BackendError, match=r"^vllm/m did not start: vLLM could not reserve 21.66 GiB") as caught:
        VLLMEngine("m", {"dtype": "float32"})
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # nothing of vLLM's reached the terminal
    logs = list((tmp_path / "vllm-logs").glob("engine-*.log"))
    assert len(logs) == 1 and str(logs[0]) in str(caught.value)
    assert "vLLM's banner" in logs[0].read_text() and "21.66 GiB" in logs[0].read_text()


def test_engine_log_gives_the_descriptors_back(tmp_path, capfd):
    with engine_log(tmp_path / "x.log"):
        os.write(1, b"inside\n")
    os.write(1, b"outside\n")
    assert capfd.readouterr().out == "outside\n" and (tmp_path / "x.log").read_text() == "inside\n"
