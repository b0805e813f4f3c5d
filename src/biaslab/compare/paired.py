"""Paired comparison of runs: ``biaslab compare RUN_A RUN_B [RUN_C ...]``.

Every run after the first is compared with the first. When two runs are of the same probe (or
two paired-sentence probes) and share items, the comparison is *paired* on the shared items
(:mod:`biaslab.compare.paired_data`): for every metric both runs report, the difference B - A
with a 95% interval and a two-sided p value from one procedure (:mod:`biaslab.compare.inference`):
the cluster-aware paired inference of per-item differences for the metrics the probe's pairing
declares as means over items (clusters: predicates, templates, ...; never a p below ``2^(1-k)``
over ``k`` clusters, no interval over fewer than 6), the paired bootstrap over the same units with
the p value of its own resamples for the others. Otherwise the comparison is *unpaired*: the
difference of the two reported values, with a CI and p from a normal approximation to each run's
reported CI (independent samples). Benjamini-Hochberg q values are taken within families
(:mod:`biaslab.compare.families`): the headline metrics, each probe's subgroups, its other
metrics; the probe's diagnostics (``Probe.diagnostics``) are shown apart and never flagged.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.compare.benchmarks import benchmark_label
from biaslab.compare.families import assign_families, headline_verdicts, reading_scale
from biaslab.compare.inference import bootstrap_samples, bootstrap_test, floor_p, row_clusters, unit_test
from biaslab.compare.paired_data import PairedData, family, paired_data, pairing_of
from biaslab.compare.run import Run, load_run
from biaslab.errors import ConfigError
from biaslab.stats.two_sample import attainable_min_p_two_sample

N_RESAMPLES = 1000
N_PERMUTATIONS = 2000
Z95 = 1.959963984540054


def label_runs(runs: list[Run]) -> None:
    """Label each run by probe and model, the settings that differ between the runs, and the run's folder."""
    keys = sorted(
        {
            k
            for r in runs
            for k, v in r.results.parameters.items()
            if isinstance(v, (str, int, float, bool)) or v is None
        }
    )
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
        row: dict[str, Any] = {
            "metric": name,
            "a": va,
            "b": vb,
            "diff": diff,
            "ci_low": None,
            "ci_high": None,
            "p": None,
            "test": "unpaired: normal approximation from the runs' CIs",
            "n_shared": 0,
        }
        halves = [
            (_num(m[name].get("ci_high")) or math.nan) - (_num(m[name].get("ci_low")) or math.nan) for m in (ma, mb)
        ]
        if diff is not None and all(math.isfinite(h) and h > 0 for h in halves):
            se = math.sqrt(sum((h / (2 * Z95)) ** 2 for h in halves))
            row["ci_low"], row["ci_high"] = diff - Z95 * se, diff + Z95 * se
            row["p"] = math.erfc(abs(diff) / se / math.sqrt(2))
            units = [_num(m[name].get("n_clusters")) or _num(m[name].get("n")) for m in (ma, mb)]
            if all(units):  # never below what a permutation test of the two runs' units can give
                row["p"] = max(row["p"], attainable_min_p_two_sample(*(int(u or 0) for u in units)))
        elif diff is not None:
            why = [m[name].get("reason") for m in (ma, mb) if m[name].get("ci_low") is None]
            row["reason"] = "a run has no interval for this metric" + (f" ({why[0]})" if why and why[0] else "")
        out.append(row)
    return out, {"design": "unpaired", "note": note, "n_shared": 0}


def pair_runs(a: Run, b: Run, seed: int = 0) -> tuple[PairedData | None, str]:
    """Runs A and B aligned on their shared items, or None and why they cannot be paired."""
    fa, fb = family(a.probe), family(b.probe)
    if fa is None or fa != fb:
        return None, (
            f"the runs are of different probes ({a.probe}, {b.probe})"
            if fa != fb
            else f"the {a.probe} probe has no paired analysis"
        )
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


