"""``biaslab plan PROBE --effect E``: items needed to detect an effect on the probe's headline metric.

Every probe declares its headline metric(s) and the form of their power calculation
(:class:`biaslab.probing.headline.Headline`, :mod:`biaslab.planning.forms`), so every probe can be planned
without a pilot: an exact binomial power for a share of independent units, Fisher's z for a correlation, or
the normal approximation with a stated standard deviation per unit. ``--metric`` picks another headline.

With ``--pilot RUN`` the plan uses a finished run's own spread, through the probe's per-item table
(:mod:`biaslab.compare.paired_data`):

* a share whose units cluster (the paired-sentence probes: the pairs built from one predicate move
  together): the pilot's design effect -- the variance of the metric over clusters divided by that over
  units (variances below) -- gives the intra-cluster correlation
  ``icc = (deff - 1) / (m - 1)`` (m: the pilot's size-weighted units per cluster); n units spread over the
  pilot's k clusters have design effect ``1 + (n/k - 1) icc``, and the plan solves
  ``n = n0 (1 + (n/k - 1) icc)`` for n (n0: the independent-units n divided by 1 - the pilot's tie rate).
  When ``n0 icc >= k`` no number of units suffices: more clusters.
* any other metric: the standard error of the metric from the pilot, scaled as 1/sqrt(n):
  ``n = n_pilot (SE (z_{1-alpha/2} + z_power) / E)^2`` (normal approximation).

The variances are those of the run report's own procedure where the probe's pairing gives the metric's unit
values (:meth:`~biaslab.probing.pairing.Pairing.unit_values`): the CR2 variance of their mean
(:func:`biaslab.stats.robust.cr2_inference`), with the pairing's clusters and strata, or each unit its own
cluster. A metric without unit values (a largest gap) takes the variance of the pilot's bootstrap over its items
or clusters instead (``variance`` in the JSON says which).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.errors import ConfigError
from biaslab.planning.forms import ProportionPlan
from biaslab.planning.power import binomial_n, normal_n
from biaslab.planning.shortfall import ASSUMED_ICC, headline_shortfall
from biaslab.probing.headline import Headline

N_BOOT = 2000


def _check(effect: float, power: float, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1 (got {alpha})")
    if not 0 < power < 1:
        raise ConfigError(f"--power must be between 0 and 1 (got {power}); e.g. 0.8")
    if effect == 0 or not math.isfinite(effect):
        raise ConfigError(
            "--effect must be a non-zero number in the headline metric's units (e.g. 10 bias-score points)"
        )


def headline(probe: str, metric: str | None = None) -> Headline:
    """The probe's headline metric (its first, or the one named ``metric``), as the probe declares it."""
    from biaslab.probes import get_probe_class

    cls = get_probe_class(probe)
    if not cls.headlines:
        raise ConfigError(
            f"the {probe} probe declares no headline metric, so it cannot be planned; "
            "its author should add one (docs/ADDING_A_PROBE.md)"
        )
    if metric is None:
        return cls.headlines[0]
    found = next((h for h in cls.headlines if h.metric == metric), None)
    if found is None:
        names = ", ".join(h.metric for h in cls.headlines)
        raise ConfigError(f"--metric {metric} is not a headline metric of {probe}; choose one of: {names}")
    return found


def count_key(h: Headline) -> str:
    """The JSON key of the planned number: ``n_pairs`` for pairs, else ``n_items``."""
    return "n_pairs" if h.plan.noun == "pairs" else "n_items"


def default_effect(h: Headline) -> float | None:
    """The effect planned for when none is given: the headline's release-gate margin, else the harm at which
    its mark B begins, towards worse (None when it declares neither)."""
    size = h.margin if h.margin is not None else h.marks.b if h.marks is not None else None
    if size is None:
        return None
    return -size if h.worse == "lower" else size


