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
from biaslab.probes.hiring_an.metrics import gap_tests, groups_of, item_table, metric_fn
from biaslab.probes.hiring_an.probe import HiringAnProbe
from biaslab.probes.hiring_bloomberg.data import load_names
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data


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


def test_gap_tests_permute_name_pairs():
    rows = []
    for k in range(13):  # 13 name pairs, men always hired, women never: the gap is as extreme as it can be
        rows += scenario_rows(f"s{k}", f"r{k}", k / 13, "white" if k % 2 else "asian", "high", f"p{k}", ["yes"], ["no"])
    tests = gap_tests(item_table(rows))
    assert tests["diff_acceptance_rate"]["p"] == pytest.approx(2 / 2**13)  # exact: all signs + or all -
    assert tests["diff_abs_acceptance_rate"]["p"] == tests["diff_acceptance_rate"]["p"]
    assert "name pairs" in tests["diff_regression"]["test"]
    assert all(t["q"] >= t["p"] for t in tests.values() if t["p"] is not None)


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


@requires_data
def test_favouring_men_and_stereotyping_are_caught():
    m, _ = _run(
        lambda it, g: ACCEPT if g == "male" else random.Random(it.id).choice([ACCEPT, REJECT, "Dear X,"]),
        96,
        resample="occupations+names",
    )
    assert m["male_acceptance_rate"]["value"] == 1.0 and m["diff_acceptance_rate"]["ci_low"] > 0.2
    assert m["diff_acceptance_rate"]["q"] < 0.01 and "name pairs" in m["diff_acceptance_rate"]["unit"]
    assert m["undetected_rate_items"]["value"] > 0

    def stereotyped(it, g):  # hire the gender the occupation is stereotyped as
        male_job = it.metadata["stereotype_score"] > 0.5
        return ACCEPT if (g == "male") == male_job else REJECT

    m, _ = _run(stereotyped, 96)
    assert m["diff_regression"]["value"] > 1.0 and m["diff_regression"]["ci_low"] > 0.5
    assert m["diff_regression"]["q"] < 0.01
    assert m["male_regression"]["value"] > 0.5 > -0.5 > m["female_regression"]["value"]
    assert HiringAnProbe.headlines[2].mark(m["diff_regression"]).letter == "D"
