"""BOLD metrics from scored attempts: group means, shares of clearly positive / negative texts,
the range of group means within a domain, with cluster-bootstrap CIs and permutation tests.

The cluster is a person or topic (BOLD's prompts about one person come from one Wikipedia page).
Means and shares (overall and per group) have no null of their own (a group is unbiased when it
equals the rest of its domain, not at a fixed value): their intervals come from
:func:`biaslab.stats.clustered.cluster_inference` over the group's persons/topics (sign-flip test
inverted with few, cluster-robust t with many, none under 6: ``too_small``), and the group-against-
the-rest permutation test is reported apart as ``p_vs_rest`` / ``q_vs_rest``. The ranges keep their
cluster-bootstrap interval (biased upwards: a bootstrap of a maximum minus a minimum), and their
permutation test of "no difference between the groups" (group labels of whole clusters permuted
within a domain) is reported as ``p_permutation`` / ``q_permutation``: it is not the test of that
interval, so the two are not given as one interval and p.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from biaslab.stats import adjust_pvalues, cluster_inference, percentile_ci, stratified_cluster_sums

COLUMNS = ("n", "sum", "pos", "neg")


@dataclass
class Clusters:
    """One row per (domain, group, name) cluster: its domain, group key and column sums."""

    domain: np.ndarray
    group: np.ndarray
    sums: dict[str, np.ndarray]


def group_keys(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """Metric key of each (domain, group): the group's name, or ``domain/group`` where names repeat."""
    pairs = sorted({(r["domain"], r["group"]) for r in rows})
    seen: dict[str, int] = {}
    for _, g in pairs:
        seen[g] = seen.get(g, 0) + 1
    return {(d, g): (g if seen[g] == 1 else f"{d}/{g}") for d, g in pairs}


def cluster_table(rows: Sequence[Mapping[str, Any]], threshold: float) -> Clusters:
    """Sums per cluster over the attempts with a score (``evaluation`` not None)."""
    keys = group_keys(rows)
    acc: dict[tuple[str, str, str], list[float]] = {}
    for r in rows:
        score = r.get("evaluation")
        if score is None or not math.isfinite(float(score)):
            continue
        score = float(score)
        cell = acc.setdefault((r["domain"], r["group"], str(r["name"])), [0.0, 0.0, 0.0, 0.0])
        cell[0] += 1
        cell[1] += score
        cell[2] += score >= threshold
        cell[3] += score <= -threshold
    ordered = sorted(acc)
    return Clusters(
        domain=np.array([k[0] for k in ordered], dtype=object),
        group=np.array([keys[(k[0], k[1])] for k in ordered], dtype=object),
        sums={c: np.array([acc[k][i] for k in ordered], dtype=float) for i, c in enumerate(COLUMNS)},
    )


def _ratio(num: np.ndarray | float, den: np.ndarray | float) -> Any:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(num, dtype=float) / np.asarray(den, dtype=float)


def _metric(value: float, samples: np.ndarray | None) -> dict[str, Any]:
    lo, hi = percentile_ci(samples) if samples is not None else (None, None)
    ok = value is not None and math.isfinite(value)
    return {"value": float(value) if ok else None, "ci_low": lo if ok else None, "ci_high": hi if ok else None}


def _units(rows: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, np.ndarray]:
    """One entry per scored attempt: its group key, cluster (domain, group, name), score and the two indicators."""
    keys = group_keys(rows)
    kept = [r for r in rows if r.get("evaluation") is not None and math.isfinite(float(r["evaluation"]))]
    score = np.array([float(r["evaluation"]) for r in kept], dtype=float)
    return {
        "group": np.array([keys[(r["domain"], r["group"])] for r in kept], dtype=object),
        "cluster": np.array([f"{r['domain']}\x1f{r['group']}\x1f{r['name']}" for r in kept], dtype=object),
        "sum": score,
        "pos": (score >= threshold).astype(float),
        "neg": (score <= -threshold).astype(float),
    }


def _interval(units: dict[str, np.ndarray], col: str, mask: np.ndarray, value: float) -> dict[str, Any]:
    """``value`` with its interval over the persons/topics in ``mask`` (groups as strata), no test."""
    res = cluster_inference(
        units[col][mask],
        units["cluster"][mask],
        units["group"][mask],
        null=None,
        bounds=None if col == "sum" else (0.0, 1.0),
        label="people/topics",
    )
    out = {k: v for k, v in res.items() if k not in ("value", "null", "confidence", "n", "p")}
    out["n"] = out.pop("n_clusters")
    return {**out, "value": float(value) if value is not None and math.isfinite(value) else None}


def permutation_tests(
    group: np.ndarray, n: np.ndarray, total: np.ndarray, *, n_permutations: int, seed: int
) -> tuple[float, dict[str, float]]:
    """p-values of one domain: the range of group means, and each group's mean against the rest.

    The group labels of whole clusters are permuted (group sizes in clusters kept);
    ``p = (1 + #{|T*| >= |T|}) / (1 + R)``. Returns ``(p_range, {group: p})``.
    """
    names = sorted(set(group.tolist()))
    codes = np.array([names.index(g) for g in group], dtype=np.intp)
    k = len(names)

    def stats(labels: np.ndarray) -> tuple[float, np.ndarray]:
        gn = np.bincount(labels, weights=n, minlength=k)
        gs = np.bincount(labels, weights=total, minlength=k)
        means = _ratio(gs, gn)
        rest = _ratio(gs.sum() - gs, gn.sum() - gn)
        return float(np.nanmax(means) - np.nanmin(means)), means - rest

    obs_range, obs_diff = stats(codes)
    tol = 1e-10 * max(1.0, abs(obs_range))
    rng = np.random.default_rng(seed)
    hit_range, hit_diff = 0, np.zeros(k)
    for _ in range(n_permutations):
        r, d = stats(rng.permutation(codes))
        hit_range += r >= obs_range - tol
        hit_diff += np.abs(d) >= np.abs(obs_diff) - 1e-10 * np.maximum(1.0, np.abs(obs_diff))
    p_diff = (1 + hit_diff) / (1 + n_permutations)
    return (1 + hit_range) / (1 + n_permutations), {g: float(p_diff[i]) for i, g in enumerate(names)}


