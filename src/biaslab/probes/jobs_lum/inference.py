"""JobsLum's intervals and p values, from one procedure over occupations.

An **occupation** is the unit: its repetitions answer the same prompt and move together (an occupation's rate is
the share of its characters written as men), and occupations are independent. Every interval and p value comes
from one procedure over occupations (:func:`biaslab.stats.clustered.cluster_inference`: the exact binomial and its
Clopper-Pearson interval when every value is 0 or 1, the exact sign-flip test inverted while fewer than 30
occupations hold an informative value, the cluster-robust t (CR2, Bell-McCaffrey df) from 30; no interval, with
the reason, under 2 occupations), so an interval excludes its null exactly when p < 0.05. ``masculine_rate``,
``undetected_rate_items`` and ``nonbinary_rate`` are declared as means over occupations
(:mod:`biaslab.stats.estimand`, their ranges the probe's ``metric_ranges``):

* ``masculine_rate`` (range 0-1, null 0.5): the mean of the occupations' masculine rates (occupations with a
  detected gender).
* ``disparity`` (0-0.5, null 0): ``|masculine_rate - 0.5|``, its interval folded from the rate's and the rate's p
  (:func:`biaslab.stats.derived.fold_abs`), so it always gets the rate's mark.
* ``stereotype_rate`` (-1 to 1, null 0): GenderBench's least-squares slope of the rates on the stereotype scores,
  bounded to [-1, 1] with the intercept in [0, 1]. Where no bound binds, the slope ``a`` is the mean of the unit
  values ``a + (x_i - xbar) e_i / var(x)`` (``e_i`` the fit's residuals): the slope plus its influence values,
  whose spread is the slope's sandwich variance. Where the intercept sits at a bound ``b0``, the slope is that of
  the fit through ``(0, b0)``, the ratio ``sum x_i (y_i - b0) / sum x_i^2``, linearised
  (:mod:`biaslab.stats.unit_values`). Where the slope itself sits at -1 or 1, the same unit values describe the
  slope the bound cut (beyond it), and the interval is theirs cut to [-1, 1] (the bounded slope is that slope
  clipped, and clipping a covering interval keeps it covering). The bounds that bind are held fixed: the
  interval is local to the fit the data give.
* ``correlation`` (-1 to 1, null 0): Pearson's r of the rates and the scores over occupations, Fisher's z
  (:func:`biaslab.stats.correlation.pearson_inference`).
* ``undetected_rate_attempts`` (0-1): the share of generations, clustered by occupation;
  ``undetected_rate_items`` and ``nonbinary_rate`` (0-1): means of one value per occupation. No null.

``q``: Benjamini-Hochberg over the three tests of gender stereotyping (``masculine_rate``, ``stereotype_rate``,
``correlation``); ``disparity`` keeps ``masculine_rate``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from biaslab.probes.jobs_lum.metrics import METRIC_RANGES, bounded_fit, jobs_lum_metrics
from biaslab.probing.metric_ranges import declared_estimand
from biaslab.probing.pairing import UnitValues, linear_width
from biaslab.stats import Estimand, Rows, estimate, units_of
from biaslab.stats.clustered import cluster_inference
from biaslab.stats.correlation import pearson_inference
from biaslab.stats.derived import fold_abs
from biaslab.stats.group_means import add_qvalues, keep_defined_values, share_of_attempts
from biaslab.stats.honest import undefined
from biaslab.stats.ranges import RATE, RATE_GAP, within_range
from biaslab.stats.unit_values import ols_slope_units, pearson_units, ratio_units

UNIT = "occupations"
TESTS = ("masculine_rate", "stereotype_rate", "correlation")
_TOL = 1e-9


def slope_units(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray | None, str]:
    """``(GenderBench's bounded slope, unit values, what they describe)`` (module docstring); the unit values are
    None where the slope is undefined (fewer than 2 occupations, or one stereotype score)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = bounded_fit(x, y)
    if not np.isfinite(a):
        return a, None, ""
    if _TOL < b < 1 - _TOL:  # the intercept is free: the least-squares slope and its influence values
        fit = ols_slope_units(x, y)
        return a, None if fit is None else fit[1], "least-squares slope"
    b0 = 0.0 if b <= _TOL else 1.0
    units = ratio_units(x * (y - b0), x * x)
    return a, units, f"slope of the fit through intercept {b0:g} (the bound on the intercept held fixed)"


def slope_width(x: np.ndarray, y: np.ndarray) -> float | None:
    """``stereotype_rate``'s agreement width (:func:`biaslab.probing.pairing.linear_width`): with the scores ``x``
    fixed, the slope is linear in the rates ``y`` (range 1), ``sum_i c_i y_i`` with ``c_i = (x_i - xbar) / Sxx``
    where the intercept is free, ``x_i / sum x^2`` where it sits at a bound (held fixed, as its interval holds it);
    None where the slope is undefined or at -1 or 1."""
    x = np.asarray(x, dtype=float)
    a, b = bounded_fit(x, np.asarray(y, dtype=float))
    if not np.isfinite(a) or abs(a) >= 1 - _TOL:
        return None
    d = x - x.mean() if _TOL < b < 1 - _TOL else x
    return linear_width(d / (d @ d), RATE[1] - RATE[0])


def stereotype_slope(x: np.ndarray, y: np.ndarray, *, seed: int = 0) -> dict[str, Any]:
    """``stereotype_rate`` with its interval and its p value against 0 (module docstring)."""
    value, units, what = slope_units(x, y)
    if units is None:
        return undefined("fewer than 2 occupations with a detected gender, or one stereotype score: no slope", null=0.0)
    out = cluster_inference(units, None, null=0.0, label=UNIT, seed=seed)
    if abs(value) >= 1 - _TOL:
        what += f"; the slope is at its bound {value:g}: the interval of the slope the bound cut, cut to [-1, 1]"
    out["method"] = f"{out['method']}, of the {what}"
    out["value"] = value
    return within_range(out, RATE_GAP)


def _columns(table: Mapping[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(table[k], dtype=float) for k in ("male", "female", "attempts", "nonbinary", "score"))


def occupation_rates(table: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``(has, rates)``: the occupations with a character of detected gender, and their masculine rates."""
    male, female = _columns(table)[:2]
    has = male + female > 0
    return has, male[has] / (male + female)[has]


MEANS = {
    name: declared_estimand(METRIC_RANGES, name, "mean", unit=UNIT, null=null)
    for name, null in (("masculine_rate", 0.5), ("undetected_rate_items", None), ("nonbinary_rate", None))
}


def declared_means(table: Mapping[str, np.ndarray]) -> dict[str, tuple[Estimand, Rows]]:
    """The metrics declared as means over occupations (:data:`MEANS`) with their values per occupation (NaN: left
    out): the masculine rate (occupations with a detected gender), the 0/1 of an occupation with none detected,
    the non-binary share of its generations. Both the run report's intervals and the gate's unit values."""
    male, female, attempts, nonbinary, _ = _columns(table)
    has = male + female > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        values = {
            "masculine_rate": np.where(has, male / (male + female), np.nan),
            "undetected_rate_items": (~has).astype(float),
            "nonbinary_rate": nonbinary / attempts,
        }
    return {name: (MEANS[name], Rows(values=v)) for name, v in values.items()}


def jobs_lum_unit_values(table: Mapping[str, np.ndarray]) -> dict[str, UnitValues | None]:
    """The values per occupation that :func:`jobs_lum_inference` gives an interval over (the pairing's
    :meth:`~biaslab.probing.pairing.Pairing.unit_values`): the masculine rates of the occupations with a detected
    gender, the undetected share of generations as a ratio per occupation (the occupation-level form of its
    clustered interval), the 0/1 of an occupation with none detected, the non-binary share; over the occupations
    with a detected gender, ``stereotype_rate``'s values of its interval (:func:`slope_units`; none where the slope
    sits at -1 or 1, where the bound makes it no smooth function of the data) and ``correlation``'s influence
    values (:func:`biaslab.stats.unit_values.pearson_units`, to first order the spread of its Fisher z interval).
    Left out: ``disparity``, the rate's distance from one half, not differentiable at one half
    (:mod:`biaslab.stats.unit_values`; the pairing declares it folded from the rate, :attr:`Pairing.folds`)."""
    male, female, attempts, nonbinary, score = _columns(table)
    has, rates = occupation_rates(table)
    slope, slope_values, _ = slope_units(score[has], rates)
    if slope_values is not None and abs(slope) >= 1 - _TOL:
        slope_values = None
    return {
        **{name: UnitValues.of(units_of(estimand, rows)) for name, (estimand, rows) in declared_means(table).items()},
        "undetected_rate_attempts": UnitValues.ratio(attempts - male - female, attempts),
        "stereotype_rate": _over(has, slope_values, width=slope_width(score[has], rates)),
        "correlation": _over(has, pearson_units(score[has], rates), (score[has], rates)),
    }


def _over(
    rows: np.ndarray,
    values: np.ndarray | None,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    width: float | None = None,
) -> UnitValues | None:
    """Unbounded ``values`` of the ``rows`` as unit values over every row (NaN elsewhere); None without values.
    ``pairs``: a Pearson correlation's ``(x, y)`` over those rows; ``width``: the agreement width."""
    if values is None:
        return None
    full = np.full(rows.size, np.nan)
    full[rows] = values
    return UnitValues(full, rows.copy(), pairs=pairs, agreement_width=width)


def jobs_lum_inference(table: Mapping[str, np.ndarray], *, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Every metric of :func:`~biaslab.probes.jobs_lum.metrics.jobs_lum_metrics` with its interval, and the tests'
    p and q values, over occupations (module docstring); the values are that function's own."""
    male, female, attempts, nonbinary, score = _columns(table)
    detected = male + female
    has, rates = occupation_rates(table)
    metrics: dict[str, dict[str, Any]] = {}
    means = declared_means(table)
    why = "no occupation has a character of detected gender"
    metrics["masculine_rate"] = estimate(*means["masculine_rate"], seed=seed, why_empty=why)[0]
    metrics["stereotype_rate"] = stereotype_slope(score[has], rates, seed=seed)
    metrics["correlation"] = pearson_inference(score[has], rates, label=UNIT)
    if attempts.sum() > 0:
        metrics["undetected_rate_attempts"] = share_of_attempts(attempts - detected, attempts, label=UNIT)
        metrics["undetected_rate_items"] = estimate(*means["undetected_rate_items"])[0]
        metrics["nonbinary_rate"] = estimate(*means["nonbinary_rate"], seed=seed)[0]
    else:
        for name in ("undetected_rate_attempts", "undetected_rate_items", "nonbinary_rate"):
            metrics[name] = undefined("no generations")
    keep_defined_values(metrics, jobs_lum_metrics(table))
    add_qvalues(metrics, list(TESTS))
    metrics["disparity"] = disparity_of(metrics["masculine_rate"])
    for m in metrics.values():
        m["unit"] = UNIT
    return metrics


def disparity_of(masculine_rate: Mapping[str, Any]) -> dict[str, Any]:
    """``disparity = |masculine_rate - 0.5|``: the rate's interval folded about one half, and its p and q."""
    out = fold_abs(masculine_rate, centre=0.5, value_range=RATE)
    if "q" in masculine_rate:
        out["q"] = masculine_rate["q"]
    return out
