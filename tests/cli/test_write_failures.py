"""Every write that cannot be made (a full disk, the file size limit, a path through a file) is one line, exit 2,
and leaves what was written before as it was: runs, suites, `report`, `compare --out`, `gate --junit`, and the
response cache (scripted models)."""

from __future__ import annotations

import errno
import os
import resource
import signal
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from biaslab.errors import CacheError
from biaslab.models.cache import ResponseCache
from tests.cli_runner import biaslab_process, run_cli
from tests.conftest import requires_data
from tests.tmpfs import tmpfs

pytestmark = requires_data
NO_SPACE = "the disk is full (no space left on device); free space on it and run again"
KEPT = "the answers are cached, so the same command again makes no model calls"


def biaslab(*args, cache):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache)})


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (temporary ones included) and its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def disk_full_at(monkeypatch):
    """``disk_full_at("report.html")``: from now on, writing a file of that name fails as on a full disk (when the
    data is flushed to it), every other write works."""

    def fill(name: str) -> None:
        real = os.fsync

        def fsync(fd: int) -> None:
            if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(f".{name}."):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real(fd)

        monkeypatch.setattr(os, "fsync", fsync)

    return fill


def test_a_run_on_a_full_disk_is_one_line_and_keeps_the_earlier_run(tmp_path, disk_full_at):
    out, cache = tmp_path / "run", tmp_path / "c"
    assert biaslab("run", "jobs-lum", "-m", "scripted/he", "-n", "4", "--out", out, "-q", cache=cache).returncode == 0
    before = files(out)
    disk_full_at("report.html")  # the last file of the run: attempts.jsonl and results.json were written
    args = ("run", "jobs-lum", "-m", "scripted/she", "-n", "4", "--out", out, "-q", "--overwrite")
    full = biaslab(*args, cache=cache)
    assert full.returncode == 2 and full.stderr.strip().splitlines() == [
        f"error: cannot write {out / 'report.html'}: {NO_SPACE}; {KEPT}"
    ]
    assert files(out) == before  # no file of the new run, no temporary file left


def test_a_suite_on_a_full_disk_is_one_line(tmp_path, disk_full_at):
    out = tmp_path / "suite"
    disk_full_at("results.json")
    proc = biaslab(
        "suite", "-m", "scripted/he", "--probes", "jobs-lum", "--limit", "4", "--out", out, "-q", cache=tmp_path / "c"
    )
    run_dir = out / "runs" / "scripted_he" / "jobs-lum"
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: cannot write {run_dir / 'results.json'}: {NO_SPACE}; {KEPT}"
    ]
    assert files(out) == {}  # the run's other files are not written without it


def test_report_compare_and_gate_outputs_that_cannot_be_written_are_one_line(tmp_path, disk_full_at):
    cache = tmp_path / "c"
    a, b = tmp_path / "a", tmp_path / "b"
    for out, model in ((a, "scripted/he"), (b, "scripted/random-gender")):
        assert biaslab("run", "jobs-lum", "-m", model, "-n", "6", "--out", out, "-q", cache=cache).returncode == 0
    (tmp_path / "file").write_text("not a folder")
    blocked = tmp_path / "file" / "sub"
    for args, path in (
        (("compare", a, b, "--out", blocked / "cmp.md"), blocked / "cmp.md"),
        (("gate", a, b, "--junit", blocked / "gate.xml"), blocked / "gate.xml"),
    ):
        proc = biaslab(*args, cache=cache)
        assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1:] == [
            f"error: cannot write {path}: {tmp_path / 'file'} is a file, not a folder; write to another folder"
        ], proc.stderr
        assert "Traceback" not in proc.stderr
    before = files(a)
    disk_full_at("report.html")
    proc = biaslab("report", a, cache=cache)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: cannot write {a / 'report.html'}: {NO_SPACE}"
    ]
    assert files(a) == before
    disk_full_at("cmp.md")
    proc = biaslab("compare", a, b, "--out", tmp_path / "cmp.md", cache=cache)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == (
        f"error: cannot write {tmp_path / 'cmp.md'}: {NO_SPACE}"
    )


