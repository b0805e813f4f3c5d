"""hiring-an: GenderBench's metrics on a hand-computed table, the paired design, runs through the real runner
(gender-blind, favouring men, stereotyping) and --limit balance."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.hiring_an.inference import slope_units, summarize_table
from biaslab.probes.hiring_an.metrics import groups_of, item_table, metric_fn
from biaslab.probes.hiring_an.probe import HiringAnProbe
from biaslab.probes.hiring_bloomberg.data import load_names
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width


def scenario_rows(item, role, score, race, qualification, pair, male, female):
    """Attempt rows of one scenario: ``male`` and ``female`` are the evaluations of each gender's repetitions."""
    base = {
        "item_id": item,
        "role": role,
        "stereotype_score": score,
        "race": race,
        "qualification": qualification,
        "name_pair": pair,
    }
    return [{**base, "gender": g, "evaluation": e} for g, evs in (("male", male), ("female", female)) for e in evs]


HAND = (
    scenario_rows("s1", "A", 0.0, "white", "high", "w0", ["yes"], ["no"])
    + scenario_rows("s2", "B", 1.0, "white", "low", "w1", ["yes"], ["yes"])
    + scenario_rows("s3", "C", 0.5, "black", "high", "b0", ["no"], ["yes"])
    + scenario_rows("s4", "D", 1.0, "black", "low", "b1", ["yes", "no"], [None])
)


def test_metrics_hand_computed():
    t = item_table(HAND)
    m = metric_fn(groups_of(t))(t)
    # men's prompts: acceptance 1, 1, 0, 1/2; women's: 0, 1, 1 and one prompt with no decision (left out)
    assert m["male_acceptance_rate"] == pytest.approx(0.625)
    assert m["female_acceptance_rate"] == pytest.approx(2 / 3)
    assert m["diff_acceptance_rate"] == pytest.approx(0.625 - 2 / 3)
    assert m["diff_abs_acceptance_rate"] == pytest.approx(2 / 3 - 0.625)
    # least squares on (score, acceptance): men (0,1) (1,1) (.5,0) (1,.5): slope -1/11 (intercept 0.68, inside
    # the bounds); women (0,0) (1,1) (.5,1): slope 1, intercept 1/6
    assert m["male_regression"] == pytest.approx(-1 / 11)
    assert m["female_regression"] == pytest.approx(1.0)
    assert m["diff_regression"] == pytest.approx(-1 / 11 - 1)
    assert m["diff_acceptance_rate:race_white"] == pytest.approx(1 - 0.5)
    assert m["diff_acceptance_rate:race_black"] == pytest.approx(0.25 - 1)
    assert math.isnan(m["male_regression:race_white"])  # two prompts: GenderBench needs three for a slope
    assert m["male_acceptance_rate:qualification_high"] == pytest.approx(0.5)
    assert m["female_acceptance_rate:qualification_low"] == pytest.approx(1.0)
    assert m["undetected_rate_attempts"] == pytest.approx(1 / 9)
    assert m["undetected_rate_items"] == pytest.approx(1 / 8)


def test_a_gap_with_a_prompt_left_out_keeps_genderbench_s_value_by_hand():
    # HAND: men's rates 1, 1, 0, 1/2; women's 0, 1, 1 and s4 without a decision. Women's values are linearised:
    # r = 2/3, mean(d) = 3/4, r + d (y - r) / mean(d) = -2/9, 10/9, 10/9 and 2/3 for s4 (mean 2/3). Differences
    # per scenario (= name pair): 11/9, -1/9, -10/9, -1/6, mean -1/24 = 0.625 - 2/3. In 18ths the pair totals are
    # 22, -2, -20, -3: of the 16 sign patterns only +-(22, -20, 2, -3) give |sum| < 3, so p = 14/16; 4 pairs are
    # too few for an interval
    m = summarize_table(item_table(HAND))
    d = m["diff_acceptance_rate"]
    assert d["value"] == pytest.approx(0.625 - 2 / 3) and d["p"] == pytest.approx(14 / 16)
    assert d["too_small"] and d["ci_low"] is None and (d["n"], d["n_clusters"]) == (4, 4)
    assert m["female_acceptance_rate"]["n"] == 3 and m["male_regression"]["value"] == pytest.approx(-1 / 11)


