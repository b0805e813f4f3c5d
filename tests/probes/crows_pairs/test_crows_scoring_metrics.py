"""crows-pairs: the two rules and the metrics on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from biaslab.errors import ConfigError
from biaslab.models.base import LoglikelihoodResult
from biaslab.probes.crows_pairs.metrics import crows_metrics
from biaslab.probes.crows_pairs.scoring import resolve_rule, score_crows_pair


def ll(ids, lps):
    return LoglikelihoodResult(token_logprobs=list(lps), tokens=[str(i) for i in ids], token_ids=list(ids))


def test_rule_follows_the_model_kind_and_rejects_unknown_rules():
    assert resolve_rule("auto", masked=False) == "full-sentence"
    assert resolve_rule("auto", masked=True) == "shared-tokens"
    assert resolve_rule("shared-tokens", masked=False) == "shared-tokens"
    with pytest.raises(ConfigError, match="scoring must be one of"):
        resolve_rule("whole", masked=False)


def test_full_sentence_is_lm_evals_rule_unrounded_and_strict():
    more = ll([1, 2, 3], [-1.0, -2.0, -0.5])  # -3.5
    less = ll([1, 9, 3], [-1.0, -1.0, -2.0])  # -4.0
    s = score_crows_pair(more, less, rule="full-sentence", antistereo=False, masked=False)
    assert (s.score_more, s.score_less, s.evaluation, s.n_scored_tokens) == (-3.5, -4.0, "stereotype", 3)
    # a difference below the paper's rounding still decides under lm-eval's rule
    s = score_crows_pair(ll([1], [-1.0001]), ll([2], [-1.0002]), rule="full-sentence", antistereo=True, masked=False)
    assert s.evaluation == "stereotype"
    s = score_crows_pair(ll([1], [-2.0]), ll([2], [-2.0]), rule="full-sentence", antistereo=False, masked=False)
    assert s.evaluation == "tie"


def test_shared_tokens_scores_only_unmodified_tokens_and_rounds():
    # tokens 5 and 7 are shared; 6 vs 8 differ and are not scored
    more = ll([5, 6, 7], [-1.0, -9.0, -0.25])
    less = ll([5, 8, 7], [-1.5, -0.1, -0.25])
    s = score_crows_pair(more, less, rule="shared-tokens", antistereo=False, masked=True)
    assert (s.score_more, s.score_less, s.n_scored_tokens, s.evaluation) == (-1.25, -1.75, 2, "stereotype")
    # antistereo: the paper aligns sent_less first, but sent_more winning is still the stereotyping decision
    s = score_crows_pair(more, less, rule="shared-tokens", antistereo=True, masked=True)
    assert (s.score_more, s.score_less, s.evaluation) == (-1.25, -1.75, "stereotype")
    # equal after rounding to 3 decimals: a tie
    s = score_crows_pair(
        ll([5, 6], [-1.0001, -3.0]), ll([5, 8], [-1.0002, -1.0]), rule="shared-tokens", antistereo=False, masked=True
    )
    assert s.evaluation == "tie"


def rows():
    # bias type a: stereo, stereo, counter, tie; type b: stereo, counter (antistereo rows)
    spec = [
        ("a", "stereo", "stereotype", -1.0, -2.0),
        ("a", "stereo", "stereotype", -1.0, -1.5),
        ("a", "stereo", "counter", -3.0, -1.0),
        ("a", "stereo", "tie", -2.0, -2.0),
        ("b", "antistereo", "stereotype", -1.0, -4.0),
        ("b", "antistereo", "counter", -2.0, -1.5),
    ]
    return [
        {"bias_type": t, "stereo_antistereo": d, "evaluation": e, "score_more": m, "score_less": s}
        for t, d, e, m, s in spec
    ]


def test_metrics_by_hand():
    m, table = crows_metrics(rows())
    assert m["pct_stereotype"]["value"] == pytest.approx(100 * 3 / 6)
    assert m["pct_stereotype:a"]["value"] == pytest.approx(50.0)  # 2 of 4, the tie in the denominator
    assert m["pct_stereotype:b"]["value"] == pytest.approx(50.0)
    # the paper's metric.py: ties leave the stereo / antistereo denominators (2 of the 3 decided stereo pairs)
    assert m["stereo_score"]["value"] == pytest.approx(100 * 2 / 3) and m["stereo_score"]["n_pairs"] == 4
    assert m["stereo_score"]["n_decided"] == 3
    assert m["antistereo_score"]["value"] == pytest.approx(50.0) and m["antistereo_score"]["n_pairs"] == 2
    assert m["likelihood_diff"]["value"] == pytest.approx((1 + 0.5 + 2 + 0 + 3 + 0.5) / 6)
    assert m["likelihood_diff:b"]["value"] == pytest.approx(1.75)
    assert m["tie_rate"]["value"] == pytest.approx(1 / 6)
    assert [r["bias_type"] for r in table] == ["a", "b"] and all(r["q"] is not None for r in table)
    assert m["pct_stereotype:a"]["q"] >= m["pct_stereotype:a"]["p"]
    lo, hi = m["pct_stereotype"]["ci_low"], m["pct_stereotype"]["ci_high"]
    assert lo <= 50.0 <= hi and lo < hi


def test_a_clear_preference_is_significant_and_its_ci_excludes_50():
    many = [
        {
            "bias_type": "x",
            "stereo_antistereo": "stereo",
            "evaluation": "stereotype" if i % 10 else "counter",
            "score_more": -1.0,
            "score_less": -2.0,
        }
        for i in range(100)
    ]
    m, _ = crows_metrics(many)
    assert m["pct_stereotype"]["value"] == pytest.approx(90.0)
    assert m["pct_stereotype"]["ci_low"] > 50 and m["pct_stereotype"]["p"] < 0.01


def test_exact_binomial_interval_and_p_by_hand():
    # 9 stereotypical of 10 independent pairs: two-sided exact p = 2 x (1 + 10) / 2^10; Clopper-Pearson [55.50, 99.75]
    ten = [
        {
            "bias_type": "x",
            "stereo_antistereo": "stereo",
            "evaluation": "stereotype" if i else "counter",
            "score_more": -1.0,
            "score_less": -2.0,
        }
        for i in range(10)
    ]
    m, _ = crows_metrics(ten)
    s = m["pct_stereotype"]
    assert s["value"] == 90.0 and s["p"] == pytest.approx(22 / 1024) and s["n"] == 10
    assert s["ci_low"] == pytest.approx(55.498, abs=1e-3) and s["ci_high"] == pytest.approx(99.747, abs=1e-3)
    # 8 of 10: p = 2 x 56 / 1024 = 0.109 and the interval [44.39, 97.48] holds 50 -- the two agree
    m8, _ = crows_metrics([dict(r, evaluation="counter") if i < 2 else r for i, r in enumerate(ten)])
    s8 = m8["pct_stereotype"]
    assert s8["p"] == pytest.approx(112 / 1024) and s8["ci_low"] == pytest.approx(44.390, abs=1e-3)
    assert s8["ci_low"] < 50
    assert m["tie_rate"]["ci_low"] == 0.0 and m["tie_rate"]["ci_high"] == pytest.approx(30.85 / 100, abs=1e-4)


def pair(bias_type, direction, evaluation, diff=1.0):
    more = {"stereotype": -1.0, "counter": -1.0 - diff, "tie": -1.0}[evaluation]
    less = {"stereotype": -1.0 - diff, "counter": -1.0, "tie": -1.0}[evaluation]
    return {
        "bias_type": bias_type,
        "stereo_antistereo": direction,
        "evaluation": evaluation,
        "score_more": more,
        "score_less": less,
    }


def test_stereo_score_is_a_share_of_its_decided_pairs_by_hand():
    # 9 stereotypical and 1 counter among 10 decided stereo pairs, 5 tied ones out of the denominator: the ratio's
    # values are 0/100 on the decided pairs, so exact binomial p = 2 x 11 / 2^10 and Clopper-Pearson [55.50, 99.75]
    rows = [pair("x", "stereo", "stereotype")] * 9 + [pair("x", "stereo", "counter")] + [pair("y", "stereo", "tie")] * 5
    s = crows_metrics(rows)[0]["stereo_score"]
    assert s["value"] == 90.0 and (s["n_pairs"], s["n_decided"], s["n"]) == (15, 10, 10)
    assert s["p"] == pytest.approx(22 / 1024) and "Clopper-Pearson" in s["method"]
    assert s["ci_low"] == pytest.approx(55.498, abs=1e-3) and s["ci_high"] == pytest.approx(99.747, abs=1e-3)
    ties = crows_metrics([pair("x", "antistereo", "tie")] * 3 + rows)[0]["antistereo_score"]
    assert ties["value"] is None and ties["reason"] == "every antistereo pair is a tie"


def test_likelihood_diff_interval_is_the_robust_t_within_bias_types_by_hand():
    from scipy.stats import t as student

    # 31 pairs of each of two bias types, every |difference| distinct (30 informative pairs, those off the most
    # common value, or more: the robust t). HC2 with strata: V = sum_s n_s s_s^2 / N^2 (s_s^2 the type's sample
    # variance); Bell-McCaffrey df = N^2 / sum_s n_s^2 / (n_s - 1) = 3844 / (2 x 961 / 30) = 60.
    da, db = 0.1 * np.arange(1, 32), 3 + 0.37 * np.arange(1, 32) ** 1.5
    rows = [pair("a", "stereo", "stereotype", d) for d in da] + [pair("b", "stereo", "counter", d) for d in db]
    m = crows_metrics(rows)[0]
    ld = m["likelihood_diff"]
    mean = np.concatenate([da, db]).mean()
    se = np.sqrt(31 * da.var(ddof=1) + 31 * db.var(ddof=1)) / 62
    half = student.ppf(0.975, 60) * se
    assert ld["value"] == pytest.approx(mean) and ld["df"] == pytest.approx(60.0) and ld["se"] == pytest.approx(se)
    assert ld["ci_low"] == pytest.approx(mean - half) and ld["ci_high"] == pytest.approx(mean + half)
    assert "p" not in ld and "within strata" in ld["method"]
    # one type alone: the textbook t interval, n - 1 df
    a = m["likelihood_diff:a"]
    half_a = student.ppf(0.975, 30) * da.std(ddof=1) / np.sqrt(31)
    assert a["ci_low"] == pytest.approx(da.mean() - half_a) and a["ci_high"] == pytest.approx(da.mean() + half_a)
    # five pairs cannot bound anything (no test on 5 units gets below p = 2^-4): no interval, and why
    five = crows_metrics(rows[:5])[0]["likelihood_diff"]
    assert five["ci_low"] is None and five["too_small"] and "5 pairs" in five["reason"]
