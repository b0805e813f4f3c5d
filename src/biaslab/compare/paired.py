"""Paired comparison of runs: ``biaslab compare RUN_A RUN_B [RUN_C ...]``.

Every run after the first is compared with the first. When two runs are of the same probe (or
two paired-sentence probes) and share items, the comparison is *paired* on the shared items
(:mod:`biaslab.compare.paired_data`): for every metric both runs report, the difference B - A,
a 95% paired bootstrap CI (the same resample of items, or of predicates within target groups,
for both runs), and a two-sided p value -- the exact McNemar test for a paired-sentence
``bias_score`` and ``tie_rate`` (per-pair decisions), a cluster sign-flip test for
``mean_ll_diff``, a paired sign-flip (swap) permutation test for every other metric. Otherwise
the comparison is *unpaired*: the difference of the two reported values, with a CI and p from a
normal approximation to each run's reported CI (independent samples). Benjamini-Hochberg q
values are taken across every comparison of the call.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.compare.benchmarks import benchmark_label
from biaslab.compare.paired_data import PairedData, family, paired_data, pairing_of
from biaslab.errors import ConfigError
from biaslab.probing.results import read_attempts, read_results
from biaslab.probing.schema import RunResults
from biaslab.stats.paired import paired_bootstrap_ci, paired_swap_test
from biaslab.stats.significance import bh_qvalues

N_RESAMPLES = 1000
N_PERMUTATIONS = 2000
Z95 = 1.959963984540054


@dataclass
class Run:
    path: Path
    results: RunResults
    label: str = ""
    rows: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def probe(self) -> str:
        return self.results.probe

    @property
    def model(self) -> str:
        m = self.results.model
        return str(m.get("model") or m.get("name") or "?")

    def attempts(self) -> list[dict[str, Any]] | None:
        if self.rows is None:
            self.rows = read_attempts(self.path if self.path.is_dir() else self.path.parent)
        return self.rows


def load_run(path: Path) -> Run:
    return Run(Path(path), read_results(Path(path)))


def label_runs(runs: list[Run]) -> None:
    """Label each run by probe and model, the settings that differ between the runs, and the run's folder."""
    keys = sorted({k for r in runs for k, v in r.results.parameters.items() if isinstance(v, (str, int,
                   float, bool)) or v is None})
    differing = [k for k in keys if len({json.dumps(r.results.parameters.get(k)) for r in runs}) > 1]
    for r in runs:
        params = r.results.parameters
        extra = [f"{k}={params.get(k)}" for k in differing if k not in ("pairs", "pairs_sha256")]
        r.label = " ".join([benchmark_label(r.results), r.model, *extra])
        folder = (r.path if r.path.is_dir() else r.path.parent).resolve().name
        if folder and folder not in r.label.split():
            r.label += f" ({folder})"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(float(v)) else None