def test_regression_is_genderbench_s_bounded_fit():
    from scipy.optimize import lsq_linear

    from biaslab.stats.weighted import weighted_bounded_slope

    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(3, 30))
        x = rng.uniform(0, 1, n)
        y = np.clip(rng.uniform(-0.5, 0.5) + rng.uniform(-2, 2) * x + rng.normal(0, 0.2, n), 0, 1)
        fit = lsq_linear(np.column_stack([x, np.ones(n)]), y, bounds=[[-1, 0], [1, 1]])  # GenderBench's call
        assert weighted_bounded_slope(x, y, np.ones(n)) == pytest.approx(fit.x[0], abs=1e-6)


def test_the_acceptance_gap_is_paired_over_name_pairs_by_hand():
    # 7 name pairs (4 white, 3 Black), two scenarios each. Pairs p0..p4: the man hired, the woman not (gap 1, 1);
    # p5, p6: both hired (gap 0, 0). Pair totals 2, 2, 2, 2, 2, 0, 0: of the 2^7 sign patterns |sum| >= 10 only
    # with the five 2s of one sign (2 ways) x any signs of the two 0s (4 ways): p = 8/128 = 0.0625
    rows = []
    for k in range(7):
        race = "white" if k < 4 else "black"
        gap = k < 5
        for j in range(2):
            rows += scenario_rows(
                f"s{k}{j}", f"r{k}{j}", (2 * k + j) / 13, race, "high", f"p{k}", ["yes"], ["no" if gap else "yes"]
            )
    m = summarize_table(item_table(rows))
    d = m["diff_acceptance_rate"]
    assert d["value"] == pytest.approx(10 / 14) and d["p"] == pytest.approx(8 / 128)
    assert d["n"] == 14 and d["n_clusters"] == 7 and d["ci_low"] <= 0 < d["ci_high"] and "sign-flip" in d["method"]
    a = m["diff_abs_acceptance_rate"]
    assert a["ci_low"] == 0.0 and a["ci_high"] == pytest.approx(max(-d["ci_low"], d["ci_high"])) and a["p"] == d["p"]
    # per race: 8 white scenarios in 4 name pairs, too few for an interval; n counts the group's units
    w = m["diff_acceptance_rate:race_white"]
    assert (w["n"], w["n_clusters"], w["too_small"]) == (8, 4, True) and "4 name pairs" in w["reason"]
    assert m["male_acceptance_rate:race_black"]["n"] == 6
    assert disagreements(m, null_of) == []


def test_an_extreme_gap_over_13_name_pairs_is_exact():
    rows = []
    for k in range(13):  # 13 name pairs, men always hired, women never: every pair at the bound
        rows += scenario_rows(f"s{k}", f"r{k}", k / 13, "white" if k % 2 else "asian", "high", f"p{k}", ["yes"], ["no"])
    m = summarize_table(item_table(rows))
    # exact binomial over the 13 pairs as trials: p = 2 x 0.5^13; Clopper-Pearson 13 of 13 on [-1, 1]
    d = m["diff_acceptance_rate"]
    assert d["p"] == pytest.approx(2 / 2**13) and d["ci_low"] == pytest.approx(-1 + 2 * 0.025 ** (1 / 13))
    assert m["diff_abs_acceptance_rate"]["p"] == d["p"]
    # both fits flat (men all 1, women all 0): every unit value 0, no spread, p 1
    r = m["diff_regression"]
    assert r["value"] == 0 and r["p"] == 1.0 and r["ci_low"] is None and r["degenerate"]
    assert all(m[k]["q"] >= m[k]["p"] for k in m if m[k].get("q") is not None)


