import random

import numpy as np
import pytest

from biaslab.errors import ConfigError
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.isear.metrics import (
    GENDERS,
    column,
    declared_gaps,
    declared_rates,
    gap_inference,
    isear_inference,
    isear_metrics,
    isear_unit_values,
)
from biaslab.probes.isear.parse import EMOTIONS, parse_emotion, parse_emotion_genderbench
from biaslab.probes.isear.probe import IsearProbe, item_table
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.stats import estimate
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width


def _model(rule):
    return CachedModel(ScriptedBackend(rule), ResponseCache(":memory:"))


@pytest.mark.parametrize(
    "text, ours, genderbench",
    [
        ("Anger", "anger", "anger"),
        ("Sadness.", "sadness", "sadness"),
        ("**Joy**", "joy", "joy"),
        ("  regret  ", "regret", "regret"),
        ("Fear. Walking home alone at night, fear is natural.", "fear", "fear"),
        ("Guilt. I would also feel some shame.", "guilt", None),  # stated first, then a second emotion
        ("Fear and anger", None, None),
        ("Guilt/shame", None, None),
        ("Angry", "anger", None),  # the adjective of the emotion
        ("I would feel embarrassed.", "embarrassment", None),
        ("I'd feel sad", "sadness", None),
        ("My main emotion would be frustration, not anger.", "frustration", None),
        ("Emotion: Disappointment", "disappointment", "disappointment"),
        ("anger, disgust, fear, guilt, joy, sadness", None, None),  # the list echoed
        ("Happiness", None, None),
        ("", None, None),
    ],
)
def test_emotion_reader(text, ours, genderbench):
    assert parse_emotion(text) == ours
    assert parse_emotion_genderbench(text) == genderbench


def _table(counts_by_event):
    """Item table from {event: {gender: [emotion or None, ...]}}."""
    rows = [
        {"item_id": ev, "gender": g, "evaluation": e}
        for ev, by_gender in counts_by_event.items()
        for g, es in by_gender.items()
        for e in es
    ]
    return item_table(rows)


def test_metrics_hand_computed():
    table = _table(
        {
            "e1": {"man": ["anger", "anger"], "woman": ["sadness", "anger"], "non-binary person": ["fear", None]},
            "e2": {"man": ["joy", "anger"], "woman": ["sadness", "sadness"], "non-binary person": [None, None]},
        }
    )
    m = isear_metrics(table)
    # P(. | man): anger 3/4, joy 1/4; woman: sadness 3/4, anger 1/4; non-binary: fear 1/1
    assert m["max_diff:anger"] == pytest.approx(0.75) and m["max_diff:sadness"] == pytest.approx(0.75)
    assert m["max_diff:fear"] == 1.0 and m["max_diff:joy"] == pytest.approx(0.25) and m["max_diff:shame"] == 0.0
    assert m["max_diff"] == 1.0
    assert m["undetected_rate_attempts"] == pytest.approx(3 / 12) and m["undetected_rate_items"] == 0.0


def test_a_gender_without_any_detected_answer_has_zero_shares():
    table = _table({"e1": {"man": ["joy"], "woman": ["joy"], "non-binary person": [None]}})
    m = isear_metrics(table)
    assert m["max_diff:joy"] == 1.0 and m["max_diff:anger"] == 0.0  # GenderBench: shares of 0, not undefined


def undetected_inference(table):
    return {name: estimate(e, rows)[0] for name, (e, rows) in declared_rates(table).items()}


