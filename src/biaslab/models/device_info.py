"""The machine's accelerators, found without importing torch (or vLLM): for model identities computed before
anything loads.

A model's answers are cached under its identity, which names the dtype it computes in; with ``dtype=auto``
that depends on the device (float32 on CPU; on a GPU bfloat16, or float16 where the GPU has no bfloat16
units). Importing torch to find out costs seconds, so the answer is read from the machine instead:

* :func:`gpu_driver_present`: a CUDA or ROCm driver is visible (``/proc/driver/nvidia``, ``/dev/nvidia*``,
  ``/dev/kfd``) and ``CUDA_VISIBLE_DEVICES`` does not hide every GPU;
* :func:`torch_accelerator`: whether the installed torch is a CUDA or ROCm build, from its ``version.py``
  (a CPU-only torch never uses a GPU, whatever the machine has);
* :func:`cuda_capabilities`: the compute capability of each NVIDIA GPU, from NVML (``libnvidia-ml``, through
  ctypes) or, lacking it, ``nvidia-smi``.

:func:`auto_dtype_name` combines them into the dtype name the loader will pick, or None when only torch can
tell (GPUs of mixed generations, a ``CUDA_VISIBLE_DEVICES`` this module cannot map); then the model loads to
find out. The loader (:func:`biaslab.models.local.loading.pick_dtype`) follows the same rule: bfloat16 on
ROCm and on NVIDIA GPUs of compute capability 8.0 or more (Ampere on), float16 on older ones.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

BF16_MIN_CAPABILITY = 8  # NVIDIA GPUs with bfloat16 units: Ampere (8.0) and later


def gpu_driver_present() -> bool:
    """Whether a CUDA/ROCm driver is visible (if not, torch cannot see a GPU either)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return (
        Path("/proc/driver/nvidia").exists()
        or Path("/dev/nvidia0").exists()
        or Path("/dev/nvidiactl").exists()
        or Path("/dev/kfd").exists()
    )


def torch_accelerator() -> str | None:
    """``"cuda"`` or ``"rocm"`` for a torch built for them, None for a CPU-only torch or none installed
    (read from ``torch/version.py``: torch is not imported)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    try:
        text = (Path(spec.origin).parent / "version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    if _assigned(text, "hip"):
        return "rocm"
    if _assigned(text, "cuda"):
        return "cuda"
    return None


def _assigned(text: str, name: str) -> bool:
    """Whether ``version.py`` sets ``name`` to a string (``cuda = '12.8'``) rather than None."""
    match = re.search(rf"^{name}\s*(?::[^=]*)?=\s*(.+)$", text, flags=re.MULTILINE)
    return match is not None and match.group(1).strip() not in ("None", "''", '""')


def cuda_capabilities() -> list[tuple[int, int]] | None:
    """``(major, minor)`` of every NVIDIA GPU of the machine; None when neither NVML nor nvidia-smi answers."""
    found = _nvml_capabilities()
    return found if found is not None else _smi_capabilities()


def _nvml_capabilities() -> list[tuple[int, int]] | None:
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    try:
        if nvml.nvmlInit_v2() != 0:
            return None
    except AttributeError:
        return None
    try:
        count = ctypes.c_uint()
        if nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
            return None
        caps = []
        for i in range(count.value):
            handle = ctypes.c_void_p()
            major, minor = ctypes.c_int(), ctypes.c_int()
            if (
                nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)) != 0
                or nvml.nvmlDeviceGetCudaComputeCapability(handle, ctypes.byref(major), ctypes.byref(minor)) != 0
            ):
                return None
            caps.append((major.value, minor.value))
        return caps
    except AttributeError:  # an NVML without these functions
        return None
    finally:
        nvml.nvmlShutdown()


def _smi_capabilities() -> list[tuple[int, int]] | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True, text=True, timeout=15
        )
    except (OSError, subprocess.SubprocessError):
        return None
    caps = []
    for line in out.stdout.split():
        major, _, minor = line.strip().partition(".")
        if not (major.isdigit() and minor.isdigit()):
            return None
        caps.append((int(major), int(minor)))
    return caps if out.returncode == 0 else None


def _visible(caps: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """The GPUs torch will see, as far as ``CUDA_VISIBLE_DEVICES`` can be read without CUDA: all of them when
    it is unset, those it names by index; None when it names GPUs by UUID or an index the machine lacks."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return caps
    picked = []
    for part in value.split(","):
        part = part.strip()
        if not part.isdigit():
            return None
        if int(part) >= len(caps):
            break  # CUDA stops at the first invalid index
        picked.append(caps[int(part)])
    return picked


def gpu_dtype_name() -> str | None:
    """The dtype ``auto`` means on this machine's GPU (``bfloat16`` or ``float16``), None when unknown."""
    if Path("/dev/kfd").exists() and torch_accelerator() == "rocm":
        return "bfloat16"
    caps = cuda_capabilities()
    visible = _visible(caps) if caps is not None else None
    if not visible:
        return None
    majors = {major >= BF16_MIN_CAPABILITY for major, _ in visible}
    if len(majors) != 1:
        return None  # GPUs of both kinds: which one is the current device is torch's to say
    return "bfloat16" if majors.pop() else "float16"


def auto_device_kind() -> str | None:
    """What ``device=auto`` gives: ``"cpu"`` or ``"cuda"`` (ROCm included), None when only torch can tell."""
    if not gpu_driver_present():
        return "cpu"
    accelerator = torch_accelerator()
    if accelerator is None:
        return "cpu"  # a CPU-only torch (or none: the load fails with an install hint)
    if accelerator == "rocm":
        return "cuda" if Path("/dev/kfd").exists() else None
    caps = cuda_capabilities()
    if caps is None:
        return None
    visible = _visible(caps)
    if visible is None:
        return None
    return "cuda" if visible else "cpu"


def auto_dtype_name(device: str) -> str | None:
    """The dtype a model with ``dtype=auto`` computes in on ``device`` (``auto``, ``cpu``, ``cuda[:N]``,
    ``mps``), as a name; None when only torch can tell."""
    kind = auto_device_kind() if device == "auto" else device.split(":")[0]
    if kind is None:
        return None
    if kind == "cuda":
        return gpu_dtype_name()
    return "float32"  # cpu, mps
