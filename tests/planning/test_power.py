"""Power planning: exact binomial power by hand and against scipy's binomial test, Fisher's z, pilots."""

from __future__ import annotations

import json
import math
from math import comb

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from biaslab.errors import ConfigError
from biaslab.planning.plan import plan
from biaslab.planning.power import (
    _normal_binomial_n,
    _power_floors,
    _randomized_powers,
    binomial_detectable_effect,
    binomial_n,
    binomial_power,
    critical_count,
    exact_powers,
    fisher_n,
)
from tests.cli_runner import run_cli


def test_binomial_power_by_hand():
    # n = 10, alpha 0.05: 2 P(X <= 1) = 22/1024 <= 0.05 < 2 P(X <= 2) = 112/1024, so reject k <= 1 or k >= 9
    assert critical_count(10, 0.05) == 1
    p = 0.6
    by_hand = sum(comb(10, k) * p**k * (1 - p) ** (10 - k) for k in (0, 1, 9, 10))
    assert binomial_power(10, 0.6) == pytest.approx(by_hand, abs=1e-12)
    assert binomial_power(10, 0.5) == pytest.approx(22 / 1024, abs=1e-12)  # under H0: the size of the test


def independent_power(n: int, p1: float, alpha: float = 0.05) -> float:
    """Power from scipy's binomial test itself: the probability of the k it rejects. Against 0.5 the test is
    symmetric and its p value grows as k nears n/2, so it rejects k <= c and k >= n - c for the largest c it
    rejects below n/2, found by bisection over scipy's own p values (every k is asked in
    test_rejection_region_is_scipys)."""
    lo, hi = -1, n // 2  # scipy rejects lo (or lo is -1: none), and never n // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if binomtest(mid, n, 0.5).pvalue <= alpha else (lo, mid)
    return 0.0 if lo < 0 else float(binom.cdf(lo, n, p1) + binom.sf(n - lo - 1, n, p1))


@pytest.mark.parametrize("n", [5, 6, 17, 40, 61, 100])
def test_rejection_region_is_scipys(n):
    c = critical_count(n, 0.05)
    for k in range(n + 1):
        assert (binomtest(k, n, 0.5).pvalue <= 0.05) == (k <= c or k >= n - c)


@pytest.mark.slow
def test_bias_score_60_vs_50_needs_199_pairs_and_the_sawtooth():
    res = binomial_n(0.6, 0.05, 0.8)
    assert res == {"n": 199, "n_all_larger": 210, "n_normal": 194}
    powers = {n: independent_power(n, 0.6) for n in range(120, 216)}
    assert powers[199] >= 0.8 and all(powers[n] < 0.8 for n in range(120, 199))
    assert powers[200] < 0.8  # the sawtooth: one more pair, less power
    assert all(powers[n] >= 0.8 for n in range(210, 216)) and powers[209] < 0.8
    # and the minimum detectable effect at 199 pairs is at most 10 points
    assert binomial_detectable_effect(199) <= 0.1 + 1e-9 < binomial_detectable_effect(198)


def scan_every_n(p1: float, alpha: float, power: float) -> dict[str, int]:
    """binomial_n by brute force: exact power at every n of a window around the normal n, widened until its
    last 60 ns all reach the target (how biaslab searched before it bracketed the search)."""
    approx = _normal_binomial_n(p1, alpha, power)
    ns = np.arange(max(1, int(approx * 0.75) - 20), int(approx * 1.3) + 61)
    pw = exact_powers(ns, p1, alpha)
    while not (pw[-60:] >= power).all():
        ns = np.arange(ns[0], ns[-1] + 61)
        pw = exact_powers(ns, p1, alpha)
    below = np.flatnonzero(pw < power)
    return {
        "n": int(ns[np.argmax(pw >= power)]),
        "n_all_larger": int(ns[below[-1] + 1]) if below.size else 1,
        "n_normal": math.ceil(approx),
    }


@pytest.mark.parametrize(
    "p1, alpha, power",
    [
        (0.6, 0.05, 0.8),
        (0.55, 0.01, 0.95),
        (0.42, 0.1, 0.5),
        (0.9, 0.05, 0.8),
        (0.52, 0.2, 0.9),
        (0.35, 0.01, 0.3),
        (0.97, 0.05, 0.99),
    ],
)
def test_the_bracketed_search_finds_what_scanning_every_n_finds(p1, alpha, power):
    assert binomial_n(p1, alpha, power) == scan_every_n(p1, alpha, power)


def test_the_bracket_bounds_hold_and_never_fall():
    ns = np.arange(1, 3000)
    for p1, alpha in ((0.6, 0.05), (0.45, 0.01), (0.53, 0.1)):
        exact, upper = exact_powers(ns, p1, alpha), _randomized_powers(ns, p1, alpha)
        floor = _power_floors(ns, p1, alpha)
        assert (upper >= exact - 1e-12).all() and (np.diff(upper) >= -1e-12).all()
        assert (np.diff(floor) >= -1e-12).all()
        # the floor at n bounds the exact power at every n from there on
        assert (floor <= np.minimum.accumulate(exact[::-1])[::-1] + 1e-12).all()
    assert [binomial_power(n, 0.6) for n in (10, 199, 200)] == [float(x) for x in exact_powers([10, 199, 200], 0.6)]


