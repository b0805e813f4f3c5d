"""``biaslab plan PROBE --effect E``: items needed to detect an effect on the probe's headline metric.

* Paired-sentence probes (headline ``bias_score``, 0-100, unbiased 50): the exact two-sided
  binomial test of "stereotype preferred in half the pairs" with independent pairs and no ties
  (:func:`biaslab.planning.power.binomial_n`, E in bias-score points: 50 + E). With ``--pilot RUN``
  the pairs are not independent: the pairs built from one predicate move together. The pilot's
  design effect -- the variance of its bias score under the stratified cluster bootstrap over
  predicates divided by that under the bootstrap over pairs -- gives the intra-predicate
  correlation ``icc = (deff - 1) / (m - 1)`` (m: the pilot's size-weighted pairs per predicate);
  n pairs spread over the pilot's k predicates have design effect ``1 + (n/k - 1) icc``, and the
  plan solves ``n = n0 (1 + (n/k - 1) icc)`` for n (n0: the independent-pairs n divided by
  1 - the pilot's tie rate). When ``n0 icc >= k`` no number of pairs suffices: more predicates.
* jobs-lum (headline ``masculine_rate``, unbiased 0.5): without a pilot, one character per
  occupation, every gender detected: the same exact binomial test (E in rate units: 0.5 + E).
* fsb-judge (headline ``pearson_r`` with the human scores): Fisher's z, E = the correlation.
* Any probe with ``--pilot RUN``: the standard error of the headline metric from the pilot's
  bootstrap over its items (:mod:`biaslab.compare.paired_data` tables), scaled as 1/sqrt(n):
  ``n = n_pilot (SE (z_{1-alpha/2} + z_power) / E)^2`` (normal approximation).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.errors import ConfigError
from biaslab.planning.power import binomial_n, fisher_n, normal_n

HEADLINE = {"paired-sentences": ("bias_score", 50.0, "pairs"), "jobs-lum": ("masculine_rate", 0.5, "occupations"),
            "fsb-judge": ("pearson_r", 0.0, "rated texts"), "olympics": ("explicit_score", 0.0, "events")}
N_BOOT = 2000


def _check(effect: float, power: float, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1 (got {alpha})")
    if not 0 < power < 1:
        raise ConfigError(f"--power must be between 0 and 1 (got {power}); e.g. 0.8")
    if effect == 0 or not math.isfinite(effect):
        raise ConfigError("--effect must be a non-zero number in the headline metric's units "
                          "(e.g. 10 bias-score points)")


def headline(probe: str) -> tuple[str, str, float, str]:
    """``(family, metric, unbiased value, item noun)`` of a probe's headline metric."""
    from biaslab.compare.paired_data import family

    fam = family(probe)
    if fam is None or fam not in HEADLINE:
        from biaslab.probes import PROBES

        if probe not in PROBES:
            raise ConfigError(f"unknown probe {probe!r}; available: {', '.join(sorted(PROBES))}")
        raise ConfigError(f"no power plan for the {probe} probe yet")
    metric, null, noun = HEADLINE[fam]
    return fam, metric, null, noun


def plan(probe: str, effect: float, *, power: float = 0.8, alpha: float = 0.05, pilot: Path | None = None,
         seed: int = 0) -> dict[str, Any]:
    _check(effect, power, alpha)
    fam, metric, null, noun = headline(probe)
    count_key = "n_pairs" if fam == "paired-sentences" else "n_items"
    base = {"probe": probe, "metric": metric, "unbiased": null, "effect": effect, "power": power, "alpha": alpha}
    if fam in ("paired-sentences", "jobs-lum") and pilot is None:
        p1 = 0.5 + (effect / 100 if fam == "paired-sentences" else effect)
        if not 0 < p1 < 1:
            scale = "bias-score points (less than 50)" if fam == "paired-sentences" else "a rate (less than 0.5)"
            raise ConfigError(f"--effect {effect} is out of range for {metric}: give it in {scale}")
        res = binomial_n(p1, alpha, power)
        independent = "no predicate clustering" if count_key == "n_pairs" else "one character per occupation"
        return {**base, count_key: res["n"],
                "method": "exact binomial power (two-sided exact binomial test of p = 0.5)",
                "n_all_larger": res["n_all_larger"], "n_normal_approximation": res["n_normal"],
                "assumptions": [f"{noun} independent ({independent})",
                                "no ties" if count_key == "n_pairs" else "every character's gender detected",
                                f"true rate {p1:g} under the alternative",
                                f"rule: the smallest n whose exact power reaches {power:g}; exact power is a sawtooth "
                                f"in n, every n from {res['n_all_larger']} on reaches it"]}
    if fam == "fsb-judge" and pilot is None:
        if not 0 < abs(effect) < 1:
            raise ConfigError(f"--effect for pearson_r is a correlation between -1 and 1 (got {effect})")
        return {**base, count_key: fisher_n(effect, alpha, power), "method": "Fisher's z for a correlation against 0",
                "assumptions": ["texts independent", "bivariate normal scores (Fisher's z approximation)"]}
    if pilot is None:
        raise ConfigError(f"the {probe} probe has no closed form for {metric}: give a pilot run (--pilot RUN_DIR)")
    return {**base, **_from_pilot(fam, metric, effect, power, alpha, Path(pilot), count_key, noun, seed)}


