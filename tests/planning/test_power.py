"""Power planning: exact binomial power by hand and against scipy's binomial test, Fisher's z, pilots."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from math import comb

import pytest
from scipy.stats import binom, binomtest

from biaslab.errors import ConfigError
from biaslab.planning.plan import plan
from biaslab.planning.power import binomial_detectable_effect, binomial_n, binomial_power, critical_count, fisher_n


def test_binomial_power_by_hand():
    # n = 10, alpha 0.05: 2 P(X <= 1) = 22/1024 <= 0.05 < 2 P(X <= 2) = 112/1024, so reject k <= 1 or k >= 9
    assert critical_count(10, 0.05) == 1
    p = 0.6
    by_hand = sum(comb(10, k) * p ** k * (1 - p) ** (10 - k) for k in (0, 1, 9, 10))
    assert binomial_power(10, 0.6) == pytest.approx(by_hand, abs=1e-12)
    assert binomial_power(10, 0.5) == pytest.approx(22 / 1024, abs=1e-12)  # under H0: the size of the test


def independent_power(n: int, p1: float, alpha: float = 0.05) -> float:
    """Power from scipy's binomial test itself: the probability of the k it rejects."""
    return sum(binom.pmf(k, n, p1) for k in range(n + 1) if binomtest(k, n, 0.5).pvalue <= alpha)


@pytest.mark.parametrize("n", [5, 6, 17, 40, 61, 100])
def test_rejection_region_is_scipys(n):
    c = critical_count(n, 0.05)
    for k in range(n + 1):
        assert (binomtest(k, n, 0.5).pvalue <= 0.05) == (k <= c or k >= n - c)


def test_bias_score_60_vs_50_needs_199_pairs_and_the_sawtooth():
    res = binomial_n(0.6, 0.05, 0.8)
    assert res == {"n": 199, "n_all_larger": 210, "n_normal": 194}
    powers = {n: independent_power(n, 0.6) for n in range(120, 216)}
    assert powers[199] >= 0.8 and all(powers[n] < 0.8 for n in range(120, 199))
    assert powers[200] < 0.8  # the sawtooth: one more pair, less power
    assert all(powers[n] >= 0.8 for n in range(210, 216)) and powers[209] < 0.8
    # and the minimum detectable effect at 199 pairs is at most 10 points
    assert binomial_detectable_effect(199) <= 0.1 + 1e-9 < binomial_detectable_effect(198)


def test_fisher_z_by_hand():
    n = ((1.959963984540054 + 0.8416212335729143) / math.atanh(0.3)) ** 2 + 3
    assert fisher_n(0.3) == math.ceil(n) == 85


