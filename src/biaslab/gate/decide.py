"""The gate's decisions: every margin tested (:mod:`biaslab.stats.noninferiority`), Holm's step-down adjustment
across all of them, a verdict per metric and, for an inconclusive one, how many items would settle it.

Verdicts (non-inferiority): ``non-inferior`` (Holm-adjusted p <= alpha), ``regressed`` (the candidate is worse by
the margin or more: the one-sided lower bound of the harm difference reaches the margin), ``inconclusive``
(neither), ``not tested`` (the metric is undefined on a run or has no interval, or the candidate suite has no
run of the probe). With ``--equivalence``: ``equivalent``, ``different`` (the value moved by the margin or more),
``inconclusive``, ``not tested``. The gate passes when every metric is non-inferior (equivalent).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.compare.paired import pair_runs
from biaslab.compare.paired_data import pairing_of
from biaslab.compare.run import Run
from biaslab.errors import ConfigError
from biaslab.gate.requirements import finite, parse_min_mark, parse_requirement, requirement_rows
from biaslab.gate.sources import load_side, match
from biaslab.gate.specs import MarginSpec, parse_margins, resolve
from biaslab.gate.units import (
    Units,
    agreement_p,
    binary_test,
    correlation_test,
    metric_units,
    too_few,
    too_few_unbounded,
)
from biaslab.gate.verdicts import verdict
from biaslab.stats import adjust_pvalues
from biaslab.stats import noninferiority as ni

N_RESAMPLES = 2000
Z95 = 1.959963984540054
PASS = {"non-inferior", "equivalent"}


def run_gate(
    baseline: Path,
    candidate: Path,
    margins: list[str] | None = None,
    *,
    alpha: float = 0.05,
    equivalence_mode: bool = False,
    power: float = 0.8,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    baseline_model: str | None = None,
    candidate_model: str | None = None,
    require: list[str] | None = None,
    min_mark: str | None = None,
) -> dict[str, Any]:
    """The gate's result (the ``--json`` content): ``{"passed", "metrics": [...], "requirements": [...], ...}``
    (``require``, ``min_mark``: absolute conditions on the candidate, :mod:`biaslab.gate.requirements`)."""
    if not 0 < alpha < 0.5:
        raise ConfigError(f"--alpha must lie between 0 and 0.5 (got {alpha:g}); e.g. 0.05")
    if n_resamples < 200:
        raise ConfigError(f"--resamples must be at least 200 (got {n_resamples})")
    given = parse_margins(list(margins or []))
    mark = parse_min_mark(min_mark)
    for text in require or []:
        parse_requirement(text)  # a malformed one fails before any run is read
    base = load_side(baseline, baseline_model, role="baseline")
    cand = load_side(candidate, candidate_model, role="candidate")
    pairs, notes = match(base, cand)
    shared = {
        p: set(ra.results.metrics) & (set(rb.results.metrics) if rb is not None else set(ra.results.metrics))
        for p, ra, rb in pairs
    }
    specs, more_notes = resolve(given, shared, suites=base.kind == "suite")
    notes += more_notes
    if not specs:
        raise ConfigError("nothing to gate: give --margin METRIC=DELTA")
    m = len(specs)
    n_res = max(n_resamples, math.ceil(10 * m / alpha))  # p values fine enough for Holm's smallest level
    beta = alpha / (10 * m)  # first-step level of the tests of metrics worse both ways: below every Holm level
    rows: list[dict[str, Any]] = []
    designs: dict[str, dict[str, Any]] = {}
    for probe, ra, rb in pairs:
        mine = [s for s in specs if s.probe == probe]
        if not mine:
            continue
        if rb is None:
            designs[probe] = {"design": "none", "note": "the candidate suite has no run of this probe"}
            rows += [_untested(s, "the candidate has no run of this probe") for s in mine]
            continue
        rows += _test_probe(
            mine,
            ra,
            rb,
            designs,
            alpha=alpha,
            beta=beta,
            equivalence_mode=equivalence_mode,
            seed=seed,
            n_resamples=n_res,
            m=m,
        )
    adjusted = adjust_pvalues([r["p"] for r in rows], "holm", missing="as_one")  # an untested margin still counts
    for r, q in zip(rows, adjusted, strict=True):
        r["p_holm"] = q if r["p"] is not None else None
        verdict(r, alpha=alpha, m=m, power=power, equivalence_mode=equivalence_mode)
    checks = requirement_rows(cand, list(require or []), mark)
    passed = all(r["verdict"] in PASS for r in rows) and all(c["status"] == "met" for c in checks)
    return {
        "passed": passed,
        "requirements": checks,
        "mode": "equivalence" if equivalence_mode else "non-inferiority",
        "alpha": alpha,
        "adjustment": f"Holm's step-down across the {m} margin(s)",
        "resamples": n_res,
        "power": power,
        "baseline": _side_json(base),
        "candidate": _side_json(cand),
        "probes": designs,
        "metrics": rows,
        "notes": notes,
        "method": _method(equivalence_mode, alpha, beta),
    }


def _side_json(side: Any) -> dict[str, Any]:
    return {
        "path": str(side.path),
        "kind": side.kind,
        "model": side.model,
        "label": side.label,
        "probes": list(side.runs),
    }


def _method(equivalence_mode: bool, alpha: float, beta: float) -> str:
    if equivalence_mode:
        return (
            f"equivalence: two one-sided bootstrap tests of candidate - baseline against -margin and +margin, "
            f"each at {alpha:g}; Holm across the margins"
        )
    return (
        f"non-inferiority: one-sided bootstrap test (level {alpha:g}) of harm(candidate) - harm(baseline) >= "
        "margin, harm = the distance from unbiased towards worse; metrics worse both ways: shown below the "
        "margin on both sides of the unbiased value (intersection-union), each side by the smaller of two "
        f"studentized contrasts, their slack taken in a first step at {beta:.2g}; Holm across the margins"
    )


def _base_row(s: MarginSpec) -> dict[str, Any]:
    h = s.headline
    return {
        "name": s.name,
        "probe": s.probe,
        "metric": s.metric,
        "margin": s.margin,
        "margin_source": "given" if s.given else "probe default",
        "worse": h.worse,
        "unbiased": h.unbiased,
        "unit": h.unit,
        "noun": h.plan.noun,
        "design": None,
        "baseline": None,
        "candidate": None,
        "diff": None,
        "upper": None,
        "lower": None,
        "se": None,
        "p": None,
        "n": None,
        "method": None,
        "reason": None,
        "units": None,
        "note": None,
    }


def _untested(s: MarginSpec, reason: str) -> dict[str, Any]:
    return {**_base_row(s), "reason": reason}


def _test_probe(
    specs: list[MarginSpec],
    ra: Run,
    rb: Run,
    designs: dict[str, dict[str, Any]],
    *,
    alpha: float,
    beta: float,
    equivalence_mode: bool,
    seed: int,
    n_resamples: int,
    m: int,
) -> list[dict[str, Any]]:
    """The rows of one probe's metrics: paired where the pairing defines the metric on the shared items,
    unpaired (from the runs' intervals) otherwise."""
    pdata, why = pair_runs(ra, rb, seed)
    kw: dict[str, Any] = {"alpha": alpha, "beta": beta, "equivalence_mode": equivalence_mode, "m": m}
    rows: dict[str, dict[str, Any]] = {}
    if pdata is not None:
        va, vb = pdata.fn(pdata.a), pdata.fn(pdata.b)
        names = [
            s.metric for s in specs if finite(va.get(s.metric)) is not None and finite(vb.get(s.metric)) is not None
        ]
        reps = (
            ni.paired_replicates(
                pdata.a,
                pdata.b,
                pdata.fn,
                names,
                units=pdata.units,
                strata=pdata.strata,
                n_resamples=n_resamples,
                seed=seed,
            )
            if names
            else {}
        )
        note = f"paired on {pdata.n_shared} shared {specs[0].headline.plan.noun}; bootstrap units: {pdata.unit}"
        if max(pdata.n_a, pdata.n_b) > pdata.n_shared:
            note += (
                f"; {pdata.n_a - pdata.n_shared} only in the baseline and {pdata.n_b - pdata.n_shared} only "
                "in the candidate left out"
            )
        paired_units = metric_units(pdata, pairing_of(specs[0].probe), list(reps))
        for s in specs:
            if s.metric in reps:
                a, b = float(va[s.metric]), float(vb[s.metric])
                rep_a, rep_b = reps[s.metric]
                rows[s.metric] = margin_row(
                    s, a, b, rep_a - a, rep_b - b, "paired", pdata.n_shared, paired_units[s.metric], **kw
                )
        why = "the probe's pairing does not define it on the shared items"
        left = [s.metric for s in specs if s.metric not in rows]
        if left:
            note += f"; unpaired ({why}): {', '.join(left)}"
        designs[specs[0].probe] = {"design": "paired", "note": note, "n_shared": pdata.n_shared}
    else:
        designs[specs[0].probe] = {
            "design": "unpaired",
            "note": f"unpaired ({why}): normal errors from each run's reported 95% interval, independent runs",
        }
    n_now = min(ra.results.n_items, rb.results.n_items)
    for k, s in enumerate(specs):
        if s.metric in rows:
            continue
        ma, mb = ra.results.metric(s.metric), rb.results.metric(s.metric)
        value_a, value_b = finite(ma.get("value")), finite(mb.get("value"))
        se = [_se(mm) for mm in (ma, mb)]
        if value_a is None or value_b is None:
            rows[s.metric] = _untested(s, _lacks({"baseline": ma, "candidate": mb}, "value", "is not defined"))
        elif se[0] is None or se[1] is None:
            rows[s.metric] = _untested(
                s,
                _lacks({"baseline": ma, "candidate": mb}, "ci_low", "reports no interval for it")
                + " (runs that cannot be paired on it are tested from their intervals)",
            )
        else:
            da, db = ni.normal_replicates(se[0], se[1], n_resamples, seed + k)
            units = Units(min(_units_of(ma, ra), _units_of(mb, rb)), "units", False, None)
            rows[s.metric] = margin_row(s, value_a, value_b, da, db, "unpaired", n_now, units, **kw)
    return [rows[s.metric] for s in specs]


def _lacks(metrics: dict[str, dict[str, Any]], key: str, what: str) -> str:
    """Which run lacks ``key`` of the metric, and why where the run says: "the candidate's run: is not defined
    (no female answers)"."""
    parts = []
    for role, m in metrics.items():
        if finite(m.get(key)) is None:
            why = m.get("reason") or m.get("note")
            parts.append(
                f"the {role}'s run {what}" + (f" ({why})" if why else "")
                if m
                else f"the {role}'s run has no such metric"
            )
    return "; ".join(parts) or f"a run {what}"


def _units_of(metric: dict[str, Any], run: Run) -> int:
    """The independent units behind a run's metric: its clusters where it reports them, else its items."""
    for key in ("n_clusters", "n"):
        v = metric.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return int(run.results.n_items)


def _se(metric: dict[str, Any]) -> float | None:
    lo, hi = finite(metric.get("ci_low")), finite(metric.get("ci_high"))
    return (hi - lo) / (2 * Z95) if lo is not None and hi is not None and hi > lo else None


def margin_row(
    s: MarginSpec,
    a: float,
    b: float,
    da: np.ndarray,
    db: np.ndarray,
    design: str,
    n_now: int,
    units: Units,
    *,
    alpha: float,
    beta: float,
    equivalence_mode: bool,
    m: int,
) -> dict[str, Any]:
    h = s.headline
    values = {"design": design, "baseline": a, "candidate": b, "n": n_now, "units": units.k, "note": _flip(h, a, b)}
    small = too_few(units.k, alpha, m) or (too_few_unbounded(units.k) if h.bounds is None else None)
    if small is not None:
        return {**_base_row(s), **values, "reason": small, "too_small": True}
    if units.agree:  # the same on every unit: no spread to test, a bound from the units alone (gate/units.py)
        p = agreement_p(units, s.margin)
        if p is None:
            why = "the runs agree on every unit and the metric is not a mean of values in a known range"
            return {**_base_row(s), **values, "reason": f"too small: {why}", "too_small": True}
        return {
            **_base_row(s),
            **values,
            "diff": b - a if equivalence_mode else h.harm_of(b) - h.harm_of(a),
            "p": p,
            "agree": {"k": units.k, "width": units.agreement_width, "unit": units.unit},
            "method": f"the runs agree on all {units.k} {units.unit}: p = (1 - margin / {units.agreement_width:g})^"
            f"{units.k}, the chance of no differing unit were the candidate worse by the margin",
        }
    scored = binary_test(units, s.margin, h.worse, alpha, equivalence_mode) or correlation_test(
        units, s.margin, h.worse, alpha, equivalence_mode
    )
    if scored is not None:
        p, upper, lower, method = scored
        diff = b - a if equivalence_mode else h.harm_of(b) - h.harm_of(a)
        se = (upper - lower) / (2 * Z95) if math.isfinite(upper - lower) else None
        row = {"diff": diff, "upper": upper, "lower": lower, "se": se, "p": p, "method": method}
        return {**_base_row(s), **values, **row}
    try:
        if equivalence_mode:
            t = ni.equivalence(
                a, b, da, db, margin=s.margin, alpha=alpha, units=units.k, min_sd=units.null_sd(s.margin)
            )
        else:
            t = ni.noninferiority(
                a, b, da, db, margin=s.margin, worse=h.worse, unbiased=h.unbiased, alpha=alpha, beta=beta,
                units=units.k, min_sd=units.null_sd(s.margin),
            )  # fmt: skip
    except ValueError as exc:  # too few usable replicates
        return _untested(s, f"cannot be tested: {exc}")
    return {
        **_base_row(s),
        **values,
        "diff": t.diff,
        "upper": t.upper,
        "lower": t.lower,
        "se": t.sd,
        "p": t.p,
        "method": t.method,
    }


def _flip(h: Any, a: float, b: float) -> str | None:
    """A note when a metric worse both ways crossed its unbiased value: the same harm, the other direction."""
    if h.worse != "away" or (a - h.unbiased) * (b - h.unbiased) >= 0:
        return None
    side = (lambda v: f"favours {h.favours}" if v > h.unbiased else "favours the other group") if h.favours else (
        lambda v: f"above {h.unbiased:g}" if v > h.unbiased else f"below {h.unbiased:g}"
    )  # fmt: skip
    return f"the bias changed direction: {side(a)} in the baseline ({a:.3g}), {side(b)} in the candidate ({b:.3g})"
