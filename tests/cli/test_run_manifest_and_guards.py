"""`biaslab --version`, the run manifest, the refusal to overwrite another run, and fast model-spec errors."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from biaslab import __version__
from biaslab.errors import ConfigError
from biaslab.models.local.hub import check_hf_source, looks_like_path
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def biaslab(*args, tmp_path, env=None):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache"), **(env or {})})


def test_version(tmp_path):
    proc = biaslab("--version", tmp_path=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"biaslab {__version__}"


@requires_data
def test_another_models_run_into_a_finished_run_is_refused_and_the_first_kept(tmp_path):
    out = tmp_path / "run"
    first = biaslab("run", "jobs-lum", "-m", "scripted/he", "-n", "3", "--out", out, "-q", tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    results = json.loads(before["results.json"])
    nonbinary = results["metrics"]["nonbinary_rate"]  # a zero rate: exact interval with a non-zero upper bound
    assert nonbinary["value"] == 0 and nonbinary["ci_low"] == 0
    assert nonbinary["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 3))
    assert nonbinary["n"] == 3 and "│ 3 │" in first.stdout.replace("  ", " ").replace("  ", " ")
    assert "interval" not in results["metrics"]["stereotype_rate"]  # a slope, not a rate: no exact interval
    manifest = results["manifest"]
    assert manifest["command"].startswith("biaslab run jobs-lum -m scripted/he -n 3")
    assert datetime.fromisoformat(manifest["created_at"]).tzinfo is not None
    assert manifest["versions"]["biaslab"] == __version__ and manifest["versions"]["python"].count(".") == 2
    assert manifest["decoding"] == [
        {"kind": "generate", "temperature": None, "top_p": None, "max_tokens": 300, "seeded": True}
    ]

    second = biaslab("run", "jobs-lum", "-m", "scripted/she", "-n", "3", "--out", out, "-q", tmp_path=tmp_path)
    assert second.returncode != 0 and "Traceback" not in second.stderr
    assert "already holds a finished run (jobs-lum on he)" in second.stderr and "--overwrite" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before

    again = biaslab("run", "jobs-lum", "-m", "scripted/he", "-n", "3", "--out", out, "-q", tmp_path=tmp_path)
    assert again.returncode == 0, again.stderr  # the same run again: allowed (a resume or a re-run)
    assert again.stdout.count("model calls 0, cache hits 3") == 1
    kept = {p.name: p.read_bytes() for p in out.iterdir()}

    hotter = biaslab(
        "run", "jobs-lum", "-m", "scripted/he", "-n", "3", "--out", out, "-q", "--temperature", "0.5", tmp_path=tmp_path
    )  # the same model with other settings: refused like another model
    assert hotter.returncode != 0 and len(hotter.stderr.strip().splitlines()) == 1
    assert (
        "already holds a finished run of jobs-lum on he with other settings "
        "(generation.temperature: not set there, 0.5 here)"
    ) in hotter.stderr, hotter.stderr
    more = biaslab(
        "run",
        "jobs-lum",
        "-m",
        "scripted/he",
        "-n",
        "4",
        "--out",
        out,
        "-q",
        "--temperature",
        "0.5",
        "-r",
        "2",
        tmp_path=tmp_path,
    )
    assert (
        "(generation.temperature: not set there, 0.5 here; limit: 3 there, 4 here; repetitions: 1 there, "
        "2 here)" in more.stderr
    ), more.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == kept  # a refused run changes nothing
    hotter = biaslab(
        "run",
        "jobs-lum",
        "-m",
        "scripted/he",
        "-n",
        "3",
        "--out",
        out,
        "-q",
        "--temperature",
        "0.5",
        "--overwrite",
        tmp_path=tmp_path,
    )
    assert hotter.returncode == 0, hotter.stderr
    assert json.loads((out / "results.json").read_text())["manifest"]["decoding"][0]["temperature"] == 0.5
    forced = biaslab(
        "run", "jobs-lum", "-m", "scripted/she", "-n", "3", "--out", out, "-q", "--overwrite", tmp_path=tmp_path
    )
    assert forced.returncode == 0, forced.stderr
    assert json.loads((out / "results.json").read_text())["model"]["model"] == "she"


@requires_data
def test_the_same_model_with_another_scoring_is_refused_naming_what_differs(tmp_path):
    out = tmp_path / "run"
    first = biaslab("run", "crows-pairs", "-m", "scripted/echo", "-n", "4", "--out", out, "-q", tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    other = biaslab(
        "run",
        "crows-pairs",
        "-m",
        "scripted/echo",
        "-n",
        "4",
        "--out",
        out,
        "-q",
        "--scoring",
        "shared-tokens",
        tmp_path=tmp_path,
    )
    assert other.returncode != 0 and "Traceback" not in other.stderr
    assert other.stderr.strip().splitlines() == [
        f"error: --out {out} already holds a finished run of crows-pairs on echo with other settings (rule: "
        "full-sentence there, shared-tokens here; scoring: auto there, shared-tokens here); give another --out, "
        "or add --overwrite to replace it"
    ]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    forced = biaslab(
        "run",
        "crows-pairs",
        "-m",
        "scripted/echo",
        "-n",
        "4",
        "--out",
        out,
        "-q",
        "--scoring",
        "shared-tokens",
        "--overwrite",
        tmp_path=tmp_path,
    )
    assert forced.returncode == 0, forced.stderr
    assert json.loads((out / "results.json").read_text())["parameters"]["scoring"] == "shared-tokens"


@pytest.mark.parametrize(
    "spec, needle",
    [
        ("hf//nonexistent/model", "directory not found"),
        ("hf/does-not/exist", "the model is not local"),
    ],
)
@pytest.mark.timeout(120)  # fast, without retries (a subprocess had timeout=120)
def test_model_spec_errors_are_one_line(tmp_path, spec, needle):
    proc = biaslab(
        "run",
        "jobs-lum",
        "-m",
        spec,
        "-n",
        "1",
        "--out",
        tmp_path / "r",
        tmp_path=tmp_path,
        env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")},
    )
    assert proc.returncode != 0 and needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Retrying" not in proc.stderr
    assert not (tmp_path / "r").exists()


def test_hub_check_rules(tmp_path, monkeypatch):
    assert looks_like_path("/tmp/x") and looks_like_path("./m") and looks_like_path("a/b/c")
    assert not looks_like_path("org/model") and not looks_like_path("gpt2")
    check_hf_source(str(tmp_path))  # an existing directory passes
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a directory"):
        check_hf_source(str(tmp_path / "file"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with pytest.raises(ConfigError, match="not local .*HF_HUB_OFFLINE.*hf download org/none"):
        check_hf_source("org/none")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # online, but the hub does not answer: one quick try
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="hub cannot be reached"):
        check_hf_source("org/none")
