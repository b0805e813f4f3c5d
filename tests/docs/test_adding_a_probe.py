"""docs/ADDING_A_PROBE.md stays true: its first ```python block, packaged with its ```toml block, is installed
as a plugin package with the page's own pip command (into a folder on PYTHONPATH instead of the environment,
which a test must not change) and listed, run, planned, compared and run in a suite through the real `biaslab`
command."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "ADDING_A_PROBE.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.M | re.S)


def install_flags() -> list[str]:
    """The options of the page's ``pip install`` (its one bash line that runs pip)."""
    line = next(line for block in blocks("bash") for line in block.splitlines() if re.search(r"\bpip install\b", line))
    args = shlex.split(line, comments=True)
    return [a for a in args[args.index("install") + 1 :] if a.startswith("-")]


def test_the_guide_installs_into_biaslabs_environment_without_dependencies():
    """biaslab is not on the package index: pip must not look for it (--no-deps), and the plugin goes where biaslab
    is (no --target, which ignores what is installed)."""
    line = next(line for block in blocks("bash") for line in block.splitlines() if "pip install" in line)
    assert line.startswith(".venv/bin/pip install") and install_flags() == ["--no-deps"]


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """The doc's example installed as a package; the environment that sees it."""
    src = tmp_path_factory.mktemp("plugin-src")
    code, toml = blocks("python")[0], blocks("toml")[0]
    module = re.search(r'py-modules = \["(\w+)"\]', toml).group(1)
    (src / f"{module}.py").write_text(code, encoding="utf-8")
    (src / "pyproject.toml").write_text(toml, encoding="utf-8")
    site = tmp_path_factory.mktemp("plugin-site")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            *install_flags(),
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(site.glob("biaslab_pronoun_probe-*.dist-info"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "BIASLAB_CACHE_DIR": str(tmp_path_factory.mktemp("plugin-cache")),
    }
    return env


def biaslab(env, *args, ok=True):
    proc = subprocess.run(
        [sys.executable, "-m", "biaslab.cli", *map(str, args)], env=env, capture_output=True, text=True, timeout=600
    )
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_the_guide_has_one_complete_probe_class():
    code = blocks("python")[0]
    assert re.search(r"^class \w+\(\w+Probe\):", code, flags=re.M) and re.search(r'^    name = "', code, flags=re.M)


@pytest.mark.slow
def test_the_plugin_is_listed_with_its_headline(plugin):
    listed = json.loads(biaslab(plugin, "probes", "--json").stdout)
    entry = next(p for p in listed if p["name"] == "pronoun-choice")
    assert entry["source"].startswith("biaslab-pronoun-probe")
    assert entry["headlines"][0]["metric"] == "he_rate" and entry["headlines"][0]["unbiased"] == 0.5
    assert entry["pairing"]["family"] == "pronoun-choice"
    assert "pronoun-choice" in biaslab(plugin, "run", "--help").stdout


@pytest.mark.slow
def test_the_plugin_runs_plans_compares_and_joins_the_suite(plugin, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    biaslab(plugin, "run", "pronoun-choice", "-m", "scripted/coin", "--repetitions", "3", "--out", a, "-q")
    biaslab(plugin, "run", "pronoun-choice", "-m", "scripted/he", "--repetitions", "3", "--out", b, "-q")
    res_a = json.loads((a / "results.json").read_text())
    res_b = json.loads((b / "results.json").read_text())
    assert res_a["probe"] == "pronoun-choice" and res_a["n_items"] == 8 and res_a["n_attempts"] == 24
    assert res_b["metrics"]["he_rate"]["value"] == 1.0 and (a / "report.html").exists()

    plan = json.loads(biaslab(plugin, "plan", "pronoun-choice", "--effect", "0.1", "--json").stdout)
    assert plan["metric"] == "he_rate" and plan["n_items"] > 100 and plan["counts"] == "occupations"

    cmp = tmp_path / "cmp.json"
    biaslab(plugin, "compare", a, b, "--out", cmp)
    row = next(c for c in json.loads(cmp.read_text())["comparisons"] if c["metric"] == "he_rate")
    assert row["design"] == "paired" and row["n_shared"] == 8 and row["b"] == 1.0

    suite = tmp_path / "suite"
    biaslab(plugin, "suite", "-m", "scripted/he", "--probes", "pronoun-choice", "--out", suite, "-q")
    card = json.loads((suite / "results.json").read_text())
    assert card["runs"][0]["probe"] == "pronoun-choice" and card["runs"][0]["headlines"][0]["mark"] == "D"


def test_a_broken_plugin_is_a_one_line_error(tmp_path):
    site = tmp_path / "site"
    dist = site / "broken_probe-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-probe\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[biaslab.probes]\nbroken = no_such_module:Probe\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = biaslab(env, "run", "broken", "-m", "scripted/he", "--out", tmp_path / "o", ok=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "the broken probe (broken-probe 0.1) cannot be loaded" in proc.stderr