def test_slope_units_by_hand():
    # the men's prompts of HAND: (x, y) = (0, 1), (1, 1), (.5, 0), (1, .5). xbar = 5/8, var(x) = 11/64; least
    # squares b = -1/11, a = 5/8 + (1/11)(5/8) = 15/22 (inside GenderBench's bounds). Residuals e = y - a - b x:
    # 7/22, 9/22, -14/22, -2/22. Unit values b + (x - xbar) e / var(x):
    #   -1/11 + (-5/8)(7/22)(64/11) = -1/11 - 140/121 = -151/121
    #   -1/11 + (3/8)(9/22)(64/11)  = -1/11 + 108/121 = 97/121
    #   -1/11 + (-1/8)(-14/22)(64/11) = -1/11 + 56/121 = 45/121
    #   -1/11 + (3/8)(-2/22)(64/11) = -1/11 - 24/121 = -35/121      (mean -44/484 = -1/11)
    value, units, reason = slope_units(np.array([0, 1, 0.5, 1]), np.array([1, 1, 0, 0.5]))
    assert value == pytest.approx(-1 / 11) and reason == ""
    assert units == pytest.approx(np.array([-151, 97, 45, -35]) / 121) and units.mean() == pytest.approx(-1 / 11)
    # a prompt without a decision is left out (its unit value is not there), as GenderBench leaves it out
    value, units, _ = slope_units(np.array([0, 1, 0.5, 1, 0.2]), np.array([1, 1, 0, 0.5, np.nan]))
    assert value == pytest.approx(-1 / 11) and len(units) == 4
    # y = 1 for x > 0.5 on x = 0, .2, ..., 1: least-squares slope 0.9 / 0.7 = 1.29 > 1, so the bound binds
    value, units, reason = slope_units(np.linspace(0, 1, 6), np.array([0, 0, 0, 1, 1, 1.0]))
    assert value == pytest.approx(1.0) and units is None and "bounds bind" in reason and "1.29" in reason


def test_a_binding_bound_keeps_the_exact_swap_test_without_an_interval():
    from scipy.optimize import lsq_linear

    x = np.linspace(0, 1, 6)
    rows = []
    for k in range(6):  # 6 name pairs, one scenario each: men hired in the male-stereotyped half, women never
        rows += scenario_rows(f"s{k}", f"r{k}", x[k], "white", "high", f"p{k}", ["yes" if k >= 3 else "no"], ["no"])
    m = summarize_table(item_table(rows))
    r = m["diff_regression"]
    assert r["value"] == pytest.approx(1.0) and r["ci_low"] is None and "bounds bind" in r["reason"]

    def bounded(xs, ys):  # GenderBench's call
        return lsq_linear(np.column_stack([xs, np.ones(len(xs))]), ys, bounds=[[-1, 0], [1, 1]]).x[0]

    # every one of the 2^6 patterns of swapping a pair's two names, refitted independently
    men, women = np.array([0, 0, 0, 1, 1, 1.0]), np.zeros(6)
    hits = 0
    for pattern in range(64):
        swap = np.array([(pattern >> k) & 1 for k in range(6)], dtype=bool)
        ym, yf = np.where(swap, women, men), np.where(swap, men, women)
        hits += abs(bounded(x, ym) - bounded(x, yf)) >= 1.0 - 1e-9
    assert r["p"] == pytest.approx(hits / 64) and r["n_clusters"] == 6
    assert "every one of the 64 swap patterns" in r["method"]
    assert m["male_regression"]["ci_low"] is None and m["male_regression"]["n"] == 6


def null_of(name: str) -> float:
    if name.partition(":")[0] in ("diff_acceptance_rate", "diff_abs_acceptance_rate", "diff_regression"):
        return 0.0
    raise KeyError(name)


@requires_data
def test_design_pairs_a_man_and_a_woman_of_one_race_in_every_scenario():
    items = HiringAnProbe().load_items()
    assert len(items) == 339 * 4 * 4  # every occupation x qualification level x race
    assert len({(it.metadata["role"], it.metadata["qualification"], it.metadata["race"]) for it in items}) == len(items)
    names = load_names()
    uses = Counter(it.metadata["name_pair"] for it in items)
    assert len(uses) == 400 and set(uses.values()) <= {13, 14}
    for it in items[::97]:
        (m, f) = it.prompts
        assert (m.metadata["gender"], f.metadata["gender"]) == ("male", "female")
        assert names[m.metadata["name"]] == ("male", it.metadata["race"])
        assert names[f.metadata["name"]] == ("female", it.metadata["race"])
        assert m.text.replace(m.metadata["name"], "NAME") == f.text.replace(f.metadata["name"], "NAME")
        assert '"We regret to inform you"' in m.text and '"You have been selected"' in m.text


@requires_data
def test_limit_balances_qualification_and_race():
    probe = HiringAnProbe()
    chosen = probe.select_items(probe.load_items(), RunConfig(limit=48))
    cells = Counter((it.metadata["qualification"], it.metadata["race"]) for it in chosen)
    assert len(cells) == 16 and set(cells.values()) == {3}


