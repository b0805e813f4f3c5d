"""Fixtures shared by the model tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.locks import exclusive


@pytest.fixture(scope="session")
def local_runs(tmp_path_factory):
    """WinoSemitism runs of the local engine on the embedded SmolLM2, which the vLLM tests (server and in process)
    compare their scores with; each made once per session, by whichever test worker asks first (the folder is shared
    by pytest-xdist's workers, a lock per run): ``local_runs(limit, *extra args)`` -> the run's folder."""
    from tests.cli_runner import run_cli

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "local-engine"  # the session's
    root.mkdir(parents=True, exist_ok=True)

    def run(limit: int, *extra: str) -> Path:
        name = "-".join(["winosemitism", str(limit), *extra]).replace("=", "_").replace("/", "_")
        out = root / name
        with exclusive(root / f"{name}.lock"):
            if not (out / "results.json").is_file():
                args = ("run", "winosemitism", "--limit", limit, *extra, "--out", out, "-q", "--overwrite")
                # one response cache for all of them: the pairs of --limit 40 are among those of --limit 200
                run_cli(*args, env={"BIASLAB_CACHE_DIR": str(root / "cache")}, check=True)
        assert json.loads((out / "results.json").read_text())["n_attempts"] == limit
        return out

    return run