def plan(
    probe: str,
    effect: float | None = None,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    pilot: Path | None = None,
    seed: int = 0,
    metric: str | None = None,
    icc: float = ASSUMED_ICC,
) -> dict[str, Any]:
    """The items ``probe`` needs to detect ``effect`` on its headline metric (None: :func:`default_effect`);
    where that is more than the probe has, ``shortfall``: what would do instead
    (:func:`biaslab.planning.shortfall.headline_shortfall`, ``icc`` the intra-item correlation assumed)."""
    from biaslab.probing.file_probe.registry import recorded_name

    probe = recorded_name(probe)  # file:PATH -> file:<name>@<hash>, as its runs (a pilot) record it
    h = headline(probe, metric)
    chosen = effect is None
    if effect is None:
        effect = default_effect(h)
        if effect is None:
            raise ConfigError(f"{probe}'s {h.metric} declares no default effect; give --effect in its units ({h.unit})")
    _check(effect, power, alpha)
    base = {
        "probe": probe,
        "metric": h.metric,
        "unit": h.unit,
        "unbiased": h.unbiased,
        "effect": effect,
        "effect_default": chosen,
        "power": power,
        "alpha": alpha,
        "counts": h.plan.noun,
    }
    if not 0 <= icc <= 1:
        raise ConfigError(f"--icc must be between 0 and 1 (got {icc}); e.g. 0.1")
    if pilot is None:
        res = h.plan.closed(h.metric, h.unbiased, effect, power, alpha)
        out = {**base, count_key(h): res.pop("n"), **res}
    else:
        out = {**base, **_from_pilot(probe, h, effect, power, alpha, Path(pilot), seed)}
    short = headline_shortfall(probe, h, out[count_key(h)], power=power, alpha=alpha, icc=icc)
    if short is not None:
        out.update(n_available=short.n_items, shortfall=short.as_dict(), shortfall_text=short.sentences())
    return out


def _pilot_rows(pilot: Path, probe: str) -> list[dict[str, Any]]:
    from biaslab.compare.paired_data import family
    from biaslab.compare.run import load_run

    run = load_run(pilot)
    if run.probe != probe and (family(run.probe) is None or family(run.probe) != family(probe)):
        raise ConfigError(f"the pilot run {pilot} is of the {run.probe} probe; give a run of the planned probe")
    rows = run.attempts()
    if not rows:
        raise ConfigError(f"the pilot run {pilot} has no attempts.jsonl; give a run directory written by `biaslab run`")
    return rows


def _boot_var(
    table: dict[str, np.ndarray],
    fn: Any,
    metric: str,
    units: list[np.ndarray] | None,
    strata: list[str] | None,
    seed: int,
) -> float:
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


def _unit_var(pairing: Any, pdata: Any, metric: str, clustered: bool) -> float | None:
    """The CR2 variance of the metric's mean over the pilot's unit values (module docstring): over the pairing's
    clusters within their strata, or each unit its own cluster; None where the pairing gives none."""
    from biaslab.stats.robust import cr2_inference

    uv = pairing.unit_values(pdata.a).get(metric)
    if uv is None or int(np.count_nonzero(uv.mask)) < 2:
        return None
    values = np.where(uv.mask, np.asarray(uv.values, dtype=float), 0.0)
    if clustered and pdata.units is not None:
        members = [np.asarray(u, dtype=int) for u in pdata.units]
        totals = np.array([values[u].sum() for u in members])
        sizes = np.array([float(np.count_nonzero(uv.mask[u])) for u in members])
        strata = np.asarray(pdata.strata if pdata.strata is not None else ["all"] * len(members), dtype=object)
        keep = sizes > 0
        totals, sizes, strata = totals[keep], sizes[keep], strata[keep]
    else:
        totals, sizes, strata = values[uv.mask], np.ones(int(np.count_nonzero(uv.mask))), None
    if totals.size < 2:
        return None
    return cr2_inference(totals, sizes, strata, null=0.0).se ** 2


def _variances(pairing: Any, pdata: Any, metric: str, clusters: bool, seed: int) -> tuple[float, float | None, str]:
    """``(variance over units, over clusters (None unless asked), how)`` of the pilot's metric."""
    items = _unit_var(pairing, pdata, metric, False)
    grouped = _unit_var(pairing, pdata, metric, True) if clusters else None
    if items is not None and (grouped is not None or not clusters):
        return items, grouped, "CR2 variance of its unit values (the run report's procedure)"
    items = _boot_var(pdata.a, pdata.fn, metric, None, None, seed)
    if clusters:
        grouped = _boot_var(pdata.a, pdata.fn, metric, pdata.units, pdata.strata, seed)
    return items, grouped, f"bootstrap ({N_BOOT} resamples)"


