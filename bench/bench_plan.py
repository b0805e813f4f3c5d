"""How long `biaslab plan` takes for ever smaller effects (the exact binomial search is bracketed, so it
should not grow with n).

    python bench/bench_plan.py [--effects 10 1 0.1 0.01]

For each effect (bias-score points on winosemitism's headline) it prints the planned pairs and the wall
and CPU seconds of the plan in this process (imports excluded), then the wall time of the whole
`biaslab plan winosemitism --effect 0.1` command. On a loaded machine compare CPU seconds.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--effects", type=float, nargs="+", default=[10, 1, 0.1, 0.01])
    args = ap.parse_args()
    from biaslab.planning.plan import plan

    plan("winosemitism", 10)  # imports and first calls
    for effect in args.effects:
        wall, cpu = time.perf_counter(), time.process_time()
        res = plan("winosemitism", effect)
        print(f"effect {effect:g}: {res['n_pairs']} pairs (every n from {res['n_all_larger']}), "
              f"{time.perf_counter() - wall:.3f} s wall, {time.process_time() - cpu:.3f} s CPU")
    wall = time.perf_counter()
    subprocess.run([sys.executable, "-m", "biaslab.cli", "plan", "winosemitism", "--effect", "0.1"], check=True,
                   capture_output=True)
    print(f"`biaslab plan winosemitism --effect 0.1`: {time.perf_counter() - wall:.2f} s wall, the whole command")


if __name__ == "__main__":
    main()
