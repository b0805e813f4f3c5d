"""biaslab inside the vLLM CPU venv of the server tests, for ``vllm/`` models in process.

:func:`biaslab_python` takes the venv of :mod:`tests.models.openai.vllm_server` (built on first use, with
biaslab's own dependencies; into a ``BIASLAB_VLLM_PYTHON`` they are installed once here), not biaslab itself:
:func:`run_biaslab` puts this checkout's ``src`` first on ``PYTHONPATH``. The same venv serves both the server
tests and these.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.models.openai.vllm_server import Unavailable, biaslab_dependencies, vllm_python

ROOT = Path(__file__).resolve().parents[3]


def biaslab_python() -> str:
    """The vLLM venv's Python with biaslab's dependencies; :class:`Unavailable` when it cannot be had."""
    python = vllm_python()
    if not os.environ.get("BIASLAB_VLLM_PYTHON"):
        return python  # the venv built here got them with vLLM, in the same install
    deps = biaslab_dependencies()
    marker = Path(python).parent.parent / ".biaslab-deps"
    wanted = " ".join(deps)
    if marker.exists() and marker.read_text() == wanted:
        return python
    log = marker.with_name(".biaslab-deps.log")
    with open(log, "w") as out:
        cmd = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *deps]
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
            raise Unavailable(f"could not install biaslab's dependencies into the vLLM venv: {tail} (log: {log})")
    marker.write_text(wanted)
    return python


def env(cache: Path, *, one_process: bool = False, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a run in the vLLM venv; ``one_process``: vLLM's engine core in biaslab's process, not a
    process of its own (each vLLM process imports torch and vLLM: 10-25 s on 2 cores); with the model option
    ``distributed_executor_backend=uni``, no worker process either. No ``VLLM_CPU_KVCACHE_SPACE`` (unless given in
    ``extra``): biaslab sizes vLLM's KV cache and context itself."""
    return {
        **{k: v for k, v in os.environ.items() if k != "VLLM_CPU_KVCACHE_SPACE"},
        **({"VLLM_ENABLE_V1_MULTIPROCESSING": "0"} if one_process else {}),
        "PYTHONPATH": str(ROOT / "src"),
        "BIASLAB_CACHE_DIR": str(cache),
        "NO_COLOR": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "VLLM_LOGGING_LEVEL": "WARNING",
        "TOKENIZERS_PARALLELISM": "false",
        **(extra or {}),
    }


def biaslab_command(python: str, *args: object) -> list[str]:
    return [python, "-m", "biaslab.cli", *map(str, args)]


def run_biaslab(
    python: str, *args: object, cache: Path, check: bool = True, timeout: float = 1800
) -> subprocess.CompletedProcess:
    """``biaslab ARGS`` in the vLLM venv."""
    proc = subprocess.run(
        biaslab_command(python, *args),
        capture_output=True,
        text=True,
        env=env(cache),
        timeout=timeout,
        cwd=ROOT,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"biaslab {' '.join(map(str, args))} in the vLLM venv failed: {proc.stderr[-3000:]}")
    return proc
