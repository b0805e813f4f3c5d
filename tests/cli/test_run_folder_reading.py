"""A damaged run folder is one line naming the file and what to do, for every command that reads one (`report`,
`compare`, `gate`, `suite --baseline`): results.json a directory or not UTF-8, attempts.jsonl not UTF-8, empty
beside its n_attempts, or every line twice. An answer with line breaks other than a newline is read back whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = requires_data
FIXES = (  # what each message ends in: rewrite the damaged file, or give the right folder
    "re-run the probe to rewrite it",
    "pass a run directory written by `biaslab run`",
    "give a run folder (`biaslab run --out`) or a suite folder (`biaslab suite --out`)",
)


def biaslab(*args, cache):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache)})


def results_a_directory(run: Path) -> tuple[Path, str]:
    (run / "results.json").unlink()
    (run / "results.json").mkdir()
    return run / "results.json", " is a directory, not the run's results.json; "


def results_not_utf8(run: Path) -> tuple[Path, str]:
    (run / "results.json").write_bytes(b"\xff\xfe{\x00}\x00")
    return run / "results.json", ", line 1: not UTF-8 text (invalid start byte at byte 0); "


def attempts_not_utf8(run: Path) -> tuple[Path, str]:
    lines = (run / "attempts.jsonl").read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"text": "', b'"text": "\xe9', 1)  # Latin-1, not UTF-8
    (run / "attempts.jsonl").write_bytes(b"\n".join(lines))
    return run / "attempts.jsonl", ", line 3: not UTF-8 text (invalid continuation byte at byte "


def attempts_empty(run: Path) -> tuple[Path, str]:
    (run / "attempts.jsonl").write_bytes(b"")
    return (
        run / "attempts.jsonl",
        " holds 0 attempts but results.json records 6; the run folder is incomplete or damaged",
    )


def attempts_twice(run: Path) -> tuple[Path, str]:
    text = (run / "attempts.jsonl").read_text()
    (run / "attempts.jsonl").write_text(text + text)
    first = json.loads(text.splitlines()[0])["item_id"]
    return run / "attempts.jsonl", f", line 7: the attempt of item {first!r}, prompt 0, repetition 0 is also on line 1"


DAMAGE = [results_a_directory, results_not_utf8, attempts_not_utf8, attempts_empty, attempts_twice]


@pytest.fixture(scope="module")
def suites(tmp_path_factory) -> tuple[Path, Path]:
    """A suite folder with one jobs-lum run of 6 items (scripted/he), and the response cache that answered it."""
    root = tmp_path_factory.mktemp("suites")
    proc = biaslab(
        "suite", "-m", "scripted/he", "--probes", "jobs-lum", "--limit", "6", "--out", root / "base", "-q",
        cache=root / "c",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return root / "base", root / "c"


def one_line(proc, path: Path, needle: str) -> None:
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}{needle}") and line.endswith(FIXES), line


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__ for d in DAMAGE])
def test_a_damaged_run_folder_is_one_line_for_every_reader(tmp_path, suites, damage):
    base, cache = suites
    suite = tmp_path / "base"
    shutil.copytree(base, suite)
    good, run = base / "runs" / "scripted_he" / "jobs-lum", suite / "runs" / "scripted_he" / "jobs-lum"
    path, needle = damage(run)
    for args in (("report", run), ("compare", good, run), ("gate", good, run)):
        one_line(biaslab(*args, cache=cache), path, needle)
    new = tmp_path / "new"
    proc = biaslab(
        "suite", "-m", "scripted/she", "--probes", "jobs-lum", "--limit", "6", "--baseline", suite, "--out", new,
        cache=tmp_path / "c",
    )  # fmt: skip
    one_line(proc, path, needle)
    assert not (tmp_path / "c").exists() and not new.exists()  # refused before any model call


def test_answers_with_other_line_breaks_are_read_back_whole(tmp_path, suites):
    base, cache = suites
    run = tmp_path / "run"
    shutil.copytree(base / "runs" / "scripted_he" / "jobs-lum", run)
    rows = [json.loads(line) for line in (run / "attempts.jsonl").read_text().split("\n") if line]
    rows[0]["text"] = "He is careful.\u2028Line two\u0085and three\u2029end"  # not escaped by json.dumps
    (run / "attempts.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    proc = biaslab("report", run, cache=cache)
    assert proc.returncode == 0, proc.stderr
    assert "Line two" in (run / "report.html").read_text()


def test_a_suite_run_again_rewrites_a_damaged_run_instead_of_reusing_it(tmp_path, suites):
    base, cache = suites
    suite = tmp_path / "suite"
    shutil.copytree(base, suite)
    run = suite / "runs" / "scripted_he" / "jobs-lum"
    attempts_twice(run)
    args = ("suite", "-m", "scripted/he", "--probes", "jobs-lum", "--limit", "6", "--out", suite, "-q")
    assert biaslab(*args, cache=cache).returncode == 0
    (entry,) = json.loads((suite / "results.json").read_text())["runs"]
    assert not entry["reused"] and entry["cache_hits"] == 6  # run again from the cache, no model call
    assert (run / "attempts.jsonl").read_bytes() == (
        base / "runs" / "scripted_he" / "jobs-lum" / "attempts.jsonl"
    ).read_bytes()