def _pilot_rows(pilot: Path, probe_family: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from biaslab.compare.paired import load_run
    from biaslab.compare.paired_data import family

    run = load_run(pilot)
    if family(run.probe) != probe_family:
        raise ConfigError(f"the pilot run {pilot} is of the {run.probe} probe; give a run of the planned probe")
    rows = run.attempts()
    if not rows:
        raise ConfigError(f"the pilot run {pilot} has no attempts.jsonl; give a run directory written by `biaslab run`")
    return run.results, rows


def _boot_var(table: dict[str, np.ndarray], fn: Any, metric: str, units: list[np.ndarray] | None,
              strata: list[str] | None, seed: int) -> float:
    from biaslab.stats.paired import take_rows

    n = len(next(iter(table.values())))
    units = units if units is not None else [np.array([i]) for i in range(n)]
    strata = strata if strata is not None else ["all"] * len(units)
    by: dict[str, list[int]] = {}
    for u, s in enumerate(strata):
        by.setdefault(s, []).append(u)
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(N_BOOT):
        idx = np.concatenate([units[u] for m in by.values() for u in rng.choice(m, size=len(m), replace=True)])
        vals.append(fn(take_rows(table, idx)).get(metric, math.nan))
    arr = np.asarray(vals, dtype=float)
    return float(np.var(arr[np.isfinite(arr)], ddof=1))


def _from_pilot(fam: str, metric: str, effect: float, power: float, alpha: float, pilot: Path, count_key: str,
                noun: str, seed: int) -> dict[str, Any]:
    from biaslab.compare.paired_data import paired_data

    results, rows = _pilot_rows(pilot, fam)
    pdata = paired_data(fam, rows, rows, seed)
    n_pilot = pdata.n_shared
    var_items = _boot_var(pdata.a, pdata.fn, metric, None, None, seed)
    if fam == "paired-sentences":
        var_clusters = _boot_var(pdata.a, pdata.fn, metric, pdata.units, pdata.strata, seed)
        deff = var_clusters / var_items if var_items > 0 else 1.0
        tie = float(np.mean(pdata.a["tie"]))
        p1 = 0.5 + effect / 100
        if not 0 < p1 < 1:
            raise ConfigError(f"--effect {effect} is out of range for bias_score: give bias-score points "
                              "(less than 50)")
        res = binomial_n(p1, alpha, power)
        sizes = np.array([len(u) for u in pdata.units], dtype=float)
        k = len(sizes)
        m_pilot = float((sizes ** 2).sum() / sizes.sum())  # pairs per predicate, size-weighted
        icc = max(0.0, (deff - 1) / (m_pilot - 1)) if m_pilot > 1 else 0.0
        n0 = res["n"] / max(1e-9, 1 - tie)  # decided pairs needed, with ties
        # n pairs over the pilot's k predicates: clusters of n/k, design effect 1 + (n/k - 1) icc;
        # n = n0 * that design effect solves to n0 (1 - icc) / (1 - n0 icc / k)
        denom = 1 - n0 * icc / k
        n = math.ceil(n0 * (1 - icc) / denom) if icc > 0 and denom > 0 else (math.ceil(n0) if icc == 0 else None)
        out = {count_key: n, "n_independent": res["n"], "design_effect": deff, "icc": icc, "tie_rate": tie,
               "n_pilot": n_pilot, "n_predicates_pilot": k, "pilot": str(pilot),
               "method": "exact binomial power x the design effect of predicate clusters (intra-predicate "
                         "correlation from the pilot's cluster bootstrap, clusters grown to the planned size) "
                         "/ (1 - the pilot's tie rate)",
               "assumptions": [f"{res['n']} independent pairs would do (exact binomial, smallest n with power "
                               f">= {power:g})",
                               f"the pilot's design effect {deff:.2f} (variance of the bias score over predicate "
                               f"resamples / over pair resamples, {N_BOOT} resamples each) at {m_pilot:.2f} pairs "
                               f"per predicate gives an intra-predicate correlation of {icc:.3f}",
                               f"the planned pairs are spread over the pilot's {k} predicates: design effect "
                               f"1 + (n/{k} - 1) x {icc:.3f}",
                               f"ties at the pilot's rate ({tie:.3f}) decide nothing"]}
        if n is None:
            out["assumptions"].append(f"not reachable with {k} predicates: even infinitely many pairs per predicate "
                                      f"give at most {k / icc:.0f} independent pairs' worth; add predicates")
        elif deff < 1:
            out["assumptions"].append("a design effect below 1 (the stratification by target group) is not used "
                                      "to lower n")
        return out
    se1 = math.sqrt(var_items * n_pilot)
    if not math.isfinite(se1) or se1 == 0:
        raise ConfigError(f"the pilot run's {metric} does not vary over bootstrap resamples; give a larger pilot")
    n = normal_n(effect, se1, alpha, power)
    return {count_key: n, "n_pilot": n_pilot, "se_pilot": math.sqrt(var_items), "pilot": str(pilot),
            "method": "normal approximation with the standard error of the pilot's bootstrap over its "
                      f"{noun}, scaled as 1/sqrt(n)",
            "assumptions": [f"{noun} like the pilot's (same variability per {noun[:-1]})",
                            "standard error proportional to 1/sqrt(n)", f"{N_BOOT} bootstrap resamples"]}