def test_plan_json_from_the_command_line():
    env = {**os.environ}
    proc = subprocess.run([sys.executable, "-m", "biaslab.cli", "plan", "winosemitism", "--effect", "10", "--power",
                           "0.8", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["n_pairs"] == 199 and res["method"].startswith("exact binomial") and res["assumptions"]
    bad = subprocess.run([sys.executable, "-m", "biaslab.cli", "plan", "winosemitism", "--effect", "70"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode != 0 and "out of range" in bad.stderr and "Traceback" not in bad.stderr


def test_bad_input_is_one_line_errors():
    with pytest.raises(ConfigError, match="non-zero"):
        plan("winosemitism", 0)
    with pytest.raises(ConfigError, match="--power"):
        plan("winosemitism", 10, power=1.5)
    with pytest.raises(ConfigError, match="unknown probe"):
        plan("nope", 10)
    with pytest.raises(ConfigError, match="--metric"):
        plan("olympics", 0.2, metric="avg_f1")  # not one of its headlines


def test_every_probe_plans_without_a_pilot():
    from biaslab.probes import PROBES, get_probe_class

    for name in PROBES:
        for h in get_probe_class(name).headlines:
            effect = 0.1 * (h.plan.high - h.plan.low) if hasattr(h.plan, "high") else 0.1
            res = plan(name, effect, metric=h.metric)
            n = res["n_pairs"] if "n_pairs" in res else res["n_items"]
            assert isinstance(n, int) and n > 1 and res["assumptions"], (name, h.metric)


def test_olympics_plans_from_its_stated_spread():
    res = plan("olympics", 0.2)  # explicit_score: per-answer values in [-1, 1], SD at most 1
    assert res["metric"] == "explicit_score" and res["sd_assumed"] == 1.0
    assert res["n_items"] == math.ceil(((1.959964 + 0.841621) * 1.0 / 0.2) ** 2)


def _pilot(tmp_path, clustered: bool):
    rows = []
    for pred in range(20):
        for j in range(10):
            stereo = (pred % 2 == 0) if clustered else ((pred * 10 + j) % 2 == 0)
            rows.append({"item_id": f"r{pred}-{j}", "prompt_index": 0, "repetition": 0, "seed": None,
                         "prompt": f"a{pred}-{j}",
                         "text": f"b{pred}-{j}", "sent_more": f"a{pred}-{j}", "sent_less": f"b{pred}-{j}",
                         "evaluation": "stereotype" if stereo else "counter", "target_ID": "G",
                         "predicate_id": f"p{pred}", "score_more": -1.0 if stereo else -3.0, "score_less": -2.0})
    d = tmp_path / ("clustered" if clustered else "independent")
    d.mkdir()
    (d / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "results.json").write_text(json.dumps({"schema_version": 1, "probe": "pairs", "probe_version": "1",
                                                "model": {}, "parameters": {}, "biaslab_version": "0",
                                                "metrics": {}, "n_items": len(rows), "n_attempts": len(rows)}))
    return d


def test_pilot_with_predicate_clusters_reports_the_design_effect(tmp_path):
    # every pair of a predicate decides alike: clusters of 10, design effect about 10, correlation
    # about 1: 20 predicates hold at most about 20 independent pairs' worth, fewer than 199
    res = plan("pairs", 10, pilot=_pilot(tmp_path, True))
    assert 7 < res["design_effect"] < 13 and res["icc"] > 0.6
    assert res["n_pairs"] is None and any("add predicates" in a for a in res["assumptions"])
    # pairs that vary within their predicate: no inflation (design effect about 1 or below, n stays 199)
    flat = plan("pairs", 10, pilot=_pilot(tmp_path, False))
    assert flat["design_effect"] < 1.3 and flat["n_pairs"] <= math.ceil(199 * 1.3)


def test_pilot_plan_solves_the_growing_design_effect(tmp_path):
    # 40 predicates x 5 pairs; in half the predicates 4 of 5 pairs are stereotyped, in the other half 1 of 5
    rows = []
    for pred in range(40):
        for j in range(5):
            stereo = j < (4 if pred % 2 else 1)
            rows.append({"item_id": f"r{pred}-{j}", "sent_more": f"a{pred}-{j}", "sent_less": f"b{pred}-{j}",
                         "target_ID": "G",
                         "predicate_id": f"p{pred}", "evaluation": "stereotype" if stereo else "counter",
                         "score_more": -1.0, "score_less": -2.0})
    d = tmp_path / "mid"
    d.mkdir()
    (d / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "results.json").write_text(json.dumps({"schema_version": 1, "probe": "pairs", "probe_version": "1",
                                                "model": {}, "parameters": {}, "biaslab_version": "0",
                                                "metrics": {}, "n_items": len(rows), "n_attempts": len(rows)}))
    res = plan("pairs", 20, pilot=d)  # bias score 70 vs 50
    icc, k, n0 = res["icc"], res["n_predicates_pilot"], res["n_independent"]
    assert k == 40 and 0.05 < icc < 0.6 and n0 == binomial_n(0.7)["n"]
    assert icc == pytest.approx((res["design_effect"] - 1) / (5 - 1))
    n = res["n_pairs"]
    assert n == math.ceil(n0 * (1 - icc) / (1 - n0 * icc / 40)) and n > n0
    # n is the smallest whole number with n >= n0 * (1 + (n/k - 1) icc)
    assert n - 1 < n0 * (1 + (n / k - 1) * icc) <= n
    # at 10 points the 40 predicates are not enough (at most k / icc independent pairs' worth)
    assert plan("pairs", 10, pilot=d)["n_pairs"] is None
