"""KoBBQ's metrics on hand-made answers: each value computed by hand, out-of-choice answers apart, groups, the
spread across wordings, and intervals that agree with their p values."""

from __future__ import annotations

import random

import numpy as np
import pytest

from biaslab.probes.kobbq.metrics import kobbq_metrics
from tests.probes.interval_agreement import checked, disagreements


def row(template, answer, *, cond="amb", ctx="amb", label=2, biased=1, prompt=1, kind="ST"):
    return {
        "template": template,
        "category": template.rsplit("-", 1)[0],
        "label_annotation": kind,
        "prompt_id": prompt,
        "context_condition": cond,
        "context_type": ctx,
        "answer": answer,
        "label": label,
        "biased_answer": biased,
        "unknown_answer": 2,
    }


# ambiguous (correct: unknown, 2): biased, biased, counter-biased, unknown, out of choice
AMB = [row("age-001", a) for a in (1, 1, 0, 2, None)]
# disambiguated, biased context (correct = biased = 1): right, right, wrong
DIS_B = [row("ses-002", a, cond="dis", ctx="dis-biased", label=1, kind="NC") for a in (1, 1, 0)]
# disambiguated, counter-biased context (correct 0, biased 1): wrong (biased), wrong (unknown), out of choice
DIS_C = [row("ses-002", a, cond="dis", ctx="dis-counterb", label=0, kind="NC") for a in (1, 2, None)]


def test_each_official_metric_by_hand():
    m, details = kobbq_metrics(AMB + DIS_B + DIS_C)
    assert m["accuracy_amb"]["value"] == pytest.approx(1 / 4)  # the out-of-choice answer left out
    assert m["diff_bias_amb"]["value"] == pytest.approx((2 - 1) / 4)  # unknown answers stay in the denominator
    assert m["accuracy_dis"]["value"] == pytest.approx(2 / 5)
    assert m["diff_bias_dis"]["value"] == pytest.approx(2 / 3 - 0 / 2)
    assert m["diff_bias_dis"]["accuracy_biased"] == pytest.approx(2 / 3)
    assert m["ooc_rate"]["value"] == pytest.approx(2 / 11) and m["ooc_rate"]["n_ooc"] == 2
    # by category and by label type: each holds one condition here
    assert m["diff_bias_amb:age"]["value"] == pytest.approx(0.25) and m["diff_bias_amb:ses"]["value"] is None
    assert m["diff_bias_dis:NC"]["value"] == pytest.approx(2 / 3) and m["ooc_rate:ST"]["value"] == pytest.approx(0.2)
    assert m["diff_bias_amb:prompt1"]["value"] == pytest.approx(0.25)
    assert [g["group"] for g in details["groups"]] == ["overall", "age", "ses", "NC", "ST", "prompt1"]
    assert details["spread"]["diff_bias_amb"]["range"] is None  # one wording: no spread


def test_a_wording_that_changes_the_answers_shows_as_spread():
    careful = [{**r, "prompt_id": 2, "answer": 2} for r in AMB]  # the second wording: always unknown, 5 answered
    m, details = kobbq_metrics(AMB + careful)
    assert m["diff_bias_amb:prompt2"]["value"] == 0 and m["accuracy_amb:prompt2"]["value"] == 1
    assert m["diff_bias_amb"]["value"] == pytest.approx(1 / 9) and m["accuracy_amb"]["value"] == pytest.approx(6 / 9)
    s = details["spread"]["diff_bias_amb"]
    assert (s["min"], s["max"], s["min_prompt"], s["max_prompt"]) == (0, 0.25, 2, 1)
    assert s["range"] == pytest.approx(0.25)
    by = {(r["prompt_id"], r["group"]): r for r in details["by_prompt"]}
    assert by[(2, "age")]["accuracy_amb"] == 1 and by[(1, "ST")]["ooc_rate"] == pytest.approx(0.2)


def _run(bias: float, n_templates: int = 24, seed: int = 1) -> list[dict]:
    """Answers over templates of two categories: ambiguous questions answered with the biased group at
    ``bias`` + 1/3 and the other at 1/3 (unknown otherwise); disambiguated ones right at 0.9 in biased
    contexts and 0.9 - bias in counter-biased ones."""
    rng = random.Random(seed)
    rows = []
    for t in range(n_templates):
        template = f"{('age', 'religion')[t % 2]}-{t:03d}"
        for _ in range(6):
            u = rng.random()
            rows.append(row(template, 1 if u < 1 / 3 + bias else 0 if u < 2 / 3 + bias else 2))
            rows.append(row(template, 1 if rng.random() < 0.9 else 0, cond="dis", ctx="dis-biased", label=1))
            right = rng.random() < 0.9 - bias
            rows.append(row(template, 0 if right else 1, cond="dis", ctx="dis-counterb", label=0))
    return rows


