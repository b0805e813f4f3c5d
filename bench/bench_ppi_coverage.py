"""Coverage of `biaslab ppi`'s 95% intervals at small gold sets, by simulation (vectorised).

Each dataset: ``n`` gold and ``N_u`` unlabelled items drawn i.i.d.; a human score ``y`` and a judge
score ``f = r * z + sqrt(1 - r^2) * e`` (``z`` the standardised human score, ``e`` standard normal),
so that the judge-human correlation is ``r``. Human scores:

* ``normal``: standard normal; ``beta``: Beta(0.7, 2) on [0, 1] (skewness 1.1, like a
  bias score most texts get little of);
* ``binary``: 0/1 with probability 0.5; ``binary0.2``: with probability 0.2 (skewness 1.5).

Target ``population``: the truth is the distribution's mean; ``items``: the mean human score of the
``n + N_u`` drawn items (the gold ones a simple random sample of them). Prints the coverage of the
PPI++ interval (tuned weight) and of the humans-only one, each with its Monte-Carlo standard error,
per setting.

    PYTHONPATH=src python bench/bench_ppi_coverage.py [--reps 20000] [--n 30] [--nu 300,3000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from biaslab.stats.ppi import ppi_batch, t_value

KINDS = ("normal", "beta", "binary", "binary0.2")


def draw(rng: np.random.Generator, kind: str, r: float, reps: int, size: int) -> tuple[np.ndarray, np.ndarray, float]:
    if kind == "normal":
        y, mu, sd = rng.normal(0, 1, (reps, size)), 0.0, 1.0
    elif kind == "beta":
        a, b = 0.7, 2.0
        y, mu, sd = rng.beta(a, b, (reps, size)), a / (a + b), math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    else:
        q = 0.2 if kind == "binary0.2" else 0.5
        y, mu, sd = (rng.random((reps, size)) < q).astype(float), q, math.sqrt(q * (1 - q))
    f = r * (y - mu) / sd + math.sqrt(1 - r * r) * rng.normal(0, 1, (reps, size))
    return y, f, mu


def coverage(kind: str, r: float, n: int, nu: int, reps: int, seed: int, chunk: int = 2000) -> dict[str, float]:
    """Coverage of the 95% intervals: ``{target/ppi, target/humans}`` for both targets."""
    rng = np.random.default_rng(seed)
    hits: dict[str, int] = {}
    done = 0
    while done < reps:
        m = min(chunk, reps - done)
        done += m
        y, f, mu = draw(rng, kind, r, m, n + nu)
        yg, fg, fu = y[:, :n], f[:, :n], f[:, n:]
        for target, truth in (("items", y.mean(axis=1)), ("population", mu)):
            for name, lam in (("ppi", None), ("humans", 0.0)):
                b = ppi_batch(yg, fg, fu, lam=lam, target=target)
                inside = np.abs(b.estimate - truth) <= t_value(0.95, b.df) * b.se
                hits[f"{target}/{name}"] = hits.get(f"{target}/{name}", 0) + int(inside.sum())
    return {k: v / reps for k, v in hits.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--n", default="30", help="gold-set sizes, comma-separated")
    ap.add_argument("--nu", default="300,3000", help="unlabelled sizes, comma-separated")
    ap.add_argument("--r", default="0,0.5,0.8,0.95", help="judge-human correlations")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    mcse = math.sqrt(0.95 * 0.05 / args.reps)
    print(f"{args.reps} datasets per row; Monte-Carlo standard error of a coverage near 0.95: {mcse:.4f}")
    print(
        f"{'human':<10}{'r':>5}{'n':>5}{'N_u':>6}  {'items PPI':>10}{'items hum.':>11}{'pop. PPI':>10}{'pop. hum.':>10}"
    )
    for n in (int(v) for v in args.n.split(",")):
        for kind in args.kinds.split(","):
            for r in (float(v) for v in args.r.split(",")):
                for nu in (int(v) for v in args.nu.split(",")):
                    t0 = time.perf_counter()
                    seed = args.seed + 7919 * n + 104729 * KINDS.index(kind) + int(1000 * r) + nu
                    c = coverage(kind, r, n, nu, args.reps, seed)
                    print(
                        f"{kind:<10}{r:>5.2f}{n:>5}{nu:>6}  {c['items/ppi']:>10.3f}{c['items/humans']:>11.3f}"
                        f"{c['population/ppi']:>10.3f}{c['population/humans']:>10.3f}"
                        f"  ({time.perf_counter() - t0:.1f} s)",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
