"""What a gated metric rests on: how many independent units (items, or clusters of items), and whether the two
runs agree on every one of them.

A test on ``k`` units cannot be more certain than its units allow: no exact test on ``k`` units (a sign flipped
per unit) gives a one-sided p below ``2^-k``, so a metric on fewer units than ``log2(m / alpha)`` can never be
shown non-inferior at Holm's smallest level ``alpha / m`` and is *too small* (it fails the gate).

**Runs that agree on every unit** (the same answers on every shared item) have no spread to test: a bootstrap
of them gives every replicate the same difference, 0, and its p value is the smallest it can give, whatever
``k``. Where the metric is a mean of one value per item in a known range of width ``w`` (a rate: 1), a
candidate truly worse by the margin ``delta`` needs at least a share ``delta / w`` of the population's items to
be answered differently, and ``k`` units drawn without one such item happen with probability at most
``(1 - delta / w)^k``: that is the p value (a cluster counts as one draw). The same reasoning holds for any
metric whose change one unit's answers can bound: its *agreement width* ``W`` (``UnitValues.agreement_width``) is
the largest change in the metric that one unit can make, times the number ``N`` of units, so that a change of
``delta`` needs a share ``delta / W`` of the units and ``p = (1 - delta / W)^k``. A mean of values in a range of
width ``w`` has ``W = w``. A linear statistic of a fixed design, ``sum_i c_i y_i`` with each ``y_i`` in a range of
width ``w_y`` (a least-squares slope of bounded ``y`` on a fixed ``x``: ``c_i = (x_i - xbar) / Sxx``), has ``W = N
max_i |c_i| w_y`` (the slope's: ``max_i |x_i - xbar| w_y / (Sxx / N)``); a contrast of group means
``sum_g c_g mean_g(y)``, ``W = w_y max_g |c_g| / share_g``; where rows cluster, ``W`` (a mean's too) grows by
the largest cluster's rows over the mean cluster's: the differing rows may all sit in the largest clusters. The
sample's ``x`` (and groups, and the rows the statistic is over) stand for the population's: an approximation, as
is holding fixed a bound that binds on the fit. A *folded* metric ``|x - c|`` of a metric ``x`` with such units
(``Pairing.folds``) moves no more than ``x`` does (``||x' - c| - |x - c|| <= |x' - x|``), so it takes ``x``'s
units and width for this bound, and only for it: it is no mean, and is otherwise tested by the paired bootstrap.
Where none of this applies (a correlation, which is not linear in the answers, or a range unknown), the
agreement cannot be turned into a bound: too small.

A pooled rate (yes over detected answers) is such a mean of its linearised values over the rows with a
denominator (:class:`biaslab.probing.pairing.UnitValues`), which may differ between the runs: its units are the
rows either run counts, and its values are 0/1 where each run's own are.

**A metric with no declared range** (an unbounded one: a log-likelihood difference) on fewer than
:data:`MIN_UNBOUNDED` units is *too small*: no test holds its level for every distribution of such values
(Bahadur and Savage 1956), and the skewness correction (:mod:`biaslab.stats.skew`) reads the skewness from the
sample, which on 6 units cannot show more than ``(k - 2) / sqrt(k - 1) = 1.8`` (an exponential's is 2). From 10
units the corrected test held 5% for normal, t3, exponential and lognormal (sigma 0.5) differences; a lognormal
with sigma 1 still passed 6-7% (``scripts/gate_clustered_type1.py``).

**Means of 0/1 values** (a rate over items): a sample with few differing items shows little spread, and a test
that takes its standard error from the sample passes too often when the baseline sits near 0 or 1 (18% at the
margin with 30 items, a baseline at 0 and a candidate at 0.1). Under the null (the candidate worse by the margin)
the differences vary at least as a Bernoulli of the margin's share does; the test uses the larger of that and the
sample's standard error (:meth:`Units.null_sd`), as a score test does.

**A Pearson correlation over the same rows** (the pairing's unit values carry its ``(x, y)``, and both runs share
``x``: two judges' scores against the same human scores): Zou's interval for the difference of two correlations
that share a variable (:func:`biaslab.stats.correlation.overlapping_p`), which holds alpha at the margin from 10
rows where the paired bootstrap and a t test of r's influence values do not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from biaslab.compare.inference import row_clusters


@dataclass(frozen=True)
class Units:
    k: int  # independent units (clusters where the items cluster) the metric rests on
    unit: str  # what they are, plural
    agree: bool  # the runs agree on every unit
    width: float | None  # the width of the range of a unit's value, where the metric is a mean of them
    binary: int = 0  # where every value lies at an end of that range: the items (rows) the mean is over; else 0
    updown: tuple[int, int] | None = None  # unclustered 0/1 items: how many went up (0 -> 1), how many down
    # a Pearson correlation of each run over the same rows and the same x: ``(x, y_baseline, y_candidate)``
    overlap: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, compare=False)
    span: float | None = None  # the agreement width where it is not ``width`` (module docstring)

    @property
    def agreement_width(self) -> float | None:
        """The width the agreement bound uses (module docstring): ``span`` where set, else ``width``."""
        return self.span if self.span is not None else self.width

    def null_sd(self, margin: float) -> float:
        """The smallest standard error of a difference of two means of 0/1 values (scaled to the width) when the
        true difference is the margin: a difference of ``margin`` needs a share ``s = margin / width`` of items
        to differ, and their differences vary at least as a Bernoulli(s) does (the score test's variance, taken
        under the null rather than from the sample, which sees no variance where it sees no differing item)."""
        if not self.binary or not self.width:
            return 0.0
        share = min(1.0, margin / self.width)
        return self.width * math.sqrt(share * (1 - share) / self.binary)


def metric_units(pdata: Any, pairing: Any, metrics: list[str]) -> dict[str, Units]:
    """The units of each of ``metrics`` on paired data (:class:`biaslab.compare.paired_data.PairedData`)."""
    clusters, _ = row_clusters(pdata.n_shared, pdata.units, pdata.strata)
    values_a = pairing.unit_values(pdata.a) if pairing is not None else {}
    values_b = pairing.unit_values(pdata.b) if pairing is not None else {}
    folds = getattr(pairing, "folds", None) or {}
    out = {}
    for m in metrics:
        base = folds.get(m)
        if m not in values_a and base in values_a and base in values_b:  # a folded metric: its base's units
            u = _units(pdata, clusters, values_a[base], values_b[base])
            out[m] = Units(u.k, u.unit, u.agree, None, span=u.agreement_width)  # for the agreement bound only
        else:
            out[m] = _units(pdata, clusters, values_a.get(m), values_b.get(m))
    return out


def _units(pdata: Any, clusters: np.ndarray | None, uva: Any, uvb: Any) -> Units:
    n = pdata.n_shared
    unit = pdata.unit
    if uva is not None and uvb is not None:
        mask_a, mask_b = np.asarray(uva.mask, dtype=bool), np.asarray(uvb.mask, dtype=bool)
        rows = mask_a | mask_b
        both = bool(np.array_equal(mask_a, mask_b))  # the same rows: else values outside a mask may be NaN
        values_a, values_b = np.asarray(uva.values, dtype=float), np.asarray(uvb.values, dtype=float)
        same = both and bool(np.all(values_a[rows] == values_b[rows]))
        k = int(rows.sum()) if clusters is None else len(set(clusters[rows].tolist()))
        bounds = uva.bounds if uva.bounds == uvb.bounds else None  # a linearised rate may leave them in one run
        width = (bounds[1] - bounds[0]) if bounds is not None else None
        binary, updown = 0, None
        if bounds is not None:
            va, vb = values_a[mask_a], values_b[mask_b]  # each run's values on its own rows
            binary = int(rows.sum()) if bool(np.all(np.isin(np.concatenate([va, vb]), bounds))) else 0
            if binary and clusters is not None and both:  # items of a cluster move together: fewer, in effect
                binary = max(k, round(binary / design_effect(values_b[rows] - values_a[rows], clusters[rows])))
            if binary and k == int(rows.sum()) and both:  # unclustered (or one row per cluster): Tango's test
                high = bounds[1]
                updown = (int(np.sum((vb == high) & (va != high))), int(np.sum((va == high) & (vb != high))))
        overlap = None
        if both and clusters is None and uva.pairs is not None and uvb.pairs is not None:
            (xa, ya), (xb, yb) = uva.pairs, uvb.pairs
            overlap = (xa, ya, yb) if np.array_equal(xa, xb) else None
        wa, wb = uva.agreement_width, uvb.agreement_width
        span = max(wa, wb) if wa is not None and wb is not None else None
        full = span if span is not None else width
        if clusters is not None and full is not None:  # per cluster: its most rows' change, times the k clusters
            factor = int(np.unique(clusters[rows], return_counts=True)[1].max()) * k / int(rows.sum())
            span = full * factor if span is not None or factor > 1 else None
        return Units(k, unit, same, width, binary, updown, overlap, span)
    k = n if clusters is None else len(set(clusters.tolist()))
    same = set(pdata.a) == set(pdata.b) and all(_same(pdata.a[c], pdata.b[c]) for c in pdata.a)
    return Units(k, unit, same, None)


def design_effect(d: np.ndarray, clusters: np.ndarray) -> float:
    """The design effect of the clusters on the mean of the rows' differences ``d``: the variance of the cluster
    means times the mean cluster size over the rows' variance, within ``[1, mean size]`` (1 where the rows do not
    vary). The null's floor on the spread (:meth:`Units.null_sd`) counts ``items / design effect`` items: clustered
    0/1 answers (an item answered three times) whose floor counted every answer passed 7.1% at the margin with 30
    items and a baseline at 0 (1,500 simulated pairs of runs), 5.2% with it (``scripts/gate_clustered_type1.py``);
    with quasi-random floored replicates and Hall's skewness correction, 0-4.2% at 6, 10 and 30 clusters."""
    d = np.asarray(d, dtype=float)
    _, ids, sizes = np.unique(np.asarray(clusters), return_inverse=True, return_counts=True)
    if d.size < 2 or sizes.size < 2:
        return 1.0
    item_var = float(np.var(d, ddof=1))
    if not item_var > 0:
        return 1.0
    means = np.bincount(ids, weights=d) / sizes
    m = float(sizes.mean())
    return float(min(m, max(1.0, m * float(np.var(means, ddof=1)) / item_var)))