def _from_pilot(
    probe: str, h: Headline, effect: float, power: float, alpha: float, pilot: Path, seed: int
) -> dict[str, Any]:
    from biaslab.compare.paired_data import paired_data, pairing_of

    pairing = pairing_of(probe)
    if pairing is None:
        raise ConfigError(
            f"the {probe} probe declares no per-item table of its attempts, so a pilot cannot be "
            "used; plan it without --pilot"
        )
    rows = _pilot_rows(pilot, probe)
    pdata = paired_data(pairing, rows, rows, seed)
    n_pilot = pdata.n_shared
    metric, noun, key = h.metric, h.plan.noun, count_key(h)
    var_items, var_clusters, how = _variances(
        pairing, pdata, metric, isinstance(h.plan, ProportionPlan) and pdata.units is not None, seed
    )
    if isinstance(h.plan, ProportionPlan) and pdata.units is not None and var_clusters is not None:
        deff = var_clusters / var_items if var_items > 0 else 1.0
        tie = float(np.mean(pdata.a["tie"])) if "tie" in pdata.a else 0.0
        p1 = h.plan.share(h.unbiased + effect)
        if not 0 < p1 < 1:
            raise ConfigError(
                f"--effect {effect:g} is out of range for {metric}: give it in the metric's units, "
                f"less than {(h.plan.high - h.plan.low) / 2:g} in size"
            )
        res = binomial_n(p1, alpha, power)
        sizes = np.array([len(u) for u in pdata.units], dtype=float)
        k = len(sizes)
        m_pilot = float((sizes**2).sum() / sizes.sum())  # pairs per predicate, size-weighted
        icc = max(0.0, (deff - 1) / (m_pilot - 1)) if m_pilot > 1 else 0.0
        n0 = res["n"] / max(1e-9, 1 - tie)  # decided pairs needed, with ties
        # n pairs over the pilot's k predicates: clusters of n/k, design effect 1 + (n/k - 1) icc;
        # n = n0 * that design effect solves to n0 (1 - icc) / (1 - n0 icc / k)
        denom = 1 - n0 * icc / k
        n = math.ceil(n0 * (1 - icc) / denom) if icc > 0 and denom > 0 else (math.ceil(n0) if icc == 0 else None)
        per_predicate = float(sizes.sum()) / k  # the pilot's pairs per predicate
        planned_deff = None if n is None else 1 + (n / k - 1) * icc
        assumptions = [
            f"{res['n']} independent pairs would do (exact binomial, smallest n with power >= {power:g})",
            f"the pilot's design effect {deff:.2f} (variance of the bias score over predicates / over pairs; "
            f"{how}) at {m_pilot:.2f} pairs per predicate gives an intra-predicate correlation of {icc:.3f}",
            f"the planned pairs are spread over the pilot's {k} predicates: design effect 1 + (n/{k} - 1) x {icc:.3f}",
            f"ties at the pilot's rate ({tie:.3f}) decide nothing",
        ]
        out = {
            key: n,
            "n_independent": res["n"],
            "design_effect": deff,
            "design_effect_planned": planned_deff,
            "icc": icc,
            "tie_rate": tie,
            "n_pilot": n_pilot,
            "n_predicates_pilot": k,
            "pilot": str(pilot),
            "variance": how,
            "method": "exact binomial power x the design effect of predicate clusters (intra-predicate "
            "correlation from the pilot's variances over predicates and over pairs, clusters grown to the planned "
            "size) / (1 - the pilot's tie rate)",
            "assumptions": assumptions,
        }
        if n is None:
            # K predicates of the pilot's size m: K m pairs with design effect 1 + (m - 1) icc reach the power
            # when K m >= n0 (1 + (m - 1) icc); a correlation above 1 (noise of a small pilot) counts as 1,
            # each predicate worth one independent pair
            rho = min(icc, 1.0)
            needed = math.ceil(n0 * (1 + (per_predicate - 1) * rho) / per_predicate - 1e-9)
            out.update(n_predicates_needed=needed, n_pairs_with_more_predicates=math.ceil(needed * per_predicate))
            assumptions.append(
                f"not reachable with {k} predicates: even infinitely many pairs per predicate "
                f"give at most {k / icc:.0f} independent pairs' worth; add predicates: "
                f"{needed} predicates in all with the pilot's {per_predicate:.1f} pairs each "
                f"({out['n_pairs_with_more_predicates']} pairs) reach power {power:g}"
            )
        elif deff < 1:
            assumptions.append("a design effect below 1 (the stratification by target group) is not used to lower n")
        return out
    se1 = math.sqrt(var_items * n_pilot)
    if not math.isfinite(se1) or se1 == 0:
        raise ConfigError(f"the pilot run's {metric} does not vary over its {noun}; give a larger pilot")
    n = normal_n(effect, se1, alpha, power)
    return {
        key: n,
        "n_pilot": n_pilot,
        "se_pilot": math.sqrt(var_items),
        "pilot": str(pilot),
        "variance": how,
        "method": f"normal approximation with the standard error of the pilot's metric over its {noun} ({how}), "
        "scaled as 1/sqrt(n)",
        "assumptions": [
            f"{noun} like the pilot's (same variability per {noun[:-1]})",
            "standard error proportional to 1/sqrt(n)",
        ],
    }