def test_a_tiny_effect_is_planned_exactly_near_the_normal_n():
    # bias score 50.1 vs 50: about two million pairs (scanning every n near it took minutes)
    res = binomial_n(0.501)
    assert res == {"n": 1962509, "n_all_larger": 1963684, "n_normal": 1962218}
    assert binomial_power(res["n"], 0.501) >= 0.8 > binomial_power(res["n_all_larger"] - 1, 0.501)
    assert all(exact_powers(np.arange(res["n"] - 300, res["n"]), 0.501) < 0.8)


def test_fisher_z_by_hand():
    n = ((1.959963984540054 + 0.8416212335729143) / math.atanh(0.3)) ** 2 + 3
    assert fisher_n(0.3) == math.ceil(n) == 85


def test_plan_json_from_the_command_line():
    proc = run_cli("plan", "winosemitism", "--effect", "10", "--power", "0.8", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["n_pairs"] == 199 and res["method"].startswith("exact binomial") and res["assumptions"]
    bad = run_cli("plan", "winosemitism", "--effect", "70")
    assert bad.returncode != 0 and "out of range" in bad.stderr and "Traceback" not in bad.stderr


def test_bad_input_is_one_line_errors():
    with pytest.raises(ConfigError, match="non-zero"):
        plan("winosemitism", 0)
    with pytest.raises(ConfigError, match="--power"):
        plan("winosemitism", 10, power=1.5)
    with pytest.raises(ConfigError, match="unknown probe"):
        plan("nope", 10)
    with pytest.raises(ConfigError, match="--metric"):
        plan("olympics", 0.2, metric="avg_f1")  # not one of its headlines


def test_every_probe_plans_without_a_pilot():
    from biaslab.probes import PROBES, get_probe_class

    for name in PROBES:
        for h in get_probe_class(name).headlines:
            effect = 0.1 * (h.plan.high - h.plan.low) if hasattr(h.plan, "high") else 0.1
            res = plan(name, effect, metric=h.metric)
            n = res["n_pairs"] if "n_pairs" in res else res["n_items"]
            assert isinstance(n, int) and n > 1 and res["assumptions"], (name, h.metric)


def test_without_an_effect_the_headline_margin_is_planned_towards_worse():
    from biaslab.planning.plan import default_effect
    from biaslab.probes import PROBES, get_probe_class

    res = plan("winosemitism")  # margin 3 bias-score points, worse away from 50: +3
    assert res["effect"] == 3.0 and res["effect_default"] and res["n_pairs"] == plan("winosemitism", 3.0)["n_pairs"]
    assert plan("fsb-judge")["effect"] == -get_probe_class("fsb-judge").headlines[0].margin  # worse lower
    for name in PROBES:
        h = get_probe_class(name).headlines[0]
        size = h.margin if h.margin is not None else h.marks.b if h.marks is not None else None
        if size is None:
            with pytest.raises(ConfigError, match="give --effect"):
                plan(name)
            continue
        assert default_effect(h) == (-size if h.worse == "lower" else size)
        assert not plan(name, 2 * size)["effect_default"]


def test_olympics_plans_from_its_stated_spread():
    res = plan("olympics", 0.2)  # explicit_score: per-answer values in [-1, 1], SD at most 1
    assert res["metric"] == "explicit_score" and res["sd_assumed"] == 1.0
    assert res["n_items"] == math.ceil(((1.959964 + 0.841621) * 1.0 / 0.2) ** 2)


def _pilot(tmp_path, clustered: bool):
    rows = []
    for pred in range(20):
        for j in range(10):
            stereo = (pred % 2 == 0) if clustered else ((pred * 10 + j) % 2 == 0)
            rows.append(
                {
                    "item_id": f"r{pred}-{j}",
                    "prompt_index": 0,
                    "repetition": 0,
                    "seed": None,
                    "prompt": f"a{pred}-{j}",
                    "text": f"b{pred}-{j}",
                    "sent_more": f"a{pred}-{j}",
                    "sent_less": f"b{pred}-{j}",
                    "evaluation": "stereotype" if stereo else "counter",
                    "target_ID": "G",
                    "predicate_id": f"p{pred}",
                    "score_more": -1.0 if stereo else -3.0,
                    "score_less": -2.0,
                }
            )
    d = tmp_path / ("clustered" if clustered else "independent")
    d.mkdir()
    (d / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "results.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "probe": "pairs",
                "probe_version": "1",
                "model": {},
                "parameters": {},
                "biaslab_version": "0",
                "metrics": {},
                "n_items": len(rows),
                "n_attempts": len(rows),
            }
        )
    )
    return d