def _same(x: Any, y: Any) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        return False
    if x.dtype.kind == "f" and y.dtype.kind == "f":
        return bool(np.all((x == y) | (np.isnan(x) & np.isnan(y))))
    return bool(np.all(x == y))


def too_few(k: int, alpha: float, m: int) -> str | None:
    """Why ``k`` units cannot show anything at Holm's smallest level ``alpha / m`` (None when they can)."""
    if 0.5**k <= alpha / m:
        return None
    need = math.ceil(math.log2(m / alpha))
    return (
        f"too small: {k} units cannot show it (no test on {k} units gives p below {0.5**k:.2g}, above the "
        f"level {alpha / m:.2g}); at least {need} are needed"
    )


MIN_UNBOUNDED = 10  # the fewest units an unbounded metric is tested on (too_few_unbounded)


def too_few_unbounded(k: int) -> str | None:
    """Why ``k`` units are too few for a metric with no declared range (None when they are enough; module
    docstring)."""
    if k >= MIN_UNBOUNDED:
        return None
    return (
        f"too small: {k} units of a metric with no declared range cannot bound its mean against skewed values; "
        f"at least {MIN_UNBOUNDED} are needed"
    )


def agreement_p(units: Units, margin: float) -> float | None:
    """The p value of runs that agree on every unit (module docstring); None where no bound follows."""
    width = units.agreement_width
    if width is None or not width > 0:
        return None
    return float(max(0.0, 1.0 - min(1.0, margin / width)) ** units.k)


