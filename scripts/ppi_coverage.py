"""Coverage and width of `biaslab ppi`'s intervals by simulation on the released Fifty Shades of Bias scores.

The 1,000 released normalised human scores are the truth. A simulated judge scores every text:
``informative`` = clip(0.3 + 0.6 * human + N(0, 0.1)) (biased up by 0.1 on average, compressed,
noisy; r about 0.8), ``weak`` = clip(0.5 + 0.2 * human + N(0, 0.2)) (r about 0.2), ``unrelated``
= uniform(0, 1). Each repetition draws ``n`` gold texts at random and computes the interval.

* target ``items``: the judged items are the 1,000 texts; the truth is their mean human score.
* target ``population``: each repetition first draws 1,000 judged texts with replacement from the
  released ones (i.i.d. items), the truth being the mean over the released texts.

Prints, per judge, target, weight (tuned = PPI++, 1 = the original PPI) and n: coverage of the PPI
and humans-only intervals, their mean widths and the width ratio.

    BIASLAB_DATA_DIR=../shared/data python scripts/ppi_coverage.py [--reps 2000] [--n 30,50,100,200]
"""

from __future__ import annotations

import argparse

import numpy as np

from biaslab.data import data_path
from biaslab.io import read_table
from biaslab.stats.ppi import ppi_mean


def human_scores() -> np.ndarray:
    table = read_table(data_path("fsb/fsb_final_scores.csv"))
    j = table.index("score_normalized")
    return np.array([float(r[j]) for r in table.rows])


def judges(y: np.ndarray, seed: int = 2023) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"informative": np.clip(0.3 + 0.6 * y + rng.normal(0, 0.1, y.size), 0, 1),
            "weak": np.clip(0.5 + 0.2 * y + rng.normal(0, 0.2, y.size), 0, 1),
            "unrelated": rng.uniform(0, 1, y.size)}


def simulate(y_all, judge, n, reps, seed, target, lam):
    rng = np.random.default_rng(seed)
    truth, size = float(np.mean(y_all)), y_all.size
    hits, widths = np.zeros(2), np.zeros(2)
    for _ in range(reps):
        idx = rng.integers(0, size, size) if target == "population" else np.arange(size)
        y, f = y_all[idx], judge[idx]
        gold = np.zeros(size, dtype=bool)
        gold[rng.choice(size, n, replace=False)] = True
        e = ppi_mean(y[gold], f[gold], f[~gold], lam=lam, target=target)
        for k, iv in enumerate((e.ppi, e.classical)):
            hits[k] += iv.ci_low <= truth <= iv.ci_high
            widths[k] += iv.ci_high - iv.ci_low
    return hits / reps, widths / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--n", default="30,50,100,200")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    y = human_scores()
    print(f"{y.size} texts, true mean {y.mean():.4f}, SD {y.std(ddof=1):.4f}; {args.reps} repetitions each")
    print(f"{'judge':<12}{'r':>6} {'target':<11}{'lambda':<7}{'n':>5}{'cover PPI':>11}{'cover hum.':>11}"
          f"{'width PPI':>11}{'width hum.':>11}{'ratio':>7}")
    for name, f in judges(y).items():
        r = np.corrcoef(y, f)[0, 1]
        for target in ("items", "population"):
            for lam in (None, 1.0):
                for n in (int(v) for v in args.n.split(",")):
                    cover, width = simulate(y, f, n, args.reps, args.seed + n, target, lam)
                    print(f"{name:<12}{r:>6.2f} {target:<11}{'tuned' if lam is None else 1:<7}{n:>5}"
                          f"{cover[0]:>11.3f}{cover[1]:>11.3f}{width[0]:>11.4f}{width[1]:>11.4f}"
                          f"{width[0] / width[1]:>7.2f}")


if __name__ == "__main__":
    main()