def compare_pair(
    a: Run, b: Run, *, seed: int = 0, n_resamples: int = N_RESAMPLES, n_permutations: int = N_PERMUTATIONS
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The comparisons of run B with run A, and ``{"design", "note", "n_shared", ...}``.

    Every row's interval and p value come from one procedure (:mod:`biaslab.compare.inference`): the
    paired cluster inference for the metrics the pairing declares as means of rows, the paired bootstrap
    (with the p value of its resamples) for the others (and for a rate whose rows differ between the runs, those
    with a denominator); a metric with a dedicated test of the pairing keeps
    that test's p beside the bootstrap interval."""
    pdata, why = pair_runs(a, b, seed)
    if pdata is None:
        return _unpaired(a, b, why)
    pairing = pairing_of(a.probe)
    va, vb = pdata.fn(pdata.a), pdata.fn(pdata.b)
    ma, mb = a.results.metrics, b.results.metrics
    names = [n for n in va if n in ma and n in mb and _num(va[n]) is not None and _num(vb.get(n)) is not None]
    uva = pairing.unit_values(pdata.a) if pairing is not None else {}
    uvb = pairing.unit_values(pdata.b) if pairing is not None else {}
    uva = {n: uv for n, uv in uva.items() if n in uvb and np.array_equal(uv.mask, uvb[n].mask)}  # the same rows
    clusters, strata = row_clusters(pdata.n_shared, pdata.units, pdata.strata)
    label = (
        pairing.cluster_unit if pdata.units is not None and pairing is not None and pairing.cluster_unit else pdata.unit
    ).split(" (")[0]
    boot_names = [n for n in names if n not in uva]
    samples = (
        bootstrap_samples(
            pdata.a,
            pdata.b,
            pdata.fn,
            boot_names,
            units=pdata.units,
            strata=pdata.strata,
            n_resamples=n_resamples,
            seed=seed,
        )
        if boot_names
        else np.zeros((0, 0))
    )
    out = []
    for n in names:
        base = {"metric": n, "a": float(va[n]), "b": float(vb[n])}
        if n in uva:
            row = unit_test(uva[n], uvb[n], clusters, strata, label, seed)
            row["diff"] = float(vb[n]) - float(va[n])
        else:
            k = _clusters_for(pdata, n, clusters)
            row = bootstrap_test(
                samples[:, boot_names.index(n)],
                float(vb[n]) - float(va[n]),
                k=k,
                n_units=_n_for(pdata, n),
                label=label,
                n_resamples=n_resamples,
            )
            row["n_shared"] = _n_for(pdata, n)
            if n in pdata.tests:
                test = pdata.tests[n](pdata.a, pdata.b)
                units = k if k is not None else _n_for(pdata, n)
                row.update(p=floor_p(_num(test.p), units), test=f"{test.method}; interval: {row['test']}")
        out.append({**base, **row})
    left = max(pdata.n_a, pdata.n_b) - pdata.n_shared
    note = f"paired on {pdata.n_shared} shared items; units of evidence: {pdata.unit}"
    if left:
        note += f"; {pdata.n_a - pdata.n_shared} item(s) only in A and {pdata.n_b - pdata.n_shared} only in B left out"
    return out, {"design": "paired", "note": note, "n_shared": pdata.n_shared, "unit": pdata.unit}


def _clusters_for(pdata: PairedData, metric: str, clusters: np.ndarray | None) -> int | None:
    """Clusters behind a metric (those of its group for ``<metric>:<group>``); None when rows are independent."""
    if clusters is None:
        return None
    base, sep, group = metric.partition(":")
    in_group = np.asarray(pdata.a["group"]) == group if sep and "group" in pdata.a else None
    if in_group is not None and in_group.any():
        return int(np.unique(clusters[in_group]).size)
    return int(np.unique(clusters).size)  # an overall metric, or one whose suffix is no group (a domain)


def _n_for(pdata: Any, metric: str) -> int:
    """Shared items behind a metric: those of its group for ``<metric>:<group>`` of paired-sentence probes."""
    base, sep, group = metric.partition(":")
    count = int(np.count_nonzero(np.asarray(pdata.a["group"]) == group)) if sep and "group" in pdata.a else 0
    return count or pdata.n_shared


def compare_all(
    paths: list[Path], *, seed: int = 0, n_resamples: int = N_RESAMPLES, n_permutations: int = N_PERMUTATIONS
) -> dict[str, Any]:
    """Every run against the first; Benjamini-Hochberg q values within families (the headline metrics one
    family, each probe's subgroups another, its other metrics a third; diagnostics in none), a verdict per
    headline comparison. The cmp.json content."""
    if len(paths) < 2:
        raise ConfigError("compare needs at least two runs (RUN_A RUN_B ...)")
    runs = [load_run(p) for p in paths]
    label_runs(runs)
    comparisons, pairs = [], []
    for k, b in enumerate(runs[1:], start=1):
        rows, info = compare_pair(runs[0], b, seed=seed, n_resamples=n_resamples, n_permutations=n_permutations)
        for r in rows:
            comparisons.append(
                {
                    **r,
                    "scale": reading_scale(runs[0].probe, r["metric"]),
                    "run_a": runs[0].label,
                    "run_b": b.label,
                    "design": info["design"],
                    "probe": runs[0].probe,
                }
            )
        pairs.append({"run_a": 0, "run_b": k, **info})
    families = assign_families(comparisons)
    verdicts = [
        v
        for k, b in enumerate(runs[1:], start=1)
        for v in headline_verdicts(runs[0], b, [c for c in comparisons if c["run_b"] == b.label])
    ]
    order = [
        "metric",
        "a",
        "b",
        "diff",
        "ci_low",
        "ci_high",
        "scale",
        "p",
        "q",
        "family",
        "diagnostic",
        "test",
        "n_shared",
        "n_clusters",
        "too_small",
        "reason",
        "run_a",
        "run_b",
        "design",
    ]
    comparisons = [{k: c.get(k) for k in order if k in c or k in ("q", "family")} for c in comparisons]
    return {
        "runs": [
            {"label": r.label, "path": str(r.path), "probe": r.probe, "model": r.model, "n_items": r.results.n_items}
            for r in runs
        ],
        "pairs": pairs,
        "comparisons": comparisons,
        "families": families,
        "verdicts": verdicts,
        "method": "paired: one procedure per metric for interval and p -- cluster-aware paired inference of "
        "per-item differences (exact binomial for independent 0/1 items; cluster sign-flip with its "
        "inverted interval for few clusters, cluster-robust t beyond; no p below 2^(1-k) over k "
        "clusters, no interval under 6) for metrics that are means over items, the paired bootstrap "
        "with the p value of its resamples for the others; unpaired: normal approximation from the "
        "runs' CIs; q: Benjamini-Hochberg within each family (see families); diagnostics are not "
        "bias directions and are not tested as such; a, b, diff and the interval in the metric's stored "
        "units, shown x scale (the headline's reading scale) in tables, plots and verdicts",
    }
