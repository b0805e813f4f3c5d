"""Wall time of a fully cached re-run, and of `biaslab report` / `biaslab compare` (no model load).

    .venv/bin/python bench/bench_cached_rerun.py [--cache-dir DIR] [--repeats 5]

Runs the README quickstart (`biaslab run jobs-lum --limit 20 --repetitions 2`) once to fill the
cache (skipped when the cache already answers it), then times the same command again in fresh
processes, Python start-up included, and checks that it made zero model calls. Target: under 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUICKSTART = ["run", "jobs-lum", "--limit", "20", "--repetitions", "2", "-q"]


def biaslab(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    exe = Path(sys.executable).with_name("biaslab")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "biaslab.cli"]
    start = time.perf_counter()
    proc = subprocess.run(cmd + args, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"biaslab {' '.join(args)} failed:\n{proc.stderr}")
    return wall, proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache-dir", type=Path, default=None, help="response cache to use (default: a new temp dir)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cached-"))
    cache = args.cache_dir or work / "cache"
    env = {**os.environ, "BIASLAB_CACHE_DIR": str(cache)}
    env.setdefault("BIASLAB_DATA_DIR", str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))

    wall, _ = biaslab(QUICKSTART + ["--out", str(work / "first")], env)
    first = json.loads((work / "first" / "results.json").read_text())["run"]
    print(f"first run: {wall:.1f} s wall, {first['model_calls']} model calls, {first['cache_hits']} cache hits")

    def timed(label: str, make_args) -> None:
        walls = []
        for i in range(args.repeats):
            wall, proc = biaslab(make_args(i), env)
            walls.append(wall)
        print(f"{label}: median {statistics.median(walls):.2f} s, max {max(walls):.2f} s over {args.repeats} runs")

    timed("cached re-run", lambda i: QUICKSTART + ["--out", str(work / f"again{i}")])
    again = json.loads((work / "again0" / "results.json").read_text())["run"]
    print(f"  cached re-run: {again['model_calls']} model calls, {again['cache_hits']} cache hits")
    if again["model_calls"]:
        raise SystemExit("the re-run called the model")
    timed("report", lambda i: ["report", str(work / "again0")])
    timed("compare", lambda i: ["compare", str(work / "first"), str(work / "again0")])
    print(f"load average: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
