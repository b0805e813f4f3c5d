"""Type-I error of the release gate at the margin for a rate over clustered answers, and for skewed differences.

**Clustered 0/1 answers.** Each simulated pair of runs answers the same ``k`` items three times each (the items are
the clusters): item ``i`` says yes with chance ``pa_i`` in the baseline and ``pb_i = min(1, pa_i + margin)`` in the
candidate, ``pa_i`` drawn from a Beta around the baseline rate (or 0 for every item, with ``pb_i`` spread around
the margin), so the candidate is worse by the margin (slightly less where the cap binds). The gate's own decision
(:func:`biaslab.gate.decide.margin_row`, with the cluster bootstrap's replicates as ``biaslab gate`` draws them)
should pass at most alpha of them. Beside it, the run report's procedure read one-sided
(:func:`biaslab.stats.clustered.paired_cluster_inference` at 90%: the upper end below the margin), which the gate
does not use for this reason.

**Skewed differences** of an unbounded metric: ``b_i = a_i + margin + e_i`` with ``e`` exponential minus its mean,
no clusters, the bootstrap path (no unit values in a known range).

    PYTHONPATH=src python scripts/gate_clustered_type1.py [--reps 300] [--k 6,10,30]
"""

from __future__ import annotations

import argparse

import numpy as np

from biaslab.gate.decide import margin_row
from biaslab.gate.specs import MarginSpec
from biaslab.gate.units import Units, design_effect
from biaslab.probes import get_probe_class
from biaslab.stats.clustered import paired_cluster_inference

HEADLINE = next(h for h in get_probe_class("direct").headlines if h.metric == "fail_rate")  # a rate, higher worse
CASES = ((0.0, 0.1, None), (0.1, 0.1, 2.0), (0.3, 0.1, 1.0), (0.5, 0.2, 5.0))  # (base, margin, Beta concentration)


def _gate_passes(a: np.ndarray, b: np.ndarray, units: Units, margin: float, rng: np.random.Generator) -> bool:
    k = a.shape[0]
    w = rng.multinomial(k, np.full(k, 1 / k), size=400) / k  # the cluster bootstrap, both runs alike
    spec = MarginSpec("direct", "fail_rate", margin, HEADLINE, True)
    row = margin_row(
        spec, a.mean(), b.mean(), w @ a - a.mean(), w @ b - b.mean(), "paired", units.binary or k, units,
        alpha=0.05, beta=0.005, equivalence_mode=False, m=1,
    )  # fmt: skip
    return row.get("p") is not None and row["p"] <= 0.05


def clustered(reps: int, ks: list[int], per: int = 3) -> None:
    for base, margin, conc in CASES:
        for k in ks:
            rng = np.random.default_rng(k)
            gate = report = 0
            for _ in range(reps):
                if conc is None:
                    pa, pb = np.zeros(k), rng.beta(0.5, 4.5, k) * margin / 0.1
                else:
                    pa = rng.beta(base * conc + 1e-9, (1 - base) * conc, k)
                    pb = np.clip(pa + margin, 0, 1)
                A = (rng.random((k, per)) < pa[:, None]).astype(float)
                B = (rng.random((k, per)) < pb[:, None]).astype(float)
                ids = np.repeat(np.arange(k), per)  # the gate's count of items for its floor (gate/units.py)
                items = max(k, round(k * per / design_effect((B - A).ravel(), ids)))
                units = Units(k, "items", bool(np.array_equal(A, B)), 1.0, items, None)
                gate += _gate_passes(A.mean(1), B.mean(1), units, margin, rng)
                r = paired_cluster_inference(
                    A.ravel(), B.ravel(), np.repeat(np.arange(k), per), null=margin, bounds=(0, 1),
                    confidence=0.90, n_random=2000,
                )  # fmt: skip
                report += r.get("ci_high") is not None and r["ci_high"] < margin
            share = f"gate {gate / reps:.3f}, one-sided CR2 {report / reps:.3f}"
            print(f"clustered base {base} margin {margin} k {k}: {share}")


def skewed(reps: int, ns: list[int]) -> None:
    for n in ns:
        rng = np.random.default_rng(n)
        shown = 0
        for _ in range(reps):
            a = rng.normal(0.3, 0.1, n)
            b = a + 0.1 + (rng.exponential(0.1, n) - 0.1)
            shown += _gate_passes(a, b, Units(n, "items", False, None), 0.1, rng)
        print(f"skewed differences n {n}: gate {shown / reps:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--k", default="6,10,30", help="numbers of clusters (items), comma-separated")
    args = ap.parse_args()
    ks = [int(x) for x in args.k.split(",")]
    clustered(args.reps, ks)
    skewed(args.reps, ks + [100])


if __name__ == "__main__":
    main()
