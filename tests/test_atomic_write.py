"""Atomic writes: the temporary files of killed writers are removed by the next write (a live writer's kept),
a group of writes lands whole or not at all, and a write that cannot be made is one line naming the file."""

from __future__ import annotations

import subprocess
import sys

import pytest

from biaslab.errors import WriteError
from biaslab.io import all_or_nothing, atomic_write_text


def test_the_next_write_removes_the_temporary_files_of_killed_writers_only(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "60"])
    try:
        names = [
            f".results.json.{gone.pid}.k1l2ed34.tmp",  # its writer is gone: litter
            f".results.json.{alive.pid}.l1v3ab56.tmp",  # a writer still at work
            f".results.json.old.{gone.pid}.abcdefgh.tmp",  # another file's (results.json.old)
            ".results.json.notes",  # not a temporary file
        ]
        for name in names:
            (tmp_path / name).write_text("partial")
        atomic_write_text(tmp_path / "results.json", "{}\n")
    finally:
        alive.kill()
        alive.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["results.json", *names[1:]])
    assert (tmp_path / "results.json").read_text() == "{}\n"


def test_a_group_of_writes_lands_whole_or_not_at_all(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a")
    b.write_text("old b")
    with pytest.raises(RuntimeError), all_or_nothing():
        atomic_write_text(a, "new a")
        assert a.read_text() == "old a"  # renamed into place only when the block ends
        raise RuntimeError("the third file failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"] and a.read_text() == "old a"
    with all_or_nothing():
        atomic_write_text(a, "new a")
        atomic_write_text(b, "new b")
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_a_write_that_cannot_be_made_is_one_line_naming_the_file(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(WriteError) as caught:
        atomic_write_text(tmp_path / "file" / "sub" / "out.json", "{}")
    assert str(caught.value) == (
        f"cannot write {tmp_path / 'file' / 'sub' / 'out.json'}: {tmp_path / 'file'} is a file, not a folder; "
        "write to another folder"
    )
    with pytest.raises(WriteError, match="it is a folder; give a file name"):
        atomic_write_text(tmp_path, "{}")
