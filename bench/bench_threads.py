"""Local models on a busy machine: wall time, CPU time and tokens/s with 0, 1, 2, ... busy background processes.

    python bench/bench_threads.py run          # `biaslab run jobs-lum --limit 2 --repetitions 1`, whole processes
    python bench/bench_threads.py quickstart   # `biaslab run jobs-lum --limit 20 --repetitions 2`
    python bench/bench_threads.py engine       # the engine's decoding alone (bench_generate.py), 2 requests
    python bench/bench_threads.py engine --requests 1 --static    # one sequence, and transformers' generate too
    python bench/bench_threads.py run --loads 0 2 4 --threads auto 1 2 --reps 3

Each background process is ``python -c "while True: pass"`` (one busy core's worth of demand). For every load the
settings (``--threads``: ``auto`` is biaslab's own choice, a number pins ``BIASLAB_THREADS``) are alternated
``--reps`` times (A B A B), so a slow spell of the machine hits each. ``run``/``quickstart`` time whole ``biaslab``
processes on the embedded SmolLM2 (converted before the clock starts) with a fresh response cache each; ``engine``
times generation inside one process, the model loaded and warmed up first. Prints one line per measurement and a
table of medians: wall seconds, CPU seconds (the child's user + system), tokens/s where known, and the ratio to
the quiet wall time of the same setting.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = {
    "run": ["run", "jobs-lum", "--limit", "2", "--repetitions", "1"],
    "quickstart": ["run", "jobs-lum", "--limit", "20", "--repetitions", "2"],
}


def busy(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def env_for(threads: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "BIASLAB_THREADS")}
    env["PYTHONPATH"] = str(REPO / "src")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as biaslab sets it (bench_generate.py imports torch first)
    if threads != "auto":
        env["BIASLAB_THREADS"] = threads
    return env


def measure_cli(mode: str, threads: str, model: str) -> tuple[float, float, float | None, str]:
    """(wall s, CPU s, tokens/s, threads as recorded) of one whole ``biaslab`` process with a fresh cache."""
    import json

    with tempfile.TemporaryDirectory(prefix="biaslab-bench-") as tmp:
        cmd = [sys.executable, "-m", "biaslab.cli", *COMMANDS[mode], "--model", model, "-q",
               "--cache-dir", f"{tmp}/cache", "--out", f"{tmp}/out"]  # fmt: skip
        cpu0, t0 = child_cpu(), time.perf_counter()
        proc = subprocess.run(cmd, env=env_for(threads), capture_output=True, text=True)
        wall, cpu = time.perf_counter() - t0, child_cpu() - cpu0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        run = json.loads(Path(f"{tmp}/out/results.json").read_text())["run"]
        chosen = run.get("threads", {})
        tokens = run.get("new_tokens")
        return wall, cpu, (tokens / wall if tokens else None), str(chosen.get("torch_threads", "?"))


def measure_engine(threads: str, requests: int, max_tokens: int, static: bool) -> tuple[float, float, float, str]:
    """(seconds generating, CPU s of the whole process, tokens/s, threads) from bench_generate.py."""
    cmd = [sys.executable, str(REPO / "bench" / "bench_generate.py"), "--requests", str(requests),
           "--max-tokens", str(max_tokens), "--rounds", "1", "--show", "0",
           "--engine", "static" if static else "continuous"]  # fmt: skip
    if static:
        cmd += ["--batch-size", str(requests)]
    cpu0 = child_cpu()
    proc = subprocess.run(cmd, env=env_for(threads), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    m = re.search(r"^\s+all\s+\S+\s+(\d+)\s+([\d.]+)\s+([\d.]+)", proc.stdout, re.M)
    t = re.search(r"torch threads (\d+)", proc.stdout)
    assert m and t, proc.stdout
    return float(m.group(2)), child_cpu() - cpu0, float(m.group(3)), t.group(1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["run", "quickstart", "engine"])
    ap.add_argument("--loads", type=int, nargs="+", default=[0, 1, 2], help="busy background processes")
    ap.add_argument("--threads", nargs="+", default=["auto", "1", "2"], help="auto, or a thread count to pin")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--requests", type=int, default=2, help="engine: requests in flight")
    ap.add_argument("--max-tokens", type=int, default=100, help="engine: new tokens per request")
    ap.add_argument("--static", action="store_true", help="engine: also transformers' generate (static batch)")
    args = ap.parse_args(argv)
    if args.mode != "engine":  # the conversion is not what is timed
        subprocess.run([sys.executable, "-c", f"from biaslab.models.registry import load_model; "
                        f"load_model({args.model!r}).backend()"], env=env_for("1"), check=True)  # fmt: skip
    settings = [(t, False) for t in args.threads] + ([(t, True) for t in args.threads] if args.static else [])
    rows: dict[tuple[int, str, bool], list[tuple[float, float, float | None, str]]] = {}
    print(f"{'load':>4} {'threads':>7} {'what':<10} {'wall s':>7} {'CPU s':>7} {'tok/s':>7}  used")
    for load in args.loads:
        others = busy(load)
        try:
            time.sleep(1.0 if load else 0.0)
            for _ in range(args.reps):
                for threads, static in settings:
                    if args.mode == "engine":
                        got = measure_engine(threads, args.requests, args.max_tokens, static)
                    else:
                        got = measure_cli(args.mode, threads, args.model)
                    rows.setdefault((load, threads, static), []).append(got)
                    what = "generate" if static else ("engine" if args.mode == "engine" else args.mode)
                    rate = f"{got[2]:7.1f}" if got[2] else f"{'-':>7}"
                    print(f"{load:>4} {threads:>7} {what:<10} {got[0]:7.1f} {got[1]:7.1f} {rate}  {got[3]}", flush=True)
        finally:
            for p in others:
                p.kill()
                p.wait()
    print("\nmedians (x quiet: the wall time against the same setting with no background load)")
    print(f"{'load':>4} {'threads':>7} {'what':<10} {'wall s':>7} {'CPU s':>7} {'tok/s':>7} {'x quiet':>8}")
    for (load, threads, static), got in rows.items():
        wall = statistics.median(g[0] for g in got)
        cpu = statistics.median(g[1] for g in got)
        rates = [g[2] for g in got if g[2]]
        quiet = rows.get((0, threads, static))
        ratio = wall / statistics.median(g[0] for g in quiet) if quiet else float("nan")
        rate = f"{statistics.median(rates):7.1f}" if rates else f"{'-':>7}"
        what = "generate" if static else ("engine" if args.mode == "engine" else args.mode)
        print(f"{load:>4} {threads:>7} {what:<10} {wall:7.1f} {cpu:7.1f} {rate} {ratio:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
