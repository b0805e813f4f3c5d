"""``biaslab suite --system-prompt ... --temperature ...``: every run gets them, the suite records them and the card
says where the system prompt did not apply; a suite with another system prompt reuses nothing."""

from __future__ import annotations

import json
import math

from biaslab.probing.config import RunConfig
from biaslab.suite.estimate import estimate_suite
from tests.cli_runner import run_cli
from tests.conftest import requires_data

PRODUCT = "You are the careful hiring assistant of Acme Corp. Answer briefly and never guess a gender."


def texts(run_dir) -> list[str]:
    return [json.loads(line)["text"] for line in (run_dir / "attempts.jsonl").read_text().splitlines()]


@requires_data
def test_every_run_gets_the_system_prompt_and_a_rerun_with_another_is_refused(tmp_path):
    out = tmp_path / "suite"
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "cache")}
    args = ("suite", "-m", "scripted/echo", "-p", "jobs-lum", "-p", "winogender", "-n", "4", "--out", out, "-q")
    first = run_cli(*args, "--system-prompt", PRODUCT, "--temperature", "0.5", env=env)
    assert first.returncode == 0, first.stderr
    assert "note: the system prompt does not apply to winogender" in first.stdout + first.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["system_prompt"]["text"] == PRODUCT and res["generation"] == {"temperature": 0.5}
    runs = {r["probe"]: r for r in res["runs"]}
    assert runs["jobs-lum"]["system_prompt_requests"] == runs["jobs-lum"]["n_items"] > 0
    assert runs["winogender"]["system_prompt_requests"] == 0
    jobs = json.loads((out / runs["jobs-lum"]["dir"] / "results.json").read_text())
    assert jobs["parameters"]["system_prompt"]["text"] == PRODUCT and jobs["parameters"]["generation"] == {
        "max_tokens": 300,
        "temperature": 0.5,
    }
    assert all(t.startswith(f"[system] {PRODUCT}\n") for t in texts(out / runs["jobs-lum"]["dir"]))
    card = (out / "report.html").read_text()
    assert f"System prompt first in every chat request: “{PRODUCT[:60]}…” (91 chars, sha256 " in card
    assert "not applied to winogender (no chat in their requests)" in card
    assert "Decoding for every generation probe: temperature 0.5." in card

    again = run_cli(*args, "--system-prompt", PRODUCT, "--temperature", "0.5", env=env)
    assert again.returncode == 0, again.stderr
    assert all(r["reused"] for r in json.loads((out / "results.json").read_text())["runs"])
    other = run_cli(*args, "--system-prompt", "Be terse.", "--temperature", "0.5", env=env)
    assert other.returncode == 2 and "finished suite with other settings (system_prompt.chars: 91 there, 9 here" in (
        other.stderr
    )
    assert len(other.stderr.strip().splitlines()) == 1


@requires_data
def test_the_suites_dry_run_counts_the_system_prompts_tokens(tmp_path):
    def tokens(settings=None):
        (est,) = estimate_suite(["scripted/echo"], ["jobs-lum"], limit=3, cache_dir=tmp_path, settings=settings)
        assert est.to_send == 3
        return est.input_tokens

    assert tokens(RunConfig(system_prompt=PRODUCT)) - tokens() == 3 * (math.ceil(len(PRODUCT) / 4) + 4)
