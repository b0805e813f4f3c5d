"""The device and dtype of ``auto``, told without torch: from the torch build, the driver and NVML."""

from __future__ import annotations

import subprocess
import sys

import pytest

from biaslab.models import device_info
from biaslab.models.local.identity import resolved_dtype_name


@pytest.fixture
def machine(monkeypatch):
    """A machine whose driver, torch build and GPUs the test sets."""

    def make(
        *,
        driver: bool,
        torch: str | None,
        caps: list[tuple[int, int]] | None,
        kfd: bool = False,
        visible: str | None = None,
    ) -> None:
        monkeypatch.setattr(device_info, "gpu_driver_present", lambda: driver)
        monkeypatch.setattr(device_info, "torch_accelerator", lambda: torch)
        monkeypatch.setattr(device_info, "cuda_capabilities", lambda: caps)
        real_exists = device_info.Path.exists
        monkeypatch.setattr(
            device_info.Path, "exists", lambda self: kfd if str(self) == "/dev/kfd" else real_exists(self)
        )
        if visible is None:
            monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        else:
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)

    return make


def test_this_machine_is_a_cpu_one_and_torch_is_not_imported():
    assert device_info.torch_accelerator() is None  # the CPU-only torch of the test environment
    assert device_info.cuda_capabilities() is None  # no NVML, no nvidia-smi
    assert device_info.auto_dtype_name("auto") == "float32"
    assert resolved_dtype_name("auto", "auto") == "float32"
    code = (
        "import sys; from biaslab.models import device_info as d; "
        "print(d.auto_dtype_name('auto'), d.torch_accelerator(), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["float32", "None", "False"]


def test_version_file_tells_the_build():
    cpu = "cuda: Optional[str] = None\nhip: Optional[str] = None\n"
    assert not device_info._assigned(cpu, "cuda") and not device_info._assigned(cpu, "hip")
    assert device_info._assigned("cuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n", "cuda")
    assert device_info._assigned("cuda = None\nhip = '6.2.41133'\n", "hip")


@pytest.mark.parametrize(
    ("caps", "dtype"),
    [([(9, 0)], "bfloat16"), ([(8, 0), (8, 6)], "bfloat16"), ([(7, 0), (7, 5)], "float16"), ([(8, 0), (7, 0)], None)],
)
def test_a_gpu_machine(machine, caps, dtype):
    machine(driver=True, torch="cuda", caps=caps)
    assert device_info.auto_device_kind() == "cuda"
    assert device_info.auto_dtype_name("auto") == dtype  # mixed generations: only torch can say
    assert resolved_dtype_name("auto", "cuda:1") == dtype
    assert resolved_dtype_name("auto", "cpu") == "float32" and resolved_dtype_name("bf16", "auto") == "bfloat16"


def test_what_hides_the_gpu(machine):
    machine(driver=True, torch=None, caps=[(9, 0)])  # a CPU-only torch never uses the GPU
    assert device_info.auto_dtype_name("auto") == "float32"
    machine(driver=True, torch="cuda", caps=[])  # a driver but no GPU
    assert device_info.auto_device_kind() == "cpu"
    machine(driver=True, torch="cuda", caps=None)  # no NVML to ask: torch must
    assert device_info.auto_dtype_name("auto") is None
    machine(driver=True, torch="rocm", caps=None, kfd=True)
    assert device_info.auto_dtype_name("auto") == "bfloat16"


def test_cuda_visible_devices(machine):
    machine(driver=True, torch="cuda", caps=[(7, 0), (9, 0)], visible="1")
    assert device_info.auto_dtype_name("auto") == "bfloat16"  # only the H100-class GPU is visible
    machine(driver=True, torch="cuda", caps=[(7, 0), (9, 0)], visible="0")
    assert device_info.auto_dtype_name("auto") == "float16"
    machine(driver=True, torch="cuda", caps=[(9, 0)], visible="GPU-8d1f")  # by UUID: unknown here
    assert device_info.auto_dtype_name("auto") is None
    machine(driver=True, torch="cuda", caps=[(9, 0)], visible="3")  # no such GPU: torch sees none
    assert device_info.auto_device_kind() == "cpu"
