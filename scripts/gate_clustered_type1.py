"""Type-I error of the release gate at the margin for a rate over clustered answers, and for skewed differences.

**Clustered 0/1 answers.** Each simulated pair of runs answers the same ``k`` items three times each (the items are
the clusters): item ``i`` says yes with chance ``pa_i`` in the baseline and ``pb_i = min(1, pa_i + margin)`` in the
candidate, ``pa_i`` drawn from a Beta around the baseline rate (or 0 for every item, with ``pb_i`` spread around
the margin), so the candidate is worse by the margin (slightly less where the cap binds). The gate's own decision
(:func:`biaslab.gate.decide.margin_row`, with the cluster bootstrap's replicates as ``biaslab gate`` draws them)
should pass at most alpha of them. Beside it, the run report's procedure read one-sided
(:func:`biaslab.stats.clustered.paired_cluster_inference` at 90%: the upper end below the margin), which the gate
does not use for this reason.

**Skewed differences** of an unbounded metric (no declared range): ``b_i = a_i + margin + e_i`` with ``e`` of mean 0
and standard deviation 0.1 drawn from a normal, a Student t on 3 df, an exponential, and lognormals with
``sigma`` 0.5 and 1 (skewness 0, 0, 2, 1.75, 6.2), no clusters, the bootstrap path (no unit values in a known
range). **Power**: the same runs with no true difference (``b_i = a_i + e_i``) and a margin of half the
differences' standard deviation (0.05): the share the gate passes. Each line gives the share and its Monte-Carlo
standard error.

    PYTHONPATH=src python scripts/gate_clustered_type1.py [--reps 300] [--k 6,10,30] [--only skewed,power]

``--only clustered-power``: clustered runs with no true difference (margin 0.1), at the ``--power-n`` sizes.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np

from biaslab.gate.decide import margin_row
from biaslab.gate.specs import MarginSpec
from biaslab.gate.units import Units, design_effect
from biaslab.probes import get_probe_class
from biaslab.stats.clustered import paired_cluster_inference

HEADLINE = next(h for h in get_probe_class("direct").headlines if h.metric == "fail_rate")  # a rate, higher worse
UNBOUNDED = dataclasses.replace(HEADLINE, bounds=None)  # the same metric with no declared range
CASES = ((0.0, 0.1, None), (0.1, 0.1, 2.0), (0.3, 0.1, 1.0), (0.5, 0.2, 5.0))  # (base, margin, Beta concentration)


def _gate_passes(
    a: np.ndarray, b: np.ndarray, units: Units, margin: float, rng: np.random.Generator, head=HEADLINE, r=400
) -> bool:
    k = a.shape[0]
    idx = rng.integers(0, k, (r, k))  # the cluster bootstrap, both runs alike
    spec = MarginSpec("direct", "fail_rate", margin, head, True)
    da, db = a[idx].mean(1) - a.mean(), b[idx].mean(1) - b.mean()
    row = margin_row(
        spec, a.mean(), b.mean(), da, db, "paired", units.binary or k, units,
        alpha=0.05, beta=0.005, equivalence_mode=False, m=1,
    )  # fmt: skip
    return row.get("p") is not None and row["p"] <= 0.05


def clustered(reps: int, ks: list[int], per: int = 3, report_too: bool = True) -> None:
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
                if not report_too:
                    continue
                r = paired_cluster_inference(
                    A.ravel(), B.ravel(), np.repeat(np.arange(k), per), null=margin, bounds=(0, 1),
                    confidence=0.90, n_random=2000,
                )  # fmt: skip
                report += r.get("ci_high") is not None and r["ci_high"] < margin
            share = f"gate {_share(gate, reps)}" + (f", one-sided CR2 {report / reps:.3f}" if report_too else "")
            print(f"clustered base {base} margin {margin} k {k}: {share}")


def clustered_power(reps: int, ks: list[int], per: int = 3) -> None:
    """The share of clustered 0/1 runs passed with no true difference (both runs answer each item with the same
    chance, drawn around the baseline rate), margin 0.1."""
    for base, conc in ((0.05, 10.0), (0.1, 2.0), (0.3, 1.0)):
        for k in ks:
            rng = np.random.default_rng(k)
            hits = 0
            for _ in range(reps):
                p = rng.beta(base * conc, (1 - base) * conc, k)
                A = (rng.random((k, per)) < p[:, None]).astype(float)
                B = (rng.random((k, per)) < p[:, None]).astype(float)
                ids = np.repeat(np.arange(k), per)
                items = max(k, round(k * per / design_effect((B - A).ravel(), ids)))
                units = Units(k, "items", bool(np.array_equal(A, B)), 1.0, items, None)
                hits += _gate_passes(A.mean(1), B.mean(1), units, 0.1, rng)
            print(f"clustered base {base} k {k}: power (no difference, margin 0.1) {_share(hits, reps, 0.0)}")


def _share(hits: int, reps: int, at: float = 0.05) -> str:
    """The share and its Monte-Carlo standard error (for a type-I error, at least the one at ``at``, alpha)."""
    p = hits / reps
    return f"{p:.3f} (MC SE {math.sqrt(max(p * (1 - p), at * (1 - at)) / reps):.3f})"


DISTS = {  # mean 0, standard deviation 1
    "normal": lambda rng, n: rng.normal(0.0, 1.0, n),
    "t3": lambda rng, n: rng.standard_t(3, n) / math.sqrt(3.0),
    "exponential": lambda rng, n: rng.exponential(1.0, n) - 1.0,
    "lognormal 0.5": lambda rng, n: _lognormal(rng, n, 0.5),
    "lognormal 1": lambda rng, n: _lognormal(rng, n, 1.0),
}


def _lognormal(rng: np.random.Generator, n: int, sigma: float) -> np.ndarray:
    v = math.exp(sigma**2)
    return (rng.lognormal(0.0, sigma, n) - math.sqrt(v)) / math.sqrt((v - 1) * v)


def skewed(reps: int, ns: list[int], resamples: int, power: bool = False) -> None:
    """Type-I error at the margin (0.1, one standard deviation of the differences) or, with ``power``, the share
    passed with no true difference and a margin of half a standard deviation."""
    shift, margin = (0.0, 0.05) if power else (0.1, 0.1)
    for name, draw in DISTS.items():
        for n in ns:
            rng = np.random.default_rng(n)
            shown = 0
            for _ in range(reps):
                a = rng.normal(0.3, 0.1, n)
                b = a + shift + 0.1 * draw(rng, n)
                units = Units(n, "items", False, None)
                shown += _gate_passes(a, b, units, margin, rng, UNBOUNDED, resamples)
            what = "power (no difference, margin 0.5 SD)" if power else "type-I at the margin"
            print(f"{name} differences n {n}: {what} {_share(shown, reps, 0.0 if power else 0.05)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--k", default="6,10,30", help="numbers of clusters (items), comma-separated")
    ap.add_argument("--n", default="6,10,30,100,300", help="units of the skewed differences, comma-separated")
    ap.add_argument("--power-n", default="30,100,300", help="units of the power runs, comma-separated")
    ap.add_argument("--resamples", type=int, default=2000, help="bootstrap replicates of the skewed runs")
    ap.add_argument("--only", default="clustered,skewed,power", help="which simulations, comma-separated")
    ap.add_argument("--no-report", action="store_true", help="clustered: leave out the run report's procedure")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if "clustered" in only:
        clustered(args.reps, [int(x) for x in args.k.split(",")], report_too=not args.no_report)
    if "clustered-power" in only:
        clustered_power(args.reps, [int(x) for x in args.power_n.split(",") if int(x) >= 10])
    if "skewed" in only:
        skewed(args.reps, [int(x) for x in args.n.split(",")], args.resamples)
    if "power" in only:
        skewed(args.reps, [int(x) for x in args.power_n.split(",")], args.resamples, power=True)


if __name__ == "__main__":
    main()