def binary_test(
    units: Units, margin: float, worse: str, alpha: float, equivalence_mode: bool
) -> tuple[float, float, float, str] | None:
    """Unclustered 0/1 items of a metric worse one way: Tango's score test of the paired proportions
    (:mod:`biaslab.stats.paired_binary`), recalibrated to the items (Student's t, as every gate test): ``(p, upper,
    lower, method)`` in the metric's units, of the harm difference (``b - a`` in equivalence mode); None elsewhere."""
    from biaslab.stats.few_units import few_units_p, few_units_z
    from biaslab.stats.paired_binary import noninferior_p, noninferiority_test

    if units.updown is None or not units.width or worse not in ("higher", "lower") and not equivalence_mode:
        return None
    up, down = units.updown
    n, w = units.binary, units.width
    if worse == "lower" and not equivalence_mode:  # the harm difference is a - b: the items that went down
        up, down = down, up
    delta = min(1.0, margin / w)
    if not delta < 1:
        return None
    crit = few_units_z(alpha, n)
    p, upper, lower = noninferiority_test(up, down, n, delta, alpha, crit, lambda p: few_units_p(p, n))
    if equivalence_mode:
        p = max(p, few_units_p(noninferior_p(down, up, n, delta), n))
    method = (
        f"Tango's score test of paired proportions ({up} of {n} {units.unit} up, {down} down), recalibrated to "
        f"{n} units (Student's t, {n - 1} df)"
    )
    return p, upper * w, lower * w, method


def correlation_test(
    units: Units, margin: float, worse: str, alpha: float, equivalence_mode: bool
) -> tuple[float, float, float, str] | None:
    """A Pearson correlation of both runs over the same rows: Zou's test of the harm difference (``b - a`` in
    equivalence mode) against the margin (module docstring): ``(p, upper, lower, method)``, the bounds one-sided at
    ``alpha``; None where the runs do not share the rows and ``x``, the metric is worse both ways, or a correlation
    is undefined or at +-1."""
    from scipy.stats import t as student

    from biaslab.stats.correlation import overlapping_bound, overlapping_p

    if units.overlap is None or (worse not in ("higher", "lower") and not equivalence_mode):
        return None
    x, ya, yb = units.overlap
    # the harm difference as r(first) - r(second): a - b where lower is worse, else b - a
    first, second = (ya, yb) if worse == "lower" and not equivalence_mode else (yb, ya)
    q = float(student.ppf(1 - alpha, x.size - 1))
    try:
        p = overlapping_p(x, first, second, margin)
        if equivalence_mode:
            p = max(p, overlapping_p(x, second, first, margin))
        upper, lower = overlapping_bound(x, first, second, q)[1], overlapping_bound(x, first, second, -q)[1]
    except ValueError:
        return None
    method = (
        f"Zou's interval for two correlations sharing a variable (Fisher z bounds, Student's t on {x.size - 1} df), "
        f"over {x.size} {units.unit}"
    )
    return p, upper, lower, method
