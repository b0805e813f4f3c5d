"""`biaslab suite` stopped part way (Ctrl-C, SIGTERM): a partial card of the runs finished, exit 130 with one line,
and the same command finishing it; the progress line and the suite's ETA (scripted models)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest
from rich.console import Console

import biaslab.suite.run as suite_run
from biaslab.suite.progress import PlannedRun, SuiteProgress
from tests.cli_runner import run_cli
from tests.conftest import requires_data, wait_for_cached_answers

MODELS = ["--model", "scripted/he", "--model", "scripted/coin"]
PROBES = ["--probes", "crows-pairs", "--probes", "direct"]  # two probes quick to run and score


def suite_args(out, *more):
    return ["suite", *MODELS, *PROBES, "--limit", "4", "--out", out, *more]


def stop_at(monkeypatch, call: int, after_answers: int | None = None):
    """The suite's ``call``-th probe run stops with KeyboardInterrupt: at once, or (``after_answers``) once that
    many of its requests are answered (and cached), as Ctrl-C stops a run part way."""
    real, seen = suite_run.run_one, []

    def run_one(*args, **kwargs):
        seen.append(args[0].name)
        if len(seen) != call:
            return real(*args, **kwargs)
        if after_answers is None:
            raise KeyboardInterrupt
        answered = []

        def stop(index, result, from_cache):
            answered.append(from_cache)
            if len(answered) == after_answers:
                raise KeyboardInterrupt

        return real(*args[:6], stop, **kwargs)

    monkeypatch.setattr(suite_run, "run_one", run_one)
    return seen


def interrupted_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@requires_data
def test_ctrl_c_writes_a_partial_card_and_the_same_command_finishes_it(tmp_path, monkeypatch):
    out, env = tmp_path / "suite", {"BIASLAB_CACHE_DIR": str(tmp_path / "c")}
    stop_at(monkeypatch, call=4, after_answers=2)  # coin's direct run stopped after 2 of its 4 answers
    first = run_cli(*suite_args(out, "-q"), env=env)
    assert first.returncode == 130
    assert interrupted_line(first.stderr) == (
        f"interrupted: suite stopped with 3 of 4 probe runs finished; wrote a partial card to {out / 'report.html'}; "
        "run the same command again to finish it (finished runs are reused)"
    )
    assert first.stdout.splitlines()[0] == "suite: 4 probe runs (2 probes x 2 models), 24 requests"
    res = json.loads((out / "results.json").read_text())
    assert res["partial"] is True and res["missing"] == [{"model": "scripted/coin", "probe": "direct"}]
    assert [(r["model"], r["probe"]) for r in res["runs"]] == [
        ("scripted/he", "crows-pairs"),
        ("scripted/he", "direct"),
        ("scripted/coin", "crows-pairs"),
    ]
    assert [c["probe"] for c in res["comparisons"]] == ["crows-pairs"]  # direct is not finished on every model
    assert res["runs"][0]["covers"].startswith("4 pairs")  # what each run covered
    assert not (out / "runs" / "scripted_coin" / "direct").exists()  # the run stopped part way is not written
    page = (out / "report.html").read_text()
    assert "Partial: 3 of 4 probe runs finished; run the same command again to finish." in page
    assert page.index("Partial: 3 of 4") < page.index("Marks at a glance")  # near the top
    assert "not run (the suite was stopped before it)" in page and "Paired comparisons" in page
    assert "only the probes finished on every model" in page

    monkeypatch.undo()
    again = run_cli(*suite_args(out, "-q"), env=env, check=True)
    assert "; 3 finished in --out earlier, reused unless changed" in again.stdout.splitlines()[0]
    done = json.loads((out / "results.json").read_text())
    assert done["partial"] is False and "missing" not in done
    assert [(r["probe"], r["reused"], r["model_calls"]) for r in done["runs"]] == [
        ("crows-pairs", True, 0),
        ("direct", True, 0),
        ("crows-pairs", True, 0),
        ("direct", False, 2),
    ]
    assert done["runs"][3]["cache_hits"] == 2  # the answers the stopped run got, from the cache
    assert [r["value"] for r in done["runs"][:3]] == [r["value"] for r in res["runs"]]
    assert [c["probe"] for c in done["comparisons"]] == ["crows-pairs", "direct"]
    page = (out / "report.html").read_text()
    assert "Partial:" not in page and "not run" not in page


@requires_data
def test_a_partial_suite_of_other_settings_is_refused_and_a_partial_suite_is_not_gated(tmp_path, monkeypatch):
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "c")}
    base, out = tmp_path / "base", tmp_path / "suite"
    run_cli("suite", "--model", "scripted/he", "--probes", "direct", "--limit", "4", "--out", base, "-q", env=env)
    stop_at(monkeypatch, call=2)
    args = ["suite", "--model", "scripted/coin", *PROBES, "--limit", "4", "--out", out, "--baseline", base, "-q"]
    stopped = run_cli(*args, env=env)
    assert stopped.returncode == 130 and "1 of 2 probe runs finished" in interrupted_line(stopped.stderr)
    res = json.loads((out / "results.json").read_text())
    assert "gates" not in res and res["gates_skipped"] == (
        "Not gated against the baseline: the suite is partial (1 of 2 probe runs finished); run the same "
        "command again to finish it and gate it."
    )
    assert res["gates_skipped"] in (out / "report.html").read_text()
    monkeypatch.undo()

    other = run_cli(*[a if a != "4" else "5" for a in args], env=env)  # --limit 5 into the partial suite of 4
    assert other.returncode == 2 and other.stderr.strip().splitlines() == [
        f"error: --out {out} already holds a partial suite (stopped before its end) with other settings "
        "(limit: 4 there, 5 here); give another --out, or add --overwrite to replace it"
    ]
    assert json.loads((out / "results.json").read_text()) == res  # kept as it was
    as_baseline = run_cli("suite", "--model", "scripted/he", "--probes", "direct", "--limit", "4", "--out",
                          tmp_path / "third", "--baseline", out, "-q", env=env)  # fmt: skip
    assert as_baseline.returncode == 2 and as_baseline.stderr.strip().splitlines() == [
        f"error: --baseline {out} is a partial suite (1 of 2 probe runs finished); finish it first by running "
        "its command again"
    ]
    finished = run_cli(*args, env=env, check=True)  # the same command: finished, and gated now
    res = json.loads((out / "results.json").read_text())
    assert res["partial"] is False and len(res["gates"]) == 1 and "gates_skipped" not in res
    assert "against the baseline: " in finished.stdout


@requires_data
def test_sigterm_takes_the_same_path_and_exits_143(tmp_path, monkeypatch):
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        pytest.skip("SIGTERM is handled by this test process: the suite leaves it alone")
    real, calls = suite_run.run_one, []

    def run_one(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # raises in this (the main) thread, as Ctrl-C would
        return real(*args, **kwargs)

    monkeypatch.setattr(suite_run, "run_one", run_one)
    out = tmp_path / "suite"
    proc = run_cli(*suite_args(out, "-q"), env={"BIASLAB_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 143 and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored
    assert interrupted_line(proc.stderr).startswith(
        "interrupted: suite terminated (SIGTERM) with 1 of 4 probe runs finished; wrote a partial card"
    )
    assert json.loads((out / "results.json").read_text())["partial"] is True


def _as_from_a_shell() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


@requires_data
def test_ctrl_c_on_a_real_process_writes_a_partial_card_and_exits_130(tmp_path):
    out, cache = tmp_path / "suite", tmp_path / "c"
    args = ["suite", "--model", "scripted/he:delay=0.03", "--probes", "direct", "--probes", "crows-pairs"]
    args += ["--limit", "20", "--out", out]  # progress shown (plain lines: not a terminal)
    # 20 answers of direct, then 40 of crows-pairs, 30 ms each: Ctrl-C after 25, with a second of answers left
    proc = subprocess.Popen(
        [sys.executable, "-m", "biaslab.cli", *map(str, args)],
        env={**os.environ, "BIASLAB_CACHE_DIR": str(cache)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_shell,  # SIGINT at its default, as a shell starts it
    )
    done = wait_for_cached_answers(cache, 25, timeout=60)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (done, stderr)
    assert interrupted_line(stderr) == (
        f"interrupted: suite stopped with 1 of 2 probe runs finished; wrote a partial card to {out / 'report.html'}; "
        "run the same command again to finish it (finished runs are reused)"
    )
    res = json.loads((out / "results.json").read_text())
    assert res["partial"] is True and [r["probe"] for r in res["runs"]] == ["direct"], done
    assert res["missing"] == [{"model": "scripted/he:delay=0.03", "probe": "crows-pairs"}]
    assert stdout.startswith("suite: 2 probe runs (2 probes x 1 model), 60 requests\n")
    assert "probe 2/2: crows-pairs on scripted/he:delay=0.03 · elapsed " in stdout and " · suite ETA " in stdout
    assert "Partial: 1 of 2 probe runs finished" in (out / "report.html").read_text()

    run_cli(*args, "-q", env={"BIASLAB_CACHE_DIR": str(cache)}, check=True)  # the same command finishes it
    res = json.loads((out / "results.json").read_text())
    assert res["partial"] is False and [r["reused"] for r in res["runs"]] == [True, False]
    crows = res["runs"][1]
    assert crows["cache_hits"] >= done - 20 and crows["cache_hits"] + crows["model_calls"] == 40


def test_the_eta_is_the_estimate_until_the_suite_has_its_own_rate(monkeypatch):
    now = [100.0]
    monkeypatch.setattr("biaslab.suite.progress.time.monotonic", lambda: now[0])
    out = io.StringIO()
    plan = [PlannedRun("m", "a", 10), PlannedRun("m", "b", 10, done_before=True), PlannedRun("m", "c", 20)]
    tracker = SuiteProgress(plan, {"a": 30.0, "c": 60.0}, Console(file=out, width=200), enabled=True)
    assert tracker.summary() == (
        "suite: 3 probe runs (3 probes x 1 model), 40 requests; 1 finished in --out earlier, reused unless changed"
    )
    with tracker.shown():  # not a terminal: a plain line as each run starts
        tracker.start_run(0, reused=False)
        assert tracker.eta() == (90.0, True)  # a's 30 s and c's 60 s (b is most likely reused)
        for _ in range(4):
            tracker.answer(0, None, from_cache=False)
        tracker.answer(0, None, from_cache=True)  # a cache hit: not a model call
        assert tracker.eta() == (30.0 / 2 + 60.0, True)  # 4 calls: still the estimate, half of a's run left
        now[0] += 2.0
        tracker.answer(0, None, from_cache=False)  # 5 model calls in 2 s: 0.4 s each, 4 + 20 requests left
        assert tracker.eta() == (pytest.approx(0.4 * 24), False)
        tracker.finish_run()
        tracker.start_run(1, reused=True)
        tracker.finish_run()
    assert out.getvalue().splitlines() == [
        "probe 1/3: a on m · elapsed 0:00:00 · suite ETA 0:01:30 (estimated)",
        "probe 2/3: b on m: finished earlier, reused",
    ]
    unknown = SuiteProgress([PlannedRun("m", "a", 10)], None, Console(file=io.StringIO()), enabled=True)
    unknown.start_run(0, reused=False)
    assert unknown.eta() == (None, False) and unknown.eta_text() == "suite ETA: known after a few model calls"
    quiet = io.StringIO()
    silent = SuiteProgress(plan, None, Console(file=quiet), enabled=False)
    with silent.shown():
        silent.start_run(0, reused=False)
    assert quiet.getvalue() == ""


@requires_data
def test_a_tiny_limit_plans_and_estimates_every_gender_probe(tmp_path):
    """`--limit 2` on the gender suite: a probe that shares its items among sources (direct's three) gives some
    source none, instead of dividing by zero; the dry run plans every probe."""
    from biaslab.probing.core import spread_subset

    assert spread_subset(list(range(10)), 0) == [] and spread_subset(list(range(10)), 3) == [0, 3, 6]
    proc = run_cli("suite", "--probes", "gender", "--model", "scripted/he", "--limit", "2", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "direct on scripted/he" in proc.stdout
    from biaslab.data.availability import is_here

    if not is_here("gest/gest.csv"):  # a member left out says how to include it
        assert "left out gest: its data (gest/gest.csv) is not available offline (looked in " in proc.stdout
        assert "`biaslab run gest -m scripted/he --limit 2`" in proc.stdout
