import numpy as np

from biaslab.stats.bootstrap import bootstrap_metrics


def test_point_estimate_and_ci_of_a_mean():
    table = {"x": np.array([0.0, 1.0, 0.0, 1.0])}
    out = bootstrap_metrics(table, lambda t: {"mean": float(np.mean(t["x"]))}, n_resamples=2000, seed=1)
    assert out["mean"]["value"] == 0.5
    # a resample of 4 Bernoulli(0.5) values: the mean's 2.5% / 97.5% quantiles are 0.0 and 1.0
    assert out["mean"]["ci_low"] == 0.0 and out["mean"]["ci_high"] == 1.0


def test_constant_data_gets_no_zero_width_interval():
    table = {"x": np.full(10, 3.0)}
    out = bootstrap_metrics(table, lambda t: {"m": float(t["x"].mean())}, seed=0)
    reason = out["m"].pop("reason")
    assert out["m"] == {"value": 3.0, "ci_low": None, "ci_high": None, "n": 10, "degenerate": True}
    assert "same value" in reason and "10 units" in reason


def test_undefined_metric_is_none_and_seed_is_reproducible():
    table = {"x": np.arange(20, dtype=float)}
    fn = lambda t: {"nan": float("nan"), "m": float(t["x"].mean())}  # noqa: E731
    a = bootstrap_metrics(table, fn, seed=7)
    b = bootstrap_metrics(table, fn, seed=7)
    assert a == b
    assert a["nan"] == {
        "value": None,
        "ci_low": None,
        "ci_high": None,
        "n": 20,
        "reason": "no value: the metric is undefined on these data",
    }
    assert a["m"]["ci_low"] < 9.5 < a["m"]["ci_high"]
