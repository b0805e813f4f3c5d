"""No zero-width interval leaves a run: shares at a bound get exact intervals, anything else a reason."""

from __future__ import annotations

import pytest

from biaslab.probing.honest_results import no_zero_width


def test_zero_width_intervals_are_replaced_and_others_kept():
    metrics = {
        "tie_rate": {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 20},  # independent pairs: 0 of 20
        "bias_score:G": {"value": 100.0, "ci_low": 100.0, "ci_high": 100.0, "n": 30, "n_clusters": 8},
        "mean_sentiment:atheism": {"value": 0.063, "ci_low": 0.063, "ci_high": 0.063, "n": 1, "p": 0.01},
        "pct_stereotype": {"value": 60.0, "ci_low": 55.0, "ci_high": 65.0, "n": 100},
    }
    out = no_zero_width(metrics)
    # Clopper-Pearson for 0 of 20: upper end 1 - 0.025^(1/20)
    assert out["tie_rate"]["ci_low"] == 0.0 and out["tie_rate"]["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 20))
    # clustered: the 8 clusters are the trials, not the 30 pairs
    assert out["bias_score:G"]["ci_low"] == pytest.approx(100 * 0.025 ** (1 / 8))
    assert out["bias_score:G"]["ci_high"] == 100.0
    # one unit of unknown scale: no interval, a reason, and no significant p left without its interval
    sent = out["mean_sentiment:atheism"]
    assert sent["ci_low"] is None and sent["ci_high"] is None and sent["reason"] and sent["p"] is None
    assert out["pct_stereotype"] == metrics["pct_stereotype"]
    for m in out.values():
        assert m["ci_low"] is None or m["ci_high"] - m["ci_low"] > 0


def test_a_metric_without_n_takes_the_runs_items():
    out = no_zero_width({"tie_rate": {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0}}, 300)
    assert out["tie_rate"]["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 300)) and out["tie_rate"]["n"] == 300