def test_a_biased_model_is_found_and_every_interval_agrees_with_its_p():
    biased, _ = kobbq_metrics(_run(0.3))
    fair, _ = kobbq_metrics(_run(0.0))
    for name in ("diff_bias_amb", "diff_bias_dis"):
        assert biased[name]["p"] < 0.01 and biased[name]["ci_low"] > 0, name
        assert fair[name]["ci_low"] < 0 < fair[name]["ci_high"], name
        assert biased[name]["n"] == 24 and "q" in biased[f"{name}:age"]
    for m in (biased, fair):
        assert checked(m) >= 6 and disagreements(m, lambda name: 0.0) == []
        assert all(m[k]["ci_low"] <= m[k]["value"] <= m[k]["ci_high"] for k in m if m[k].get("ci_low") is not None)


def _paired(rows: list[dict]) -> tuple[dict, dict, dict]:
    """The pairing's table of ``rows`` (each its own sample), its unit values and its metrics of the table."""
    from biaslab.probes.kobbq.pairing import KobbqPairing

    pairing = KobbqPairing()
    t = pairing.table([{**r, "sample_id": f"s{k}", "permutation": 0} for k, r in enumerate(rows)]).columns
    return t, pairing.unit_values(t), dict(pairing.metric_fn(t)(t))


def _mean(uv) -> float:
    return float(np.mean(uv.values[uv.mask]))


def test_diff_bias_dis_is_the_difference_of_two_linearised_accuracies_by_hand():
    """Biased contexts right, right, wrong (2/3), counter-biased right, wrong (1/2): 1/6 over the 5 answered
    disambiguated prompts (an out-of-choice and an ambiguous one left out). Biased accuracy's values 2/3 + (right -
    2/3 biased) / (3/5): 11/9, 11/9, -4/9, 2/3, 2/3; counter-biased 1/2 + (right - 1/2 counter) / (2/5): 1/2, 1/2,
    1/2, 7/4, -3/4; their differences average to 1/6, and leave [-1, 1] (no bounds)."""
    dis_b = [row("ses-002", a, cond="dis", ctx="dis-biased", label=1, kind="NC") for a in (1, 1, 0)]
    dis_c = [row("ses-002", a, cond="dis", ctx="dis-counterb", label=0, kind="NC") for a in (0, 1, None)]
    rows = dis_b + dis_c + [row("ses-002", 1)]
    _, uv, metrics = _paired(rows)
    gap = uv["diff_bias_dis"]
    assert gap.mask.tolist() == [True] * 5 + [False, False] and gap.bounds is None
    assert gap.values[gap.mask] == pytest.approx([13 / 18, 13 / 18, -17 / 18, -13 / 12, 17 / 12])
    assert _mean(gap) == pytest.approx(1 / 6) == metrics["diff_bias_dis"]
    assert metrics["diff_bias_dis"] == pytest.approx(kobbq_metrics(rows)[0]["diff_bias_dis"]["value"])
    # one answer per side, right and wrong: each side's values its accuracy, 1 and 0; the gap's stay in [-1, 1]
    one = _paired([dis_b[0], dis_c[1]])[1]["diff_bias_dis"]
    assert one.values.tolist() == [1.0, 1.0] and one.bounds == (-1.0, 1.0)


def test_every_metric_of_every_group_is_the_mean_of_its_unit_values():
    """A random run over two categories, two wordings and label types, some answers out of choice: every metric the
    pairing computes, diff_bias_dis of each group too, is the mean of its unit values."""
    rng = random.Random(5)
    rows = [
        {**r, "prompt_id": rng.choice([1, 2]), "label_annotation": rng.choice(["ST", "NC"]), "answer": a}
        for r in _run(0.2, n_templates=8)
        for a in [r["answer"] if rng.random() > 0.1 else None]
    ]
    _, uv, metrics = _paired(rows)
    defined = {name for name, v in metrics.items() if np.isfinite(v)}
    assert {"diff_bias_dis:age", "diff_bias_dis:ST", "diff_bias_dis:prompt2"} <= defined == set(uv)
    for name in defined:
        assert _mean(uv[name]) == pytest.approx(metrics[name]), name
