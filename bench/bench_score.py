"""Time `biaslab olympics score-annotated` with 10,000 permutations (target: < 10 s per model).

    BIASLAB_DATA_DIR=../shared/data python bench/bench_score.py [--permutations N] [--repeat R]

Prints the in-process time (read + validate + score: bootstrap CIs, permutation and binomial
tests, both the full and the without-unsure variant) for each shared model, and the wall time of
the whole CLI command (process start, imports, writing results) for one model.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 10.0
MODELS = ("gpt-4o-mini", "llama3.1-8b")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from biaslab.data import data_path
    from biaslab.probes.olympics.annotated import read_annotated
    from biaslab.probes.olympics.score import score_annotated

    worst = 0.0
    for model in MODELS:
        spec_path = data_path(f"olympics/annotated/specified/{model}.tsv")
        und_path = data_path(f"olympics/annotated/underspecified/{model}.tsv")
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            spec = read_annotated(spec_path, "specified")
            und = read_annotated(und_path, "underspecified")
            score_annotated(spec, und, n_permutations=args.permutations, seed=0)
            times.append(time.perf_counter() - t)
        best = min(times)
        worst = max(worst, max(times))
        print(f"score_annotated {model}: best {best:.2f} s, worst {max(times):.2f} s over {args.repeat} runs "
              f"({args.permutations} permutations)")

    with tempfile.TemporaryDirectory() as tmp:
        model = MODELS[0]
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "biaslab.cli", "olympics", "score-annotated",
             "--specified", str(data_path(f"olympics/annotated/specified/{model}.tsv")),
             "--underspecified", str(data_path(f"olympics/annotated/underspecified/{model}.tsv")),
             "--out", str(Path(tmp) / "out"), "--permutations", str(args.permutations)],
            capture_output=True, text=True)
        cli = time.perf_counter() - t
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
    print(f"biaslab olympics score-annotated {model} (CLI, end to end): {cli:.2f} s")
    ok = max(worst, cli) < TARGET_S
    print(f"target < {TARGET_S:.0f} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