def test_a_run_on_a_really_full_disk_keeps_the_earlier_run(tmp_path):
    cache = tmp_path / "c"
    with tmpfs(tmp_path / "disk", "size=256k") as disk:
        out = disk / "run"
        small = biaslab("run", "jobs-lum", "-m", "scripted/he", "-n", "3", "--out", out, "-q", cache=cache)
        assert small.returncode == 0, small.stderr
        before = files(out)
        big = biaslab(
            "run", "jobs-lum", "-m", "scripted/echo", "-n", "200", "--out", out, "-q", "--overwrite", cache=cache
        )
        assert big.returncode == 2 and "Traceback" not in big.stderr
        (line,) = big.stderr.strip().splitlines()
        assert line.startswith(f"error: cannot write {out}/") and line.endswith(f"{NO_SPACE}; {KEPT}")
        assert files(out) == before


def test_a_run_over_the_file_size_limit_is_one_line_and_keeps_the_earlier_run(tmp_path):
    out, cache = tmp_path / "run", tmp_path / "c"
    args = ("run", "jobs-lum", "-m", "scripted/echo", "-n", "60", "--out", out, "-q")
    assert biaslab(*args, cache=cache).returncode == 0  # the answers are cached: the limited run only reads them
    before = files(out)
    sizes = {name: len(data) for name, data in before.items()}
    limit = sizes["report.html"] - 1024
    assert limit > max(sizes["attempts.jsonl"], sizes["results.json"], 32768)  # only the report is too large

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process

    proc = biaslab_process(*args, env={"BIASLAB_CACHE_DIR": cache}, preexec_fn=limited)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: cannot write {out / 'report.html'}: it would exceed the file size limit (ulimit -f); raise the "
        f"limit (ulimit -f unlimited) and run again; {KEPT}"
    ]
    assert files(out) == before


def test_a_response_cache_on_a_full_disk_says_to_free_space_never_to_delete_it(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")

    class FullDisk:
        def execute(self, *args):
            exc = sqlite3.OperationalError("database or disk is full")
            exc.sqlite_errorcode = sqlite3.SQLITE_FULL
            raise exc

    real, cache._db = cache._db, FullDisk()
    try:
        with pytest.raises(CacheError) as caught:
            cache.put("key", "generate", "m", "{}")
    finally:
        cache._db = real
        cache.close()
    message = str(caught.value)
    assert "its disk is full" in message and "free space on it" in message and "\n" not in message
    assert "delete" not in message and "the answers cached so far are kept" in message


def test_a_run_whose_cache_disk_fills_up_keeps_the_answers_and_says_to_free_space(tmp_path):
    with tmpfs(tmp_path / "disk", "size=200k") as disk:
        proc = biaslab(
            "run", "jobs-lum", "-m", "scripted/echo", "-n", "200", "--out", tmp_path / "run", "-q", cache=disk
        )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith(
            f"error: cannot write to the response cache {disk / 'responses.sqlite'}: its disk is full"
        )
        assert "free space on it" in line and "delete" not in line
        with closing(sqlite3.connect(disk / "responses.sqlite")) as db:
            assert db.execute("select count(*) from responses").fetchone()[0] > 0  # the answers it had are kept


def test_a_full_disk_met_outside_biaslab_own_writes_is_one_line(tmp_path, monkeypatch):
    from biaslab.app import execute

    def library_write(*args, **kwargs):  # e.g. a library writing its own cache file
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "lib" / "cache.bin"))

    monkeypatch.setattr(execute, "write_run", library_write)
    proc = biaslab("run", "jobs-lum", "-m", "scripted/he", "-n", "2", "--out", tmp_path / "run", "-q", cache=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"error: cannot write {tmp_path / 'lib' / 'cache.bin'}: {NO_SPACE}"
    ]
