"""Scratch venvs in the user cache that differ from the running one in a few packages (the transformers
lower bound, a transformers release that broke the embedded model): built on first use, reused after.

A venv gets a ``.pth`` file naming this interpreter's site-packages, so it sees every package installed
here (torch included) behind its own: ``pip install`` puts only the pinned packages and what they need
in other versions into the venv itself, and those come first on its path. biaslab is not installed
there: callers put ``src`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.locks import exclusive


class Unavailable(Exception):
    """The venv could not be built (no network, no such release); tests skip with this reason."""


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "biaslab"


def scratch_python(name: str, requirements: list[str]) -> str:
    """The Python of ``<user cache>/biaslab/<name>``, a venv with ``requirements`` over this interpreter's
    packages (built once; rebuilt when the requirements change, or when it was built over another interpreter's
    packages: another checkout's venv, perhaps gone since)."""
    venv = cache_root() / name
    python = venv / "bin" / "python"
    ready = venv / ".biaslab-ready"
    spec = " ".join([*requirements, f"over {sysconfig.get_paths()['purelib']}"])
    if ready.exists() and ready.read_text() == spec:
        return str(python)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(venv.parent / f"{name}.lock"):  # another process building it (the background build): wait
        if not (ready.exists() and ready.read_text() == spec):
            _build(venv, requirements)
            ready.write_text(spec)
    return str(python)


def floor_python() -> str:
    """The venv with the lowest transformers and tokenizers biaslab declares (the test of the embedded model's
    first run there; built in the background when a session has it)."""
    from biaslab.models.versions import MINIMUM

    pins = [f"transformers=={MINIMUM['transformers']}", f"tokenizers=={MINIMUM['tokenizers']}"]
    return scratch_python(f"transformers-{MINIMUM['transformers']}-venv", pins)


def _build(venv: Path, requirements: list[str]) -> None:
    python = venv / "bin" / "python"
    spec = " ".join(requirements)
    log = venv.parent / f"{venv.name}-build.log"
    with open(log, "w") as out:
        if (
            subprocess.run(
                [sys.executable, "-m", "venv", "--clear", str(venv)], stdout=out, stderr=subprocess.STDOUT
            ).returncode
            != 0
        ):
            raise Unavailable(f"could not create the venv {venv} (log: {log})")
        site = Path(
            subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        (site / "biaslab-shared.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        cmd = [str(python), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check", *requirements]
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
            raise Unavailable(f"could not install {spec} into {venv}: {tail} (log: {log})")
