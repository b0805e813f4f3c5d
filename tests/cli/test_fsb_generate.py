"""`biaslab fsb generate` end to end through the real CLI process (scripted backend)."""

import csv
import json
import os
import signal
import subprocess
import sys

import pytest

from tests.cli.test_run import biaslab
from tests.conftest import requires_data

pytestmark = requires_data


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_generate_writes_the_fsb_layout_and_resumes_from_the_cache(tmp_path):
    out = tmp_path / "texts.csv"
    args = [
        "fsb",
        "generate",
        "--model",
        "scripted/echo",
        "--limit",
        "12",
        "--seed-types",
        "explicit,implicit,neutral,random",
        "--out",
        out,
    ]
    first = biaslab(*args, cache=tmp_path / "c")
    rows = read_csv(out)
    assert len(rows) == 12
    assert list(rows[0])[:5] == ["uid", "prompt_type", "seed_type", "query", "response"]
    assert {"example_ids", "model"} <= set(rows[0])
    # --limit spreads over the 1,000-row plan and keeps the plan's uids
    assert [int(r["uid"]) for r in rows] == [1 + int(i * 1000 / 12) for i in range(12)]
    assert {r["seed_type"] for r in rows} == {"explicit", "implicit", "neutral", "random"}
    for r in rows:
        ids = r["example_ids"].split(";")
        assert len(ids) == 2 and all(":" in i for i in ids)
        if r["seed_type"] != "random":
            assert all(i.startswith(f"{r['seed_type']}_{r['prompt_type']}:") for i in ids)
        # the echo backend answers the prompt; the response is its first line: the system prompt
        assert r["response"] == r["raw_response"].strip().splitlines()[0]
        assert r["raw_response"].rstrip().endswith(r["query"])
        assert r["model"] == "echo"
    meta = json.loads((tmp_path / "texts.meta.json").read_text())
    assert meta["model"] == {"backend": "scripted", "model": "echo"}
    assert meta["parameters"]["generation"] == {"temperature": 0.0, "max_tokens": 100}
    assert meta["n_texts"] == 12 and meta["n_planned"] == 1000 and meta["run"]["model_calls"] == 12
    assert "fsb/seeds/explict_bias_seed.txt" in meta["data"] and "fsb/FSB_text.csv" in meta["data"]
    assert "12 texts of 1000 planned" in " ".join(first.stdout.split())

    again = biaslab(*args, cache=tmp_path / "c")
    assert json.loads((tmp_path / "texts.meta.json").read_text())["run"] == {
        **meta["run"],
        "model_calls": 0,
        "cache_hits": 12,
        "new_tokens": 0,
        "seconds": pytest.approx(0, abs=60),
    }
    assert read_csv(out) == rows and "cache hits 12" in " ".join(again.stdout.split())


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--seed-types", "explicit,spicy"], "unknown seed type(s) 'spicy'"),
        (["--prompt-type", "conversation"], "unknown --prompt-type 'conversation'"),
        (["--examples-dir", "NOWHERE"], "does not exist"),
        (["--random-examples", "all", "--seed-types", "random"], "unknown --random-examples"),
        (["--limit", "0"], "--limit must be a positive"),
    ],
)
def test_bad_input_is_one_line_and_overwrites_nothing(tmp_path, args, needle):
    out = tmp_path / "texts.csv"
    biaslab("fsb", "generate", "--model", "scripted/echo", "--limit", "2", "--out", out, cache=tmp_path / "c")
    before = out.read_text()
    args = [str(tmp_path / "missing-dir") if a == "NOWHERE" else a for a in args]
    proc = biaslab(
        "fsb", "generate", "--model", "scripted/echo", "--out", out, *args, cache=tmp_path / "c", check=False
    )
    assert proc.returncode != 0
    assert needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 3
    assert out.read_text() == before


def test_out_must_be_a_file(tmp_path):
    proc = biaslab("fsb", "generate", "--model", "scripted/echo", "--out", tmp_path, cache=tmp_path / "c", check=False)
    assert proc.returncode != 0 and "is a directory" in proc.stderr and "Traceback" not in proc.stderr


KILLED_AT_RENAME = """
import os, signal, sys
from biaslab.cli import main

real = os.replace

def replace(src, dst, *args, **kwargs):  # SIGKILL just before the metadata file is renamed into place
    if str(dst).endswith("texts.meta.json"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *args, **kwargs)

os.replace = replace
sys.argv = ["biaslab", *sys.argv[1:]]
main()
"""


def test_a_generate_killed_while_writing_leaves_no_temporary_file_after_the_next_run(tmp_path):
    out, cache = tmp_path / "texts.csv", tmp_path / "c"
    args = ["fsb", "generate", "--model", "scripted/echo", "--limit", "4", "--out", out, "-q"]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AT_RENAME, *map(str, args)],
        env={**os.environ, "BIASLAB_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [p.name for p in tmp_path.glob(".texts.meta.json.*.tmp")]  # what the killed process left
    again = biaslab(*args, cache=cache)
    assert again.returncode == 0 and "model calls 0" in " ".join(again.stdout.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "texts.csv", "texts.meta.json"]
