"""``biaslab plan PROBE --effect E``: items needed to detect an effect on the probe's headline metric.

* Paired-sentence probes (headline ``bias_score``, 0-100, unbiased 50): the exact two-sided
  binomial test of "stereotype preferred in half the pairs" with independent pairs and no ties
  (:func:`biaslab.planning.power.binomial_n`, E in bias-score points: 50 + E). With ``--pilot RUN``
  the pairs are not independent: the pairs built from one predicate move together. The pilot's
  design effect -- the variance of its bias score under the stratified cluster bootstrap over
  predicates divided by that under the bootstrap over pairs -- multiplies the number of pairs,
  and the pilot's tie rate divides it (ties decide nothing).
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
        n = math.ceil(res["n"] * max(deff, 1.0) / max(1e-9, 1 - tie))
        return {count_key: n, "n_independent": res["n"], "design_effect": deff, "tie_rate": tie,
                "n_pilot": n_pilot, "n_predicates_pilot": len(pdata.units), "pilot": str(pilot),
                "method": "exact binomial power x the pilot's design effect (cluster bootstrap over predicates) "
                          "/ (1 - the pilot's tie rate)",
                "assumptions": [f"{res['n']} independent pairs would do (exact binomial, smallest n with power "
                                f">= {power:g})",
                                f"predicate clusters of the pilot's size and strength: design effect {deff:.2f} "
                                f"(variance of the bias score over predicate resamples / over pair resamples, "
                                f"{N_BOOT} resamples each)",
                                f"ties at the pilot's rate ({tie:.3f}) decide nothing"]
                + (["a design effect below 1 (the stratification by target group) is not used to lower n"]
                   if deff < 1 else [])}
    se1 = math.sqrt(var_items * n_pilot)
    if not math.isfinite(se1) or se1 == 0:
        raise ConfigError(f"the pilot run's {metric} does not vary over bootstrap resamples; give a larger pilot")
    n = normal_n(effect, se1, alpha, power)
    return {count_key: n, "n_pilot": n_pilot, "se_pilot": math.sqrt(var_items), "pilot": str(pilot),
            "method": "normal approximation with the standard error of the pilot's bootstrap over its "
                      f"{noun}, scaled as 1/sqrt(n)",
            "assumptions": [f"{noun} like the pilot's (same variability per {noun[:-1]})",
                            "standard error proportional to 1/sqrt(n)", f"{N_BOOT} bootstrap resamples"]}
