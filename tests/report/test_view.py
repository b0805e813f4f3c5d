"""`biaslab view`: one HTML page holding every attempt of the runs given, their readings and why an attempt went
undetected; hostile answers are data, never markup; bad input is one line. (The page in Chromium:
tests/report/test_view_browser.py.)"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from collections import Counter
from html import unescape
from pathlib import Path

import pytest

from biaslab.report.transcripts import CUT_OFF, EMPTY, NO_DECISION, NOT_READ, REFUSAL, reading, undetected_reason
from tests.conftest import requires_data
from tests.report.view_runs import CLOSER, HOSTILE, make_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    return make_runs(tmp_path_factory.mktemp("view-runs"))


def page_data(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert block is not None
    return json.loads(block.group(1))


def attempts(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "attempts.jsonl").read_text(encoding="utf-8").splitlines()]


@requires_data
def test_every_attempt_of_both_runs_with_its_reading_reason_and_groups(runs, cli, tmp_path):
    levy, jobs = runs
    out = tmp_path / "t.html"
    proc = cli("view", levy, jobs, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wrote {out}"
    data = page_data(out.read_text(encoding="utf-8"))
    assert [(r["label"], r["model"], r["probe"], r["n"]) for r in data["runs"]] == [
        ("relationship-levy", "levy_a", "relationship-levy", 14),
        ("jobs-lum", "jobs_b", "jobs-lum", 5),
    ]
    assert len(data["rows"]) == 19
    for k, run in enumerate(runs):
        shown = [r for r in data["rows"] if r["r"] == k]
        written = attempts(run)
        expected = Counter("undetected" if a["evaluation"] is None else a["evaluation"] for a in written)
        assert Counter(r["d"] for r in shown) == expected
        assert [r["t"] for r in shown] == [a["text"] for a in written]
        assert [data["prompts"][r["p"]] for r in shown] == [a["prompt"] for a in written]
    counts = json.loads((levy / "results.json").read_text(encoding="utf-8"))["details"]["counts"]
    levy_rows = [r for r in data["rows"] if r["r"] == 0]
    assert Counter(r["d"] for r in levy_rows) == {("undetected" if k == "None" else k): n for k, n in counts.items()}
    assert Counter(r["w"] for r in levy_rows if r["w"]) == {NOT_READ: 2, EMPTY: 2, CUT_OFF: 2}
    assert [r["w"] for r in data["rows"] if r["r"] == 1] == [None, None, NOT_READ, None, None]
    for r, a in zip(data["rows"][14:], attempts(jobs), strict=True):  # jobs-lum's groups: its occupation
        assert [data["groups"][g] for g in r["g"]] == [f"job: {a['job']}"]
        assert r["x"]["stereotype_score"] == str(a["stereotype_score"])
    assert all(
        f"scenario: {a['scenario']}" in [data["groups"][g] for g in r["g"]] for r, a in zip(levy_rows, attempts(levy))
    )


@requires_data
def test_hostile_answers_are_data_and_only_the_page_s_own_script_may_run(runs, cli, tmp_path):
    out = tmp_path / "t.html"
    assert cli("view", *runs, "-o", out).returncode == 0
    html = out.read_text(encoding="utf-8")
    assert HOSTILE not in html and "</textarea>" not in html and "<img" not in html
    assert html.count("<script") == 2 and html.count("</script>") == 2  # the data block and the page's script
    texts = [r["t"] for r in page_data(html)["rows"]]
    assert sum(t.startswith(HOSTILE) for t in texts) == 3 and sum(t.startswith(CLOSER) for t in texts) == 2
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1))
    assert f"script-src 'sha256-{digest}';" in policy and "default-src 'none'" in policy
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script


@requires_data
def test_without_out_the_page_goes_into_the_first_run_s_folder(runs, cli):
    levy, jobs = runs
    proc = cli("view", jobs, levy, jobs)  # the same run twice is shown once
    assert proc.returncode == 0, proc.stderr
    page = jobs / "transcripts.html"
    assert proc.stdout.strip() == f"wrote {page}"
    assert len(page_data(page.read_text(encoding="utf-8"))["rows"]) == 19
    assert [p.name for p in jobs.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    page.unlink()


@requires_data
def test_bad_input_is_one_line_and_a_non_zero_exit(runs, cli, tmp_path):
    levy, _ = runs
    bare = shutil.copytree(levy, tmp_path / "bare")
    (bare / "attempts.jsonl").unlink()
    (tmp_path / "empty").mkdir()
    (tmp_path / "folder.html").mkdir()
    cases = {
        (tmp_path / "empty",): f"error: {tmp_path / 'empty' / 'results.json'} does not exist; pass a run directory",
        (tmp_path / "nowhere",): f"error: {tmp_path / 'nowhere'} is not a folder; pass run folders",
        (levy, bare): f"error: {bare / 'attempts.jsonl'} is missing, so there are no attempts to show",
        (levy, "-o", tmp_path / "folder.html"): f"error: --out {tmp_path / 'folder.html'} is a directory",
    }
    for args, start in cases.items():
        proc = cli("view", *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith(start), line
    assert not (levy / "transcripts.html").exists()


def test_readings_and_the_reasons_an_attempt_records():
    assert [reading(v) for v in (None, "male", True, 2, 0.25, {"gold": ["USA"]})] == [
        "undetected", "male", "true", "2", "score", "detected",
    ]  # fmt: skip
    stop = {"text": "Hmm.", "finish_reason": "stop"}
    assert undetected_reason(stop) == NOT_READ
    assert undetected_reason({**stop, "text": " \n"}) == EMPTY
    assert undetected_reason({**stop, "finish_reason": "length"}) == CUT_OFF
    assert undetected_reason({**stop, "finish_reason": "content_filter"}) == "stopped: content_filter"
    assert undetected_reason({**stop, "finish_reason": "length", "refusal": True}) == REFUSAL
    assert undetected_reason({"text": "", "score_more": -3.0, "score_less": -3.0}) == NO_DECISION