def _run(rule, limit, **kw):
    probe = HiringAnProbe(**kw)
    lookup = {p.text: (it, p.metadata["gender"]) for it in probe.load_items() for p in it.prompts}
    model = CachedModel(ScriptedBackend(lambda r: rule(*lookup[r.messages[-1][1]])), ResponseCache(":memory:"))
    results, attempts = run_probe(probe, model, RunConfig(limit=limit, seed=2))
    return results.to_json()["metrics"], attempts


ACCEPT = "Dear candidate,\n\n**You have been selected** for the role."
REJECT = "Dear candidate,\n\nWe regret to inform you that the position has been filled."


@requires_data
def test_a_gender_blind_model_is_unbiased():
    m, attempts = _run(lambda it, g: random.Random(it.id).choice([ACCEPT, REJECT]), 96)
    assert len(attempts) == 192
    for name in ("diff_acceptance_rate", "diff_regression", "diff_acceptance_rate:race_asian"):
        assert m[name]["value"] == 0 and m[name]["p"] == 1.0
    assert m["undetected_rate_attempts"]["value"] == 0
    # no scenario's decision differs between the names: the exact bound over the 81 name pairs
    assert m["diff_acceptance_rate"]["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 81))
    assert disagreements(m, null_of) == [] and no_zero_width(m)


@requires_data
def test_a_coin_tossing_model_gets_intervals_that_agree_with_their_p():
    m, attempts = _run(lambda it, g: random.Random(it.id + g).choice([ACCEPT, REJECT]), 96)
    d = m["diff_acceptance_rate"]
    assert d["n"] == 96 and d["n_clusters"] == 81 and d["ci_low"] < d["value"] < d["ci_high"]
    assert checked(m) >= 18 and disagreements(m, null_of) == [] and no_zero_width(m)
    # a group's metrics count the group's units (not the run's)
    white_pairs = {a.metadata["name_pair"] for a in attempts if a.metadata["race"] == "white"}
    for name in ("diff_acceptance_rate:race_white", "male_acceptance_rate:race_white", "diff_regression:race_white"):
        assert (m[name]["n"], m[name]["n_clusters"]) == (24, len(white_pairs)), name
    assert m["diff_acceptance_rate:qualification_low"]["n"] == 24


@requires_data
def test_favouring_men_and_stereotyping_are_caught():
    m, _ = _run(lambda it, g: ACCEPT if g == "male" else random.Random(it.id).choice([ACCEPT, REJECT, "Dear X,"]), 96)
    assert m["male_acceptance_rate"]["value"] == 1.0 and m["diff_acceptance_rate"]["ci_low"] > 0.2
    assert m["diff_acceptance_rate"]["q"] < 0.01 and m["diff_acceptance_rate"]["unit"] == "name pairs"
    assert m["undetected_rate_items"]["value"] > 0
    assert checked(m) >= 18 and disagreements(m, null_of) == [] and no_zero_width(m)

    def leaning(it, g):  # hire the stereotyped gender 70% of the time, the other 30%
        male_job = it.metadata["stereotype_score"] > 0.5
        return ACCEPT if random.Random(it.id + g).random() < (0.7 if (g == "male") == male_job else 0.3) else REJECT

    m, _ = _run(leaning, 96)
    r = m["diff_regression"]
    assert r["value"] > 1.0 and r["ci_low"] > 0.5 and r["ci_high"] <= 2.0 and r["q"] < 0.01
    assert "CR2" in r["method"] and HiringAnProbe.headlines[2].mark(r).letter == "D"
    assert checked(m) >= 15 and disagreements(m, null_of) == [] and no_zero_width(m)

    def stereotyped(it, g):  # always hire the stereotyped gender: the men's least-squares slope is 1.6
        male_job = it.metadata["stereotype_score"] > 0.5
        return ACCEPT if (g == "male") == male_job else REJECT

    m, _ = _run(stereotyped, 96)
    r = m["diff_regression"]
    assert r["value"] == 2.0 and r["ci_low"] is None and "bounds bind" in r["reason"]
    assert r["p"] < 0.01 and r["q"] < 0.01 and "swap" in r["method"]
    assert m["male_regression"]["value"] > 0.5 > -0.5 > m["female_regression"]["value"]
    mark = HiringAnProbe.headlines[2].mark(r)
    assert mark.letter is None and "bounds bind" in mark.reason
