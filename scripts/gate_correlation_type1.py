"""Type-I error of the release gate at the margin for a correlation: fsb-judge's ``pearson_r``.

Each simulated pair of runs rates the same ``n`` texts: human scores ``x ~ U(0, 1)``; the baseline judge scores
``x + s_a e_a``, the candidate ``x + s_b e_b`` (``e`` standard normal, correlated ``rho`` between the judges, one
repetition), with ``s_a``, ``s_b`` chosen so that the population correlations are ``r_a`` and ``r_a - margin``: the
candidate is worse by exactly the margin (``pearson_r``: lower is worse). The gate's own decision
(:func:`biaslab.gate.decide.margin_row` on the pairing's units and the paired item bootstrap's replicates, drawn as
``biaslab gate`` draws them but vectorised)
should pass at most alpha of them. A second setting takes scores that are no normal mixture: the judge sees a
skewed transform of the truth (``x^2``) with uniform noise. A third is adversarial: the candidate scores as the
baseline but on a tenth of the texts, which it scores with large noise (heavy tails: normal theory's weak spot).
The gate takes these runs to Zou's interval for two correlations sharing a variable
(:func:`biaslab.gate.units.correlation_test`); the line says how many went there.

    PYTHONPATH=src python scripts/gate_correlation_type1.py [--reps 400] [--n 10,30] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from biaslab.compare.paired_data import PairedData
from biaslab.gate.decide import margin_row
from biaslab.gate.specs import MarginSpec
from biaslab.gate.units import metric_units
from biaslab.probes import get_probe_class
from biaslab.stats.correlation import pearson


def noise_sd(r: float, var_x: float = 1 / 12) -> float:
    """The noise sd that gives ``corr(x, x + s e) = r`` for ``x ~ U(0, 1)``."""
    return math.sqrt(var_x * (1 / r**2 - 1))


def pair(n: int, r_a: float, margin: float, rho: float, rng: np.random.Generator, kind: str):
    """Human scores and the two judges' (module docstring); ``kind`` "few": the candidate is the baseline but on a
    share ``rho`` of the texts, which it scores with noise large enough to bring its correlation to ``r_a - margin``.
    """
    x = rng.random(n)
    e_a = rng.standard_normal(n)
    e_b = rho * e_a + math.sqrt(1 - rho**2) * rng.standard_normal(n)
    if kind == "skewed":  # the judges see x^2 plus uniform noise of widths w_a, w_b
        w_a, w_b = skewed_widths(r_a, margin)
        u_a = rng.random(n) - 0.5
        u_b = np.where(rng.random(n) < rho, u_a, rng.random(n) - 0.5)
        return x, x * x + w_a * u_a, x * x + w_b * u_b
    ja = x + noise_sd(r_a) * e_a
    if kind == "few":  # var(noise of b) = (1 - rho) s_a^2 + rho A^2 = s_b^2
        big = math.sqrt((noise_sd(r_a - margin) ** 2 - (1 - rho) * noise_sd(r_a) ** 2) / rho)
        return x, ja, np.where(rng.random(n) < rho, x + big * rng.standard_normal(n), ja)
    return x, ja, x + noise_sd(r_a - margin) * e_b


def skewed_widths(r_a: float, margin: float) -> tuple[float, float]:
    """Noise widths giving population correlations ``r_a`` and ``r_a - margin`` for ``x^2 + w (U - 1/2)``."""
    # corr(x, x^2 + w v) = cov(x, x^2) / (sd x sqrt(var x^2 + w^2 / 12)), with cov = 1/12, var x^2 = 4/45
    cov, var_x, var_x2 = 1 / 12, 1 / 12, 4 / 45

    def width(r: float) -> float:
        return math.sqrt(12 * ((cov / (math.sqrt(var_x) * r)) ** 2 - var_x2))

    return width(r_a), width(r_a - margin)


def rows_of(x: np.ndarray, judge: np.ndarray) -> list[dict]:
    return [
        {"item_id": f"t{i}", "human_score": float(h), "judge_score": float(j), "repetition": 0}
        for i, (h, j) in enumerate(zip(x, judge))
    ]


def pearson_only(t) -> dict[str, float]:
    """fsb-judge's ``pearson_r`` on a one-repetition table, as its metric function computes it (the same values,
    without the other metrics: the gate's replicates of ``pearson_r`` at a fraction of the time)."""
    judge = np.asarray(t["judge"], dtype=float).reshape(len(t["human"]), -1)[:, 0]
    det = np.asarray(t["evaluated"], dtype=bool).reshape(judge.size, -1)[:, 0] & np.isfinite(judge)
    return {"pearson_r": pearson(np.asarray(t["human"], dtype=float)[det], judge[det])}