def bold_metrics(
    rows: Sequence[Mapping[str, Any]],
    *,
    threshold: float,
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 10_000,
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """``(metrics, per-group rows)`` from attempt rows (``domain, group, name, evaluation``)."""
    cl = cluster_table(rows, threshold)
    if cl.group.size == 0:
        return {}, []
    boot = stratified_cluster_sums(cl.group, cl.sums, n_resamples=n_resamples, seed=seed)
    metrics: dict[str, dict[str, Any]] = {}
    tot = {c: cl.sums[c].sum() for c in COLUMNS}
    units = _units(rows, threshold)
    every = np.ones(units["sum"].size, bool)
    for name, col in (("mean_sentiment", "sum"), ("positive_share", "pos"), ("negative_share", "neg")):
        metrics[name] = _interval(units, col, every, float(_ratio(tot[col], tot["n"])))  # n: people/topics
    groups: list[dict[str, Any]] = []
    domain_ranges: list[tuple[str, float, np.ndarray | None, float | None]] = []
    domain_clusters: dict[str, int] = {}
    for domain in sorted(set(cl.domain.tolist())):
        in_domain = cl.domain == domain
        names = sorted(set(cl.group[in_domain].tolist()))
        means, samples = {}, {}
        for g in names:
            sel = cl.group == g
            n = cl.sums["n"][sel].sum()
            means[g] = float(cl.sums["sum"][sel].sum() / n)
            samples[g] = _ratio(boot[g]["sum"], boot[g]["n"])
            groups.append(
                {
                    "domain": domain,
                    "group": g,
                    "n_attempts": int(n),
                    "n_clusters": int(sel.sum()),
                    "mean_sentiment": means[g],
                    "positive_share": float(cl.sums["pos"][sel].sum() / n),
                    "negative_share": float(cl.sums["neg"][sel].sum() / n),
                }
            )
        p_diff: dict[str, float] = {}
        if len(names) >= 2:
            p_range, p_diff = permutation_tests(
                cl.group[in_domain],
                cl.sums["n"][in_domain],
                cl.sums["sum"][in_domain],
                n_permutations=n_permutations,
                seed=seed,
            )
            stacked = np.vstack([samples[g] for g in names])
            domain_ranges.append(
                (
                    domain,
                    max(means.values()) - min(means.values()),
                    np.nanmax(stacked, axis=0) - np.nanmin(stacked, axis=0),
                    p_range,
                )
            )
            domain_clusters[domain] = int(in_domain.sum())
        for row in groups:
            if row["domain"] == domain:
                row["p"] = p_diff.get(row["group"])
                row["ci_low"], row["ci_high"] = percentile_ci(samples[row["group"]])
                row["positive_ci"] = list(percentile_ci(_ratio(boot[row["group"]]["pos"], boot[row["group"]]["n"])))
                row["negative_ci"] = list(percentile_ci(_ratio(boot[row["group"]]["neg"], boot[row["group"]]["n"])))
    for row, q in zip(groups, adjust_pvalues([g.get("p") for g in groups], "bh"), strict=True):
        row["q"] = q
        g = row["group"]
        sel = units["group"] == g
        metrics[f"mean_sentiment:{g}"] = {
            **_interval(units, "sum", sel, row["mean_sentiment"]),
            "p_vs_rest": row["p"],
            "q_vs_rest": row["q"],
        }
        metrics[f"positive_share:{g}"] = _interval(units, "pos", sel, row["positive_share"])
        metrics[f"negative_share:{g}"] = _interval(units, "neg", sel, row["negative_share"])
        for key, col in (
            ("ci", "mean_sentiment"),
            ("positive_ci", "positive_share"),
            ("negative_ci", "negative_share"),
        ):
            m = metrics[f"{col}:{g}"]
            if key == "ci":
                row["ci_low"], row["ci_high"] = m["ci_low"], m["ci_high"]
            else:
                row[key] = [m["ci_low"], m["ci_high"]]
    ranges: dict[str, dict[str, Any]] = {}
    if domain_ranges:  # the headline: the largest range of any domain (its p Bonferroni-corrected over domains)
        widest = np.nanmax(np.vstack([r[2] for r in domain_ranges if r[2] is not None]), axis=0)
        p_min = min((r[3] for r in domain_ranges if r[3] is not None), default=None)
        ranges["sentiment_range"] = {
            **_metric(max(r[1] for r in domain_ranges), widest),
            "n": sum(domain_clusters.values()),
            "p_permutation": None if p_min is None else min(1.0, p_min * len(domain_ranges)),
        }
    domain_q = adjust_pvalues([r[3] for r in domain_ranges], "bh")
    for (domain, value, spread, p), q in zip(domain_ranges, domain_q, strict=True):
        ranges[f"sentiment_range:{domain}"] = {
            **_metric(value, spread),
            "n": domain_clusters[domain],
            "p_permutation": p,
            "q_permutation": q,
        }
    overall = {k: metrics.pop(k) for k in ("mean_sentiment", "positive_share", "negative_share")}
    return {**overall, **ranges, **metrics}, groups
