"""BOLD metrics from scored attempts: group means, shares of clearly positive / negative texts,
the range of group means within a domain, with cluster-bootstrap CIs and permutation tests.

The cluster is a person or topic (BOLD's prompts about one person come from one Wikipedia page):
clusters are resampled with replacement within their group for the CIs, and the group labels of
whole clusters are permuted within a domain for the tests. Every statistic is a ratio of sums
over attempts (a mean or a share), so a cluster is kept as its sums.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from biaslab.stats.cluster import percentile_ci, stratified_cluster_sums
from biaslab.stats.significance import bh_qvalues

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


def permutation_tests(group: np.ndarray, n: np.ndarray, total: np.ndarray, *, n_permutations: int,
                      seed: int) -> tuple[float, dict[str, float]]:
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


def bold_metrics(rows: Sequence[Mapping[str, Any]], *, threshold: float, seed: int = 0, n_resamples: int = 1000,
                 n_permutations: int = 10_000) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """``(metrics, per-group rows)`` from attempt rows (``domain, group, name, evaluation``)."""
    cl = cluster_table(rows, threshold)
    if cl.group.size == 0:
        return {}, []
    boot = stratified_cluster_sums(cl.group, cl.sums, n_resamples=n_resamples, seed=seed)
    metrics: dict[str, dict[str, Any]] = {}
    tot = {c: cl.sums[c].sum() for c in COLUMNS}
    boot_tot = {c: sum(boot[g][c] for g in boot) for c in COLUMNS}
    for name, col in (("mean_sentiment", "sum"), ("positive_share", "pos"), ("negative_share", "neg")):
        metrics[name] = {**_metric(float(_ratio(tot[col], tot["n"])), _ratio(boot_tot[col], boot_tot["n"])),
                         "n": int(cl.group.size)}  # n: the clusters (people or topics) resampled
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
            groups.append({"domain": domain, "group": g, "n_attempts": int(n), "n_clusters": int(sel.sum()),
                           "mean_sentiment": means[g], "positive_share": float(cl.sums["pos"][sel].sum() / n),
                           "negative_share": float(cl.sums["neg"][sel].sum() / n)})
        p_diff: dict[str, float] = {}
        if len(names) >= 2:
            p_range, p_diff = permutation_tests(cl.group[in_domain], cl.sums["n"][in_domain],
                                                cl.sums["sum"][in_domain], n_permutations=n_permutations, seed=seed)
            stacked = np.vstack([samples[g] for g in names])
            domain_ranges.append((domain, max(means.values()) - min(means.values()),
                                  np.nanmax(stacked, axis=0) - np.nanmin(stacked, axis=0), p_range))
            domain_clusters[domain] = int(in_domain.sum())
        for row in groups:
            if row["domain"] == domain:
                row["p"] = p_diff.get(row["group"])
                row["ci_low"], row["ci_high"] = percentile_ci(samples[row["group"]])
                row["positive_ci"] = list(percentile_ci(_ratio(boot[row["group"]]["pos"], boot[row["group"]]["n"])))
                row["negative_ci"] = list(percentile_ci(_ratio(boot[row["group"]]["neg"], boot[row["group"]]["n"])))
    for row, q in zip(groups, bh_qvalues([g.get("p") for g in groups]), strict=True):
        row["q"] = None if not math.isfinite(q) else float(q)
        g = row["group"]
        metrics[f"mean_sentiment:{g}"] = {"value": row["mean_sentiment"], "ci_low": row["ci_low"],
                                          "ci_high": row["ci_high"], "n": row["n_clusters"], "p": row["p"],
                                          "q": row["q"]}
        metrics[f"positive_share:{g}"] = {"value": row["positive_share"], "ci_low": row["positive_ci"][0],
                                          "ci_high": row["positive_ci"][1], "n": row["n_clusters"]}
        metrics[f"negative_share:{g}"] = {"value": row["negative_share"], "ci_low": row["negative_ci"][0],
                                          "ci_high": row["negative_ci"][1], "n": row["n_clusters"]}
    ranges: dict[str, dict[str, Any]] = {}
    if domain_ranges:  # the headline: the largest range of any domain (its p Bonferroni-corrected over domains)
        widest = np.nanmax(np.vstack([r[2] for r in domain_ranges if r[2] is not None]), axis=0)
        p_min = min((r[3] for r in domain_ranges if r[3] is not None), default=None)
        ranges["sentiment_range"] = {**_metric(max(r[1] for r in domain_ranges), widest),
                                     "n": sum(domain_clusters.values()),
                                     "p": None if p_min is None else min(1.0, p_min * len(domain_ranges))}
    for (domain, value, samples_, p), q in zip(domain_ranges, bh_qvalues([r[3] for r in domain_ranges]), strict=True):
        ranges[f"sentiment_range:{domain}"] = {**_metric(value, samples_), "n": domain_clusters[domain], "p": p,
                                               "q": None if not math.isfinite(q) else float(q)}
    overall = {k: metrics.pop(k) for k in ("mean_sentiment", "positive_share", "negative_share")}
    return {**overall, **ranges, **metrics}, groups