def _unpaired(a: Run, b: Run, note: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    ma, mb = a.results.metric_dicts(), b.results.metric_dicts()
    out = []
    for name in [n for n in ma if n in mb]:
        va, vb = _num(ma[name].get("value")), _num(mb[name].get("value"))
        diff = None if va is None or vb is None else vb - va
        row: dict[str, Any] = {"metric": name, "a": va, "b": vb, "diff": diff,
               "ci_low": None, "ci_high": None, "p": None, "test": "unpaired: normal approximation from the runs' CIs",
               "n_shared": 0}
        halves = [(_num(m[name].get("ci_high")) or math.nan) - (_num(m[name].get("ci_low")) or math.nan)
                  for m in (ma, mb)]
        if diff is not None and all(math.isfinite(h) for h in halves):
            se = math.sqrt(sum((h / (2 * Z95)) ** 2 for h in halves))
            row["ci_low"], row["ci_high"] = diff - Z95 * se, diff + Z95 * se
            if se > 0:
                row["p"] = math.erfc(abs(diff) / se / math.sqrt(2))
        out.append(row)
    return out, {"design": "unpaired", "note": note, "n_shared": 0}


def pair_runs(a: Run, b: Run, seed: int = 0) -> tuple[PairedData | None, str]:
    """Runs A and B aligned on their shared items, or None and why they cannot be paired."""
    fa, fb = family(a.probe), family(b.probe)
    if fa is None or fa != fb:
        return None, (f"the runs are of different probes ({a.probe}, {b.probe})" if fa != fb
                      else f"the {a.probe} probe has no paired analysis")
    rows_a, rows_b = a.attempts(), b.attempts()
    if rows_a is None or rows_b is None:
        return None, "a run has no attempts.jsonl"
    pairing = pairing_of(a.probe)
    if pairing is None:  # family() found one: cannot happen
        return None, f"the {a.probe} probe has no paired analysis"
    pdata = paired_data(pairing, rows_a, rows_b, seed)
    if pdata.n_shared < 2:
        return None, f"the runs share {pdata.n_shared} item(s)"
    return pdata, ""


def compare_pair(a: Run, b: Run, *, seed: int = 0, n_resamples: int = N_RESAMPLES,
                 n_permutations: int = N_PERMUTATIONS) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The comparisons of run B with run A, and ``{"design", "note", "n_shared", ...}``."""
    pdata, why = pair_runs(a, b, seed)
    if pdata is None:
        return _unpaired(a, b, why)
    va, vb = pdata.fn(pdata.a), pdata.fn(pdata.b)
    ma, mb = a.results.metrics, b.results.metrics
    names = [n for n in va if n in ma and n in mb and _num(va[n]) is not None and _num(vb.get(n)) is not None]
    cis = paired_bootstrap_ci(pdata.a, pdata.b, pdata.fn, names, units=pdata.units, strata=pdata.strata,
                              n_resamples=n_resamples, seed=seed)
    swap_names = [n for n in names if n not in pdata.tests]
    swaps = paired_swap_test(pdata.a, pdata.b, pdata.fn, swap_names, n_permutations=n_permutations,
                             seed=seed) if swap_names else {}
    out = []
    for n in names:
        test = pdata.tests[n](pdata.a, pdata.b) if n in pdata.tests else swaps[n]
        out.append({"metric": n, "a": float(va[n]), "b": float(vb[n]), "diff": float(vb[n]) - float(va[n]),
                    "ci_low": cis[n][0], "ci_high": cis[n][1], "p": _num(test.p), "test": test.method,
                    "n_shared": _n_for(pdata, n)})
    left = max(pdata.n_a, pdata.n_b) - pdata.n_shared
    note = f"paired on {pdata.n_shared} shared items; bootstrap units: {pdata.unit}"
    if left:
        note += f"; {pdata.n_a - pdata.n_shared} item(s) only in A and {pdata.n_b - pdata.n_shared} only in B left out"
    return out, {"design": "paired", "note": note, "n_shared": pdata.n_shared, "unit": pdata.unit}


def _n_for(pdata: Any, metric: str) -> int:
    """Shared items behind a metric: those of its group for ``<metric>:<group>`` of paired-sentence probes."""
    base, sep, group = metric.partition(":")
    if sep and "group" in pdata.a:
        return int(np.count_nonzero(pdata.a["group"] == group))
    return pdata.n_shared


def compare_all(paths: list[Path], *, seed: int = 0, n_resamples: int = N_RESAMPLES,
                n_permutations: int = N_PERMUTATIONS) -> dict[str, Any]:
    """Every run against the first; BH q values across all comparisons. The cmp.json content."""
    if len(paths) < 2:
        raise ConfigError("compare needs at least two runs (RUN_A RUN_B ...)")
    runs = [load_run(p) for p in paths]
    label_runs(runs)
    comparisons, pairs = [], []
    for k, b in enumerate(runs[1:], start=1):
        rows, info = compare_pair(runs[0], b, seed=seed, n_resamples=n_resamples, n_permutations=n_permutations)
        for r in rows:
            comparisons.append({**r, "run_a": runs[0].label, "run_b": b.label, "design": info["design"]})
        pairs.append({"run_a": 0, "run_b": k, **info})
    qs = bh_qvalues([c["p"] for c in comparisons])
    for c, q in zip(comparisons, qs):
        c["q"] = float(q) if np.isfinite(q) else None
    order = ["metric", "a", "b", "diff", "ci_low", "ci_high", "p", "q", "test", "n_shared", "run_a", "run_b", "design"]
    comparisons = [{k: c.get(k) for k in order} for c in comparisons]
    return {"runs": [{"label": r.label, "path": str(r.path), "probe": r.probe, "model": r.model,
                      "n_items": r.results.n_items} for r in runs],
            "pairs": pairs, "comparisons": comparisons,
            "method": "paired: bootstrap CI over shared items (predicates within target groups for paired-sentence "
                      "probes), exact McNemar / sign-flip permutation p; unpaired: normal approximation from the runs' "
                      "CIs; q: Benjamini-Hochberg across all comparisons"}