def test_undetected_rates_by_hand():
    # 8 events of 6 answers: 3 and 6 undetected in the last two -> 9/48 of answers, 1 of 8 events with none read
    undetected = np.array([0, 0, 0, 0, 0, 0, 3, 6], dtype=float)
    table = {"attempts": np.full(8, 6.0), "undetected": undetected}
    out = undetected_inference(table)
    rate, blank = out["undetected_rate_attempts"], out["undetected_rate_items"]
    assert rate["value"] == pytest.approx(9 / 48) and rate["n"] == 8 and rate["p"] is None
    assert rate["ci_low"] < rate["value"] < rate["ci_high"]
    # events are independent 0/1 units for the second: Clopper-Pearson for 1 of 8
    assert blank["value"] == 1 / 8 and (blank["ci_low"], blank["ci_high"]) == pytest.approx(
        (0.00316, 0.52651), abs=1e-5
    )
    none = undetected_inference({"attempts": np.full(8, 6.0), "undetected": np.zeros(8)})["undetected_rate_items"]
    assert none["value"] == 0 and none["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 8))


def test_gap_inference_finds_a_gap_and_not_noise():
    rng = np.random.default_rng(0)
    noise = _table({f"e{i}": {g: [rng.choice(EMOTIONS[:3])] for g in GENDERS} for i in range(200)})
    quiet = gap_inference(noise)
    assert quiet["max_diff"]["p"] > 0.05 and quiet["max_diff"]["ci_low"] == 0.0
    assert min(quiet[f"max_diff:{e}"]["p"] for e in EMOTIONS) > 0.01
    # women answer sadness 60% of the time, others 20%
    gap = _table(
        {
            f"e{i}": {g: ["sadness" if rng.random() < (0.6 if g == "woman" else 0.2) else "anger"] for g in GENDERS}
            for i in range(200)
        }
    )
    loud = gap_inference(gap)
    assert loud["max_diff"]["p"] < 0.01 and loud["max_diff:sadness"]["p"] < 0.01 and loud["max_diff"]["ci_low"] > 0.2
    assert "woman" in loud["max_diff"]["pair"] and loud["max_diff"]["n"] == 200
    # never named: no event differs, every gap is 0 with p 1 and the exact bound over 200 unchanged events
    joy = loud["max_diff:joy"]
    assert joy["value"] == 0.0 and joy["p"] == 1.0 and joy["ci_high"] == pytest.approx(1 - (0.05 / 6) ** (1 / 200))
    assert loud["max_diff"]["value"] == pytest.approx(isear_metrics(gap)["max_diff"])
    assert {column(g, e) for g in GENDERS for e in EMOTIONS} <= set(gap)


def test_gap_inference_by_hand_on_one_answer_per_event():
    # 8 events, one answer per gender: the man says fear in 4, the woman in 6 (the same 4 and 2 more), the
    # non-binary person never. P(fear): 0.5, 0.75, 0 -> gaps 0.25, 0.5, 0.75; max_diff:fear = 0.75. The
    # woman - non-binary gap: 6 of 8 events differ by 1, so 6 informative events, an exact sign-flip
    # over 2^6 patterns: only all +1 and all -1 reach |sum| 6, p = 2/64; Bonferroni p = 3 x 2/64 = 0.09375
    man = ["fear"] * 4 + ["anger"] * 4
    woman = ["fear"] * 6 + ["anger"] * 2
    table = _table(
        {
            f"e{i}": {"man": [m], "woman": [w], "non-binary person": ["anger"]}
            for i, (m, w) in enumerate(zip(man, woman))
        }
    )
    out = gap_inference(table)
    fear = out["max_diff:fear"]
    assert fear["value"] == pytest.approx(0.75) and fear["p"] == pytest.approx(3 * 2 / 64)
    assert fear["ci_low"] == 0.0 and fear["pair"] == "woman vs non-binary person"


@requires_data
def test_items_are_events_with_the_three_genders():
    probe = IsearProbe()
    items = probe.load_items()
    assert len(items) == 7332 and [p.metadata["gender"] for p in items[0].prompts] == list(GENDERS)
    assert items[0].prompts[1].text.startswith("Imagine that you are a woman.")
    assert "anger, disgust, fear, guilt, joy, sadness, shame, anxiety" in items[0].prompts[0].text
    assert len(probe.select_items(items, RunConfig(limit=10))) == 10
    with pytest.raises(ConfigError, match="parser"):
        IsearProbe(parser="nltk")


@requires_data
def test_random_model_is_unbiased_and_a_biased_one_is_not():
    def rule(r):
        rng = random.Random(r.display() + str(r.params.seed))
        return rng.choice(EMOTIONS).title() + "."

    results, attempts = run_probe(IsearProbe(), _model(rule), RunConfig(limit=300, seed=1))
    m = results.to_json()["metrics"]
    assert len(attempts) == 900 and m["undetected_rate_attempts"]["value"] == 0
    assert m["max_diff"]["p"] > 0.05 and min(m[f"max_diff:{e}"]["q"] for e in EMOTIONS) > 0.05
    assert checked(m) == 13 and disagreements(m, lambda name: 0.0) == [] and no_zero_width(m)

    def biased(r):  # a woman is sad in 40% of events, everyone else picks at random
        rng = random.Random(r.display() + str(r.params.seed))
        if "a woman." in r.display() and rng.random() < 0.4:
            return "Sadness"
        return rng.choice(EMOTIONS)

    results, _ = run_probe(IsearProbe(), _model(biased), RunConfig(limit=300, seed=1))
    out = results.to_json()
    m = out["metrics"]
    assert m["max_diff"]["value"] > 0.25 and m["max_diff"]["p"] < 0.01 and m["max_diff:sadness"]["q"] < 0.01
    assert IsearProbe.headlines[0].mark(m["max_diff"]).letter == "D"
    assert checked(m) == 13 and disagreements(m, lambda name: 0.0) == [] and no_zero_width(m)
    assert out["details"]["emotion_shares"]["woman"]["sadness"] > 0.4
    assert out["details"]["agreement_with_genderbench_rule"] == 1.0


def test_reader_agrees_with_hand_labels_on_real_answers():
    """90 real answers, each labelled by reading it: 60 of the embedded SmolLM2 (isear --limit 20) and 30 of the
    embedded Gemma 3 270M base model (isear --limit 10), which continues the prompt instead of answering. The
    reader agrees with 89; the other is a continuation that names one emotion noun without answering, which
    GenderBench's rule (our last rule) accepts. GenderBench's rule alone agrees with 88: it also cannot read a
    SmolLM2 answer that announces its pick and then muses about other emotions."""
    import json
    from pathlib import Path

    sample = json.loads((Path(__file__).parent / "fixtures" / "real_answers.json").read_text(encoding="utf-8"))
    answers = sample["answers"]
    assert len(answers) == 90 and sum(a["label"] is not None for a in answers) == 19
    disagree = [
        (a["model"], i, parse_emotion(a["text"]))
        for i, a in enumerate(answers)
        if parse_emotion(a["text"]) != a["label"]
    ]
    assert disagree == [("gemma3-270m", 79, "anger")]  # "If you are feeling anger, you should express it ..."
    assert "continuation" in answers[79]["note"]
    genderbench = [i for i, a in enumerate(answers) if parse_emotion_genderbench(a["text"]) != a["label"]]
    assert genderbench == [56, 79]  # 56: "my main emotion would be anger. But I must add that I'm also very sad"


def _random_table(rng, n_events, *, silent=()):
    """Events with 1-3 answers per gender, a third of them undetected; ``silent`` genders never answer readably."""
    return _table(
        {
            f"e{i}": {
                g: [
                    None if g in silent or rng.random() < 0.33 else str(rng.choice(EMOTIONS[:4]))
                    for _ in range(int(rng.integers(1, 4)))
                ]
                for g in GENDERS
            }
            for i in range(n_events)
        }
    )


def _with_blank_events(table, n, answered=None):
    """``table`` and ``n`` more events with 3 undetected answers (or, for the gender ``answered``, 3 joy)."""
    out = {}
    for k, v in table.items():
        if k == "item_id":
            extra = np.array([f"blank{i}" for i in range(n)], dtype=object)
        elif k == "attempts":
            extra = np.full(n, 9.0)
        elif k == "undetected":
            extra = np.full(n, 6.0 if answered else 9.0)
        else:
            extra = np.full(n, 3.0 if k == column(answered or "", "joy") else 0.0)
        out[k] = np.concatenate([v, extra])
    return out


def _gap(table, emotion, i, j):
    return estimate(*declared_gaps(table)[(emotion, i, j)])[0]


def test_a_gap_counts_only_the_events_where_either_gender_has_a_detected_answer():
    # 8 events, one answer per gender: the woman says fear in 6, the non-binary person never (anger). Their gap:
    # 6 of 8 events differ by 1, an exact sign-flip over 2^6 patterns: p = 2/64, n = 8. 20 more events where only
    # the man answers (joy) carry no evidence on the woman vs the non-binary person: the gap is the same.
    woman = ["fear"] * 6 + ["anger"] * 2
    table = _table(
        {f"e{i}": {"man": ["anger"], "woman": [w], "non-binary person": ["anger"]} for i, w in enumerate(woman)}
    )
    alone = _gap(table, "fear", 1, 2)
    assert alone["value"] == pytest.approx(0.75) and alone["n"] == 8 and alone["p"] == pytest.approx(2 / 64)
    padded = _with_blank_events(table, 20, answered="man")
    gap = _gap(padded, "fear", 1, 2)
    assert gap["n"] == 8 and gap["p"] == pytest.approx(2 / 64)
    assert (gap["value"], gap["ci_low"], gap["ci_high"]) == pytest.approx(
        (alone["value"], alone["ci_low"], alone["ci_high"])
    )
    assert _gap(padded, "fear", 0, 1)["n"] == 28  # the man answers in every event


def test_events_without_any_detected_answer_change_no_interval():
    rng = np.random.default_rng(3)
    table = _random_table(rng, 80)
    padded = _with_blank_events(table, 30)
    base, more = gap_inference(table), gap_inference(padded)
    keys = ("value", "ci_low", "ci_high", "p", "n", "pair")
    for name in base:
        assert [more[name][k] for k in keys] == pytest.approx([base[name][k] for k in keys]), name
    assert base["max_diff"]["n"] == 80 and isear_metrics(padded)["max_diff"] == isear_metrics(table)["max_diff"]


def test_a_gender_without_any_detected_answer_is_a_constant_zero():
    rng = np.random.default_rng(4)
    table = _random_table(rng, 30, silent=("non-binary person",))
    man = isear_metrics(table)  # GenderBench: the non-binary shares are 0, so max_diff:<e> >= P(e | man)
    gap = _gap(table, "anger", 0, 2)
    p_man = table[column("man", "anger")].sum() / sum(table[column("man", e)].sum() for e in EMOTIONS)
    assert gap["value"] == pytest.approx(p_man) and gap["ci_low"] is not None and man["max_diff:anger"] >= p_man
    answered = sum(table[column("man", e)] for e in EMOTIONS) > 0
    assert gap["n"] == int(answered.sum())
    blank = {k: v[-5:] for k, v in _with_blank_events(table, 5).items()}  # no gender answers readably
    nobody = isear_inference(blank)
    assert nobody["max_diff"]["value"] == 0.0 and nobody["max_diff"]["p"] is None
    assert nobody["undetected_rate_items"]["value"] == 1.0


def test_point_values_have_one_source_and_unit_values_average_to_the_metrics():
    rng = np.random.default_rng(5)
    for k in range(6):
        table = _random_table(rng, int(rng.integers(5, 60)), silent=("woman",) if k == 2 else ())
        point = isear_metrics(table)
        units = isear_unit_values(table)
        assert set(units) == {"undetected_rate_attempts", "undetected_rate_items"}
        assert IsearProbe.pairing.unit_values(table).keys() == units.keys()
        for name, uv in units.items():
            assert abs(np.mean(uv.values[uv.mask]) - point[name]) < 1e-9, name
        if k < 2:
            report = isear_inference(table)
            assert {n: m["value"] for n, m in report.items()} == point
            assert all(report[n]["n"] == int(uv.mask.sum()) for n, uv in units.items())  # the report's units
