"""Time the best-worst scaling toolkit.

    BIASLAB_DATA_DIR=../shared/data python bench/bench_bws.py [--repeat R] [--big N] [--skip-big]

* score: read + validate + count the 5,360 released FSB annotations, plus 100 split-half
  reliability trials (target < 3 s);
* design N = 1,000 items, 100 attempts (target < 5 s);
* design N = 100,000 items (``--big``), 100 attempts: reported, no target.

Prints best and worst of ``--repeat`` runs (the big design runs once) and the machine load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

TARGET_SCORE_S = 3.0
TARGET_DESIGN_S = 5.0


def _timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big", type=int, default=100_000, help="items of the large design")
    parser.add_argument("--skip-big", action="store_true")
    args = parser.parse_args()

    from biaslab.bws.data import index_annotations, read_annotations
    from biaslab.bws.design import design_with_quality
    from biaslab.bws.reliability import split_half_reliability
    from biaslab.bws.score import score_counting
    from biaslab.data import data_path

    path = data_path("fsb/fsb-tuples-annotations.csv")
    result = {}

    def score_and_shr():
        df = read_annotations(path)
        score_counting(df)
        result["rel"] = split_half_reliability(index_annotations(df), trials=100, seed=0)

    ok = True
    times = _timed(score_and_shr, args.repeat)
    rel = result["rel"]
    print(f"score 5,360 annotations + 100 SHR trials: best {min(times):.2f} s, worst {max(times):.2f} s "
          f"(target < {TARGET_SCORE_S} s); Pearson {rel.pearson_mean:.4f} +- {rel.pearson_sd:.4f}, "
          f"Spearman {rel.spearman_mean:.4f} +- {rel.spearman_sd:.4f}")
    ok &= min(times) < TARGET_SCORE_S

    from biaslab.bws.score import bootstrap_ci

    data = index_annotations(read_annotations(path))
    times = _timed(lambda: bootstrap_ci(data, n_resamples=1000, seed=0), args.repeat)
    print(f"bootstrap CIs, 1000 resamples of 2,000 tuples (bws score default; no target): best {min(times):.2f} s, "
          f"worst {max(times):.2f} s")

    ids = [str(i) for i in range(1000)]
    times = _timed(lambda: result.update(q=design_with_quality(ids, seed=0)[1]), args.repeat)
    q = result["q"]
    print(f"design N=1,000 (100 attempts): best {min(times):.2f} s, worst {max(times):.2f} s "
          f"(target < {TARGET_DESIGN_S} s); pair SD {q.pair_sd:.4f}, max overlap {q.max_overlap}")
    ok &= min(times) < TARGET_DESIGN_S

    if not args.skip_big:
        ids = [str(i) for i in range(args.big)]
        t, c = time.perf_counter(), time.process_time()
        _, q = design_with_quality(ids, seed=0)
        print(f"design N={args.big:,} (100 attempts): {time.perf_counter() - t:.1f} s wall, "
              f"{time.process_time() - c:.1f} s CPU; {q.n_tuples:,} tuples, pair SD {q.pair_sd:.5f}, "
              f"max overlap {q.max_overlap}")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load:
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print("OK" if ok else "SLOWER THAN TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
