"""`biaslab run` on an OpenAI-compatible server that misbehaves: retries shown and recorded, the request options
the errors name settable with -P, and a run that gives up keeps every answer it received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytest.importorskip("openai")

from tests.models.openai.openai_test_server import OpenAITestServer

pytestmark = requires_data

NO_KEYS = dict.fromkeys(
    ("OPENAI_API_KEY", "BIASLAB_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
)


@pytest.fixture
def server():
    servers: list[OpenAITestServer] = []

    def make(**config):
        servers.append(OpenAITestServer(**config).start())
        return servers[-1]

    yield make
    for srv in servers:
        srv.stop()


def run_on(srv: OpenAITestServer, tmp_path: Path, *args: object):
    """``biaslab run jobs-lum`` on ``srv``'s model, with the test's cache; the output in one line."""
    proc = run_cli(
        "run",
        "jobs-lum",
        "--model",
        "openai/test-model",
        "--base-url",
        srv.base_url,
        *args,
        "-q",
        env={**NO_KEYS, **{k.lower(): None for k in NO_KEYS}, "BIASLAB_CACHE_DIR": str(tmp_path / "cache")},
    )
    proc.stdout = " ".join(proc.stdout.split())  # Rich wraps long lines
    return proc


def first_prompt(limit: int) -> str:
    """The last message of the first request a jobs-lum run of ``limit`` items sends."""
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import plan_run

    probe, cfg = create_probe("jobs-lum"), RunConfig(limit=limit)
    planned = plan_run(probe, probe.select_items(probe.load_items(), cfg), cfg)
    return planned[0].request.messages[-1][1]


def test_retries_are_printed_and_kept_in_results(server, tmp_path):
    srv = server(fault=500, fail_first=1)
    out = tmp_path / "o"
    proc = run_on(srv, tmp_path, "--limit", "3", "-P", "retry_base_delay=0.01", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "model calls 3, cache hits 0, retries 3 (HTTP 500: 3); wrote" in proc.stdout
    run = json.loads((out / "results.json").read_text())["run"]
    assert (run["model_calls"], run["retries"], run["retry_causes"]) == (3, 3, {"HTTP 500": 3})
    again = run_on(srv, tmp_path, "--limit", "3", "--out", out)  # from the cache: no call, no retry
    assert "model calls 0, cache hits 3, retries 0; wrote" in again.stdout and srv.stats.requests == 6


def test_a_run_out_of_retries_keeps_every_answer_it_received(server, tmp_path):
    """One request keeps getting a broken answer while five others are on the wire: one line, no traceback,
    and the five answers (paid for) are in the cache, so the re-run asks only for the one that failed."""
    srv = server(fault="not-json", fail_first=10**6, fault_match=first_prompt(6), delay=0.5)
    out = tmp_path / "o"
    options = ["-P", "max_retries=1", "-P", "retry_base_delay=0.01", "--max-concurrency", "6"]
    proc = run_on(srv, tmp_path, "--limit", "6", *options, "--out", out)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "/chat/completions sent an answer that is not JSON" in line and "after 2 attempts" in line
    assert srv.stats.requests == 7 and not (out / "results.json").exists()
    srv.config.fault = None  # the server mends
    again = run_on(srv, tmp_path, "--limit", "6", "--out", out)
    assert again.returncode == 0 and "model calls 1, cache hits 5, retries 0; wrote" in again.stdout
    assert srv.stats.requests == 8


@pytest.mark.parametrize(
    "option, message",
    [
        ("timeout=abc", "-P timeout must be a positive number of seconds, got 'abc'"),
        ("timeout=0", "-P timeout must be a positive number of seconds, got '0'"),
        ("timeout=nan", "-P timeout must be a positive number of seconds, got 'nan'"),
        ("max_retries=-1", "-P max_retries must be 0 or more, a whole number, got '-1'"),
        ("max_retries=2.5", "-P max_retries must be 0 or more, a whole number, got '2.5'"),
        ("retry_base_delay=-0.5", "-P retry_base_delay must be 0 or more seconds, got '-0.5'"),
        ("max_retry_after=inf", "-P max_retry_after must be 0 or more seconds, got 'inf'"),
    ],
)
def test_bad_request_options_are_one_line_errors(server, tmp_path, option, message):
    srv = server()
    proc = run_on(srv, tmp_path, "--limit", "2", "-P", option, "--out", tmp_path / "o")
    assert proc.returncode != 0 and message in proc.stderr and "Traceback" not in proc.stderr
    dry = run_on(srv, tmp_path, "--limit", "2", "-P", option, "--dry-run")  # refused as the run would be
    assert dry.returncode != 0 and message in dry.stderr and "Traceback" not in dry.stderr
    assert srv.stats.requests == 0


def test_the_timeout_and_retries_the_errors_name_are_set_with_p(server, tmp_path):
    srv = server(fault="hang", fail_first=10**6)
    proc = run_on(srv, tmp_path, "--limit", "1", "-P", "timeout=0.3", "-P", "max_retries=1", "--out", tmp_path / "o")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "did not answer within 0.3 s (2 attempts)" in proc.stderr and "-P timeout=SECONDS" in proc.stderr
    assert srv.stats.requests == 2
    scripted = run_cli("run", "jobs-lum", "--model", "scripted/echo", "-P", "timeout=5", "--out", tmp_path / "s")
    assert scripted.returncode != 0 and "model options (timeout) apply to openai/ models and anthropic/ models" in (
        scripted.stderr
    )


def hosted_env(srv: OpenAITestServer, tmp_path: Path) -> dict[str, str | None]:
    """No key or proxy of this machine, the test's cache, and ``srv`` as the server of ``openai/`` models (the
    commands below take no --base-url)."""
    return {
        **NO_KEYS,
        **{k.lower(): None for k in NO_KEYS},
        "BIASLAB_CACHE_DIR": str(tmp_path / "cache"),
        "BIASLAB_BASE_URL": srv.base_url,
    }


def test_suite_takes_the_request_options_the_errors_name(server, tmp_path):
    """The suite opens its models itself: -P and --max-concurrency reach them (one request at a time, given up
    after 2 attempts of 0.3 s), and the error names the options it took."""
    srv = server(fault="hang", fail_first=10**6)
    args = ["suite", "--model", "openai/test-model", "--probes", "jobs-lum", "--limit", "3", "-q"]
    proc = run_cli(
        *args,
        *("-P", "timeout=0.3", "-P", "max_retries=1", "--max-concurrency", "1", "--out", tmp_path / "o"),
        env=hosted_env(srv, tmp_path),
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "did not answer within 0.3 s (2 attempts)" in proc.stderr and srv.stats.requests == 2
    bad = run_cli(*args, "-P", "max_retries=-1", "--dry-run", env=hosted_env(srv, tmp_path))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "max_retries" in bad.stderr
    local = run_cli("suite", "--probes", "jobs-lum", "-P", "timeout=5", "--out", tmp_path / "l", "-q")
    assert local.returncode == 2 and "model options (timeout) apply to openai/ models" in local.stderr
    assert not (tmp_path / "l" / "results.json").exists() and srv.stats.requests == 2


def test_fsb_generate_and_predicate_extraction_take_the_request_options(server, tmp_path):
    srv = server(fault="hang", fail_first=10**6)
    opts = ("-P", "timeout=0.3", "-P", "max_retries=1", "--max-concurrency", "1")
    gen = run_cli(
        "fsb", "generate", "--model", "openai/test-model", "--limit", "2", *opts, "--out", tmp_path / "t.csv", "-q",
        env=hosted_env(srv, tmp_path),
    )  # fmt: skip
    assert gen.returncode != 0 and "Traceback" not in gen.stderr
    assert "did not answer within 0.3 s (2 attempts)" in gen.stderr and srv.stats.requests == 2
    ex = tmp_path / "ex"
    run_cli("wino", "predicate-example", ex, check=True)
    extract = run_cli(
        "wino", "extract-predicates", "--survey", ex / "survey.csv", "--per-response", "1", "--embedding", "none",
        "--model", "openai/test-model", *opts, "--out", tmp_path / "p.csv", "-q", env=hosted_env(srv, tmp_path),
    )  # fmt: skip
    assert extract.returncode != 0 and "Traceback" not in extract.stderr
    assert "did not answer within 0.3 s (2 attempts)" in extract.stderr and srv.stats.requests == 4
