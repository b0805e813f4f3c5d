"""The gate's type-I error at the margin: a candidate worse than its baseline by exactly the margin must pass (be
shown non-inferior) at most alpha of the time, at any number of items. Simulated through the gate's own decision
of one metric (:func:`biaslab.gate.decide.margin_row`) on paired 0/1 items (a rate, as `direct`'s fail_rate), with
the item bootstrap's replicates the gate would draw, at 6, 10, 30 and 300 items; and hand-computed cases of the
parts: the small-sample recalibration, Tango's score test, the bound from runs that agree on every item."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm, t

from biaslab.gate.decide import margin_row
from biaslab.gate.specs import MarginSpec
from biaslab.gate.units import Units, agreement_p, too_few
from biaslab.gate.verdicts import verdict
from biaslab.probes import get_probe_class
from biaslab.stats.few_units import few_units_p
from biaslab.stats.paired_binary import noninferior_p, restricted_down_share
from biaslab.stats.skew import hall, skewness

HEADLINE = next(h for h in get_probe_class("direct").headlines if h.metric == "fail_rate")


def _decide(a: np.ndarray, b: np.ndarray, margin: float, rng, *, units=None, equivalence=False, resamples=400):
    n = a.size
    w = rng.multinomial(n, np.full(n, 1 / n), size=resamples) / n  # the item bootstrap, both runs alike
    if units is None:
        up, down = int(np.sum((b == 1) & (a == 0))), int(np.sum((a == 1) & (b == 0)))
        units = Units(n, "statements", bool(np.array_equal(a, b)), 1.0, n, (up, down))
    spec = MarginSpec("direct", "fail_rate", margin, HEADLINE, True)
    da, db = w @ a - a.mean(), w @ b - b.mean()
    return margin_row(
        spec, a.mean(), b.mean(), da, db, "paired", n, units, alpha=0.05, beta=0.005,
        equivalence_mode=equivalence, m=1,
    )  # fmt: skip


def _pass_rate(n: int, base: float, margin: float, rho: float, reps: int, seed: int = 0, **kw: Any) -> float:
    """Share of simulated pairs of runs shown non-inferior: the baseline's items 1 with chance ``base``, the
    candidate's with ``base + margin`` (worse by exactly the margin), the same item's answers equal with chance
    ``rho`` beyond what chance makes them."""
    rng = np.random.default_rng(seed)
    shown = 0
    for _ in range(reps):
        u = rng.random(n)
        a = (u < base).astype(float)
        b = (np.where(rng.random(n) < rho, u, rng.random(n)) < base + margin).astype(float)
        r = _decide(a, b, margin, rng, **kw)
        shown += r["p"] is not None and r["p"] <= 0.05
    return shown / reps


def _ceiling(reps: int, alpha: float = 0.05) -> float:
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 10, 30, 300])
def test_type_one_error_at_the_margin_is_at_most_alpha_at_any_size(n):
    """Baselines at 0 (the case a sample's own spread gets wrong: 17% shown at 30 items with the bootstrap), low and
    middling, margins of 0.05 and 0.2, answers independent or strongly tied; 500 simulated pairs each (400 at 300
    items, with fewer resamples: Tango's test does not use them). The bootstrap of the earlier gate showed 11-12%
    at 6 and 30 items."""
    reps = 400 if n == 300 else 500
    cases = ((0.0, 0.1, 0.0), (0.05, 0.1, 0.9), (0.2, 0.1, 0.5), (0.5, 0.2, 0.0), (0.3, 0.05, 0.0))
    resamples = 100 if n == 300 else 400
    rates = [_pass_rate(n, base, margin, rho, reps, seed=n, resamples=resamples) for base, margin, rho in cases]
    assert max(rates) <= _ceiling(reps), rates


@pytest.mark.slow
def test_clustered_or_not_binary_units_are_tested_on_the_floored_normal_replicates():
    """Items that cluster (no Tango test): the bootstrap's replicates replaced by normal ones whose spread is at
    least the null's, recalibrated to the clusters; at 30 items with a baseline at 0 still at most alpha."""
    rng = np.random.default_rng(4)
    shown = 0
    for _ in range(600):
        a = np.zeros(30)
        b = (rng.random(30) < 0.1).astype(float)
        units = Units(30, "statements", bool(np.array_equal(a, b)), 1.0, 30, None)  # no up/down counts
        r = _decide(a, b, 0.1, rng, units=units)
        shown += r["p"] is not None and r["p"] <= 0.05
    assert shown / 600 <= _ceiling(600)  # the bootstrap's own replicates passed 17% here


def test_six_items_that_agree_are_too_small_and_three_hundred_pass():
    """The same answers on every item: (1 - 0.1)^6 = 0.53 at 6 items (too small, never a pass), 0.9^300 at 300."""
    rng = np.random.default_rng(0)
    six = _decide(np.array([1.0, 0, 0, 1, 0, 0]), np.array([1.0, 0, 0, 1, 0, 0]), 0.1, rng)
    assert six["p"] == pytest.approx(0.9**6) and six["agree"]["k"] == 6
    a = (np.arange(300) % 4 == 0).astype(float)
    many = _decide(a, a.copy(), 0.1, rng)
    assert many["p"] == pytest.approx(0.9**300) and many["diff"] == 0
    assert agreement_p(Units(6, "items", True, 100.0), 10.0) == pytest.approx(0.9**6)
    assert agreement_p(Units(6, "items", True, None), 10.0) is None  # no range: no bound


def test_too_few_units_can_never_pass():
    """No exact test on k units gives p below 2^-k: 4 units cannot reach 0.05 (2^-4 = 0.0625), 5 can (0.031);
    with 3 margins (Holm's smallest level 0.05 / 3) 6 are needed."""
    assert too_few(4, 0.05, 1) is not None and "at least 5 are needed" in too_few(4, 0.05, 1)
    assert too_few(5, 0.05, 1) is None and too_few(5, 0.05, 3) is not None and too_few(6, 0.05, 3) is None
    rng = np.random.default_rng(0)
    r = _decide(np.zeros(4), np.array([0.0, 0, 0, 0]), 0.5, rng)
    assert r["too_small"] and r["p"] is None


def test_the_small_sample_recalibration_by_hand():
    """A bootstrap p of 0.05 is z = 1.645; at 6 units t = 1.645 * sqrt(5/6) = 1.502 on 5 df: 0.0968. Never below
    2^-k: a bootstrap p of 1e-9 at 3 units is 1/8."""
    z = norm.isf(0.05)
    assert few_units_p(0.05, 6) == pytest.approx(t.sf(z * math.sqrt(5 / 6), 5)) == pytest.approx(0.0968, abs=1e-4)
    assert few_units_p(1e-9, 3) == 0.125 and few_units_p(0.3, None) == 0.3 and few_units_p(0.01, 1) == 1.0


def test_tangos_score_test_by_hand():
    """30 items, 1 up and 0 down, margin 0.1. The restricted share of down items solves 2n q^2 + B q + C = 0 with
    B = -1 + (60 - 1) 0.1 = 4.9, C = 0: q = 0; the variance n (2q + 0.1 * 0.9) = 2.7; z = (1 - 3) / sqrt(2.7)."""
    assert restricted_down_share(1, 0, 30, 0.1) == pytest.approx(0.0)
    assert noninferior_p(1, 0, 30, 0.1) == pytest.approx(norm.cdf(-2 / math.sqrt(2.7)))
    # 2 up and 3 down of 40, margin 0.05: A = 80, B = -5 + (80 - 2 + 3) 0.05 = -0.95, C = -3 * 0.05 * 0.95
    a, b, c = 80, -0.95, -3 * 0.05 * 0.95
    q = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    assert restricted_down_share(2, 3, 40, 0.05) == pytest.approx(q)
    assert noninferior_p(2, 3, 40, 0.05) == pytest.approx(norm.cdf((2 - 3 - 2) / math.sqrt(40 * (2 * q + 0.0475))))


def test_the_design_effect_of_clustered_items_by_hand():
    """Differences 1, 0 | 0, 0 | 1, 1 in three clusters of two: cluster means 1/2, 0, 1 (variance 1/4), rows'
    variance 3/10, so 2 x (1/4) / (3/10) = 5/3; clusters that hold one value each (1, 1 | 0, 0) give the size, 2,
    at most; clusters alike (1, 0 | 1, 0) give 1, at least."""
    from biaslab.gate.units import design_effect

    assert design_effect(np.array([1.0, 0, 0, 0, 1, 1]), np.array(list("aabbcc"))) == pytest.approx(5 / 3)
    assert design_effect(np.array([1.0, 1, 0, 0]), np.array(list("aabb"))) == 2.0
    assert design_effect(np.array([1.0, 0, 1, 0]), np.array(list("aabb"))) == 1.0
    assert design_effect(np.zeros(4), np.array(list("aabb"))) == 1.0


UNBOUNDED = dataclasses.replace(HEADLINE, bounds=None)  # the same metric, declared without a range


def _skewed_row(n: int, seed: int) -> tuple[dict[str, Any], np.ndarray, float]:
    """A metric without a declared range whose per-unit differences are skewed (exponential): the gate's row, the
    replicates' errors of b - a and the estimate (the gate's decision, its item bootstrap's replicates)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0.3, 0.1, n)
    b = a + 0.1 + (rng.exponential(0.1, n) - 0.1)  # worse by the margin 0.1
    idx = rng.integers(0, n, (2000, n))
    da, db = a[idx].mean(1) - a.mean(), b[idx].mean(1) - b.mean()
    spec = MarginSpec("direct", "fail_rate", 0.1, UNBOUNDED, True)
    row = margin_row(
        spec, a.mean(), b.mean(), da, db, "paired", n, Units(n, "items", False, None), alpha=0.05, beta=0.005,
        equivalence_mode=False, m=1,
    )  # fmt: skip
    return row, db - da, b.mean() - a.mean()


def test_a_metric_without_a_range_on_six_units_is_too_small():
    row, _, _ = _skewed_row(6, 0)
    row["p_holm"] = row["p"]
    verdict(row, alpha=0.05, m=1, power=0.8, equivalence_mode=False)
    assert row["verdict"] == "too small" and row["p"] is None
    assert row["reason"].startswith("too small: 6 units of a metric with no declared range")
    assert _skewed_row(10, 0)[0].get("too_small") is None  # 10 units are tested


def test_skewed_differences_are_tested_with_halls_correction():
    """At 30 units, a sample the bootstrap's recalibrated p passed (0.021, a candidate worse by exactly the margin)
    is not passed: the gate's p is Hall's, from the replicates' skewness, and its bound lies above the margin."""
    row, err, diff = _skewed_row(30, 11)
    boot = few_units_p(float((1 + np.sum(err <= diff - 0.1)) / (1 + err.size)), 30)
    assert boot <= 0.05 < row["p"]
    se = float(np.std(err, ddof=1)) * math.sqrt(30 / 29)
    g = hall((diff - 0.1) / se, skewness(err, 30), 30)
    assert row["p"] == pytest.approx(float(t.cdf(g, 29)))
    assert row["upper"] > 0.1 and "Hall's transformation" in row["method"]