def rows_pearson(human: np.ndarray, t):
    """``idx -> pearson_r`` of each row of resampled indices (one repetition, every score detected)."""
    judge = np.asarray(t["judge"], dtype=float).reshape(human.size, -1)[:, 0]

    def of(idx: np.ndarray) -> np.ndarray:
        x, y = human[idx], judge[idx]
        dx, dy = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
        with np.errstate(all="ignore"):
            return (dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))

    return of


def decide(x, ja, jb, margin: float, seed: int, resamples: int, alpha: float = 0.05) -> dict:
    cls = get_probe_class("fsb-judge")
    pairing = cls.pairing
    a, b = pairing.harmonize(pairing.table(rows_of(x, ja)), pairing.table(rows_of(x, jb)))
    pdata = PairedData(a.columns, b.columns, pairing.metric_fn(a.columns), pairing.unit)
    metric = "pearson_r"
    rng = np.random.default_rng(seed)  # the gate's paired item bootstrap (paired_replicates), vectorised
    idx = rng.integers(0, pdata.n_shared, size=(resamples, pdata.n_shared))
    rep_a, rep_b = (rows_pearson(np.asarray(t["human"], dtype=float), t) for t in (pdata.a, pdata.b))
    rep_a, rep_b = rep_a(idx), rep_b(idx)
    va, vb = float(pdata.fn(pdata.a)[metric]), float(pdata.fn(pdata.b)[metric])
    assert abs(pearson_only(pdata.a)[metric] - va) < 1e-12
    units = metric_units(pdata, pairing, [metric])[metric]
    spec = MarginSpec("fsb-judge", metric, margin, cls.headlines[0], True)
    return margin_row(
        spec, va, vb, rep_a - va, rep_b - vb, "paired", pdata.n_shared, units, alpha=alpha,
        beta=alpha / 10, equivalence_mode=False, m=1,
    )  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--n", default="10,30")
    ap.add_argument("--resamples", type=int, default=2000)
    args = ap.parse_args()
    cases = [(0.8, 0.1, 0.5, "normal"), (0.6, 0.2, 0.0, "normal"), (0.8, 0.1, 0.5, "skewed"), (0.8, 0.1, 0.1, "few")]
    ceiling = 0.05 + 2 * math.sqrt(0.05 * 0.95 / args.reps)
    print(f"reps {args.reps}, resamples {args.resamples}; alpha 0.05, alpha + 2 se = {ceiling:.3f}")
    for n in (int(v) for v in args.n.split(",")):
        for r_a, margin, rho, kind in cases:
            rng = np.random.default_rng(1000 * n + int(100 * r_a))
            start, shown, small, zou = time.process_time(), 0, 0, 0
            for k in range(args.reps):
                row = decide(*pair(n, r_a, margin, rho, rng, kind), margin, k, args.resamples)
                shown += row["p"] is not None and row["p"] <= 0.05
                small += bool(row.get("too_small"))
                zou += "Zou" in str(row.get("method"))
            what = {"normal": "normal noise", "skewed": "x^2 + uniform noise", "few": "a share rho rescored"}[kind]
            print(
                f"n {n:3d}  r_a {r_a} margin {margin} rho {rho} ({what}): passed {shown / args.reps:.3f} "
                f"({shown}/{args.reps}), too small {small}, by Zou's test {zou}; "
                f"{time.process_time() - start:.0f} CPU-s"
            )


if __name__ == "__main__":
    main()