def test_pilot_with_predicate_clusters_reports_the_design_effect(tmp_path):
    # every pair of a predicate decides alike: clusters of 10, design effect about 10, correlation
    # about 1: 20 predicates hold at most about 20 independent pairs' worth, fewer than 199
    res = plan("pairs", 10, pilot=_pilot(tmp_path, True))
    assert 7 < res["design_effect"] < 13 and res["icc"] > 0.6
    # the run report's procedure on the pairs' unit values: 20 predicates of 10 alike pairs, CR2 with equal
    # clusters is s_c^2 / k over predicate means, s^2 / n over pairs: sum / 19 / 20 over 10 sum / 199 / 200
    assert res["design_effect"] == pytest.approx(199 * 200 / (19 * 20 * 10)) and "CR2" in res["variance"]
    assert res["n_pairs"] is None and res["design_effect_planned"] is None
    # how many predicates of the pilot's 10 pairs would do: K x 10 pairs >= n0 (1 + 9 icc)
    # (a correlation above 1, noise of this extreme pilot, counts as 1: a predicate is worth one pair)
    n0, rho, needed = res["n_independent"] / (1 - res["tie_rate"]), min(res["icc"], 1), res["n_predicates_needed"]
    assert needed * 10 >= n0 * (1 + 9 * rho) > (needed - 1) * 10 and needed > 20
    assert res["n_pairs_with_more_predicates"] == needed * 10
    assert any(f"add predicates: {needed} predicates in all" in a for a in res["assumptions"])
    # pairs that vary within their predicate: no inflation (design effect about 1 or below, n stays 199)
    flat = plan("pairs", 10, pilot=_pilot(tmp_path, False))
    assert flat["design_effect"] < 1.3 and flat["n_pairs"] <= math.ceil(199 * 1.3)


def test_pilot_plan_solves_the_growing_design_effect(tmp_path):
    # 40 predicates x 5 pairs; in half the predicates 4 of 5 pairs are stereotyped, in the other half 1 of 5
    rows = []
    for pred in range(40):
        for j in range(5):
            stereo = j < (4 if pred % 2 else 1)
            rows.append(
                {
                    "item_id": f"r{pred}-{j}",
                    "sent_more": f"a{pred}-{j}",
                    "sent_less": f"b{pred}-{j}",
                    "target_ID": "G",
                    "predicate_id": f"p{pred}",
                    "evaluation": "stereotype" if stereo else "counter",
                    "score_more": -1.0,
                    "score_less": -2.0,
                }
            )
    d = tmp_path / "mid"
    d.mkdir()
    (d / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "results.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "probe": "pairs",
                "probe_version": "1",
                "model": {},
                "parameters": {},
                "biaslab_version": "0",
                "metrics": {},
                "n_items": len(rows),
                "n_attempts": len(rows),
            }
        )
    )
    res = plan("pairs", 20, pilot=d)  # bias score 70 vs 50
    icc, k, n0 = res["icc"], res["n_predicates_pilot"], res["n_independent"]
    assert k == 40 and 0.05 < icc < 0.6 and n0 == binomial_n(0.7)["n"]
    assert icc == pytest.approx((res["design_effect"] - 1) / (5 - 1))
    n = res["n_pairs"]
    assert n == math.ceil(n0 * (1 - icc) / (1 - n0 * icc / 40)) and n > n0
    # n is the smallest whole number with n >= n0 * (1 + (n/k - 1) icc)
    assert n - 1 < n0 * (1 + (n / k - 1) * icc) <= n
    # the planned design effect is the one at n pairs over the 40 predicates, not the pilot's
    assert res["design_effect_planned"] == pytest.approx(1 + (n / 40 - 1) * icc)
    assert abs(res["design_effect_planned"] - res["design_effect"]) > 0.2  # fewer pairs per predicate than the pilot
    proc = run_cli("plan", "pairs", "--effect", "20", "--pilot", d)
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stdout.split())
    assert (
        f"design effect of predicate clusters at the planned {n} pairs: {res['design_effect_planned']:.2f} "
        f"(the pilot's: {res['design_effect']:.2f})"
    ) in said, said
    # at 10 points the 40 predicates are not enough (at most k / icc independent pairs' worth)
    short = plan("pairs", 10, pilot=d)
    assert short["n_pairs"] is None and short["n_predicates_needed"] > 40
    k_needed, n0 = short["n_predicates_needed"], short["n_independent"]
    assert k_needed * 5 >= n0 * (1 + 4 * short["icc"]) > (k_needed - 1) * 5
    # at that many predicates the plan's own formula (pairs spread over them) is finite, and needs no more pairs
    assert 1 - n0 * short["icc"] / k_needed > 0
    assert math.ceil(n0 * (1 - short["icc"]) / (1 - n0 * short["icc"] / k_needed)) <= k_needed * 5
