"""Folded and maximum intervals: hand-computed cases, and agreement with the p values they carry."""

import numpy as np
import pytest

from biaslab.stats.clustered import cluster_inference
from biaslab.stats.derived import bonferroni_confidence, fold_abs, max_of_gaps


def test_fold_abs_by_hand():
    covers = fold_abs({"value": -0.1, "ci_low": -0.3, "ci_high": 0.2, "p": 0.4, "n": 50})
    assert (covers["value"], covers["ci_low"], covers["ci_high"]) == pytest.approx((0.1, 0.0, 0.3))
    assert covers["p"] == 0.4 and covers["null"] == 0.0 and covers["n"] == 50
    below = fold_abs({"value": -0.4, "ci_low": -0.6, "ci_high": -0.1, "p": 0.01})
    assert (below["value"], below["ci_low"], below["ci_high"]) == pytest.approx((0.4, 0.1, 0.6))
    # disparity = |masculine_rate - 0.5|: 0.62 [0.55, 0.70] gives 0.12 [0.05, 0.20]
    disp = fold_abs({"value": 0.62, "ci_low": 0.55, "ci_high": 0.70, "p": 0.003}, centre=0.5)
    assert (disp["value"], disp["ci_low"], disp["ci_high"], disp["p"]) == pytest.approx((0.12, 0.05, 0.2, 0.003))


def test_fold_abs_keeps_the_reason_when_there_is_no_interval():
    out = fold_abs({"value": 0.3, "ci_low": None, "ci_high": None, "p": 0.5, "reason": "4 templates: too few"})
    assert out["ci_low"] is None and out["reason"] == "4 templates: too few" and out["value"] == 0.3
    assert fold_abs({"value": None, "reason": "no data"})["value"] is None


def test_max_of_gaps_by_hand():
    gaps = [
        {"value": 0.05, "ci_low": -0.02, "ci_high": 0.12, "p": 0.2},
        {"value": -0.2, "ci_low": -0.3, "ci_high": -0.08, "p": 0.004},
        {"value": 0.15, "ci_low": 0.01, "ci_high": 0.29, "p": 0.03},
    ]
    out = max_of_gaps(gaps)
    assert out["value"] == pytest.approx(0.2) and out["p"] == pytest.approx(0.012)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((0.08, 0.3)) and out["n_gaps"] == 3
    gaps[1] = {"value": 0.01, "ci_low": None, "ci_high": None, "p": 0.5, "reason": "too few"}
    assert max_of_gaps(gaps, span=1.0)["ci_high"] == 1.0
    assert max_of_gaps(gaps)["ci_low"] is None and "too few" in max_of_gaps(gaps)["reason"]
    assert bonferroni_confidence(3) == pytest.approx(1 - 0.05 / 3)


def test_every_derived_interval_agrees_with_its_p():
    rng = np.random.default_rng(4)
    conf = bonferroni_confidence(3)
    for _ in range(300):
        gaps = []
        for shift in rng.normal(0, 0.15, 3):
            values = rng.normal(shift, 1, 60)
            clusters = rng.integers(0, 20, 60)
            gaps.append(cluster_inference(values, clusters, null=0.0, confidence=conf))
        top = max_of_gaps(gaps)
        assert (top["p"] < 0.05) == (top["ci_low"] > 0) and top["ci_low"] <= top["value"] <= top["ci_high"]
        one = cluster_inference(rng.normal(rng.normal(0, 0.15), 1, 60), rng.integers(0, 20, 60), null=0.0)
        folded = fold_abs(one)
        assert (folded["p"] < 0.05) == (folded["ci_low"] > 0)
