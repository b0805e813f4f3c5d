import math

import numpy as np
import pytest

from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.jobs_lum.metrics import bounded_slope, jobs_lum_metrics
from biaslab.probes.jobs_lum.probe import JobsLumProbe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data


def test_metrics_hand_computed():
    # items: rates 1.0 (score 1.0), 0.5 (score 0.5), 0.0 (score 0.0), undetected (score 0.3)
    table = {
        "male": np.array([2, 1, 0, 0]),
        "female": np.array([0, 1, 2, 0]),
        "attempts": np.array([2, 2, 2, 2]),
        "nonbinary": np.array([0, 0, 1, 2]),
        "score": np.array([1.0, 0.5, 0.0, 0.3]),
    }
    m = jobs_lum_metrics(table)
    assert m["masculine_rate"] == pytest.approx(0.5)
    assert m["disparity"] == pytest.approx(0.0)
    assert m["correlation"] == pytest.approx(1.0)
    assert m["stereotype_rate"] == pytest.approx(1.0)
    assert m["undetected_rate_attempts"] == pytest.approx(2 / 8)
    assert m["undetected_rate_items"] == pytest.approx(1 / 4)
    assert m["nonbinary_rate"] == pytest.approx((0 + 0 + 0.5 + 1.0) / 4)


def test_bounded_slope_respects_bounds():
    x = np.array([0.0, 0.5, 1.0])
    assert bounded_slope(x, 0.1 + 0.4 * x) == pytest.approx(0.4)
    # an unbounded fit would have slope 3: clipped to 1, intercept re-fitted within [0, 1]
    assert bounded_slope(x, 3 * x) == pytest.approx(1.0)
    # intercept would be -0.5: bounded at 0, slope re-fitted by least squares through the origin
    y = np.array([-0.5, 0.0, 0.5])
    assert bounded_slope(x, y) == pytest.approx((0.5 * 0.0 + 1.0 * 0.5) / (0.25 + 1.0))
    assert math.isnan(bounded_slope(np.array([0.5, 0.5]), np.array([0.0, 1.0])))


@requires_data
def test_random_model_is_unbiased():
    probe = JobsLumProbe()
    model = CachedModel(ScriptedBackend("coin"), ResponseCache(":memory:"))
    results, attempts = run_probe(probe, model, RunConfig(repetitions=4, seed=3))
    results = results.to_json()
    m = results["metrics"]
    assert len(attempts) == 339 * 4
    assert abs(m["masculine_rate"]["value"] - 0.5) < 0.05
    assert m["masculine_rate"]["ci_low"] < 0.5 < m["masculine_rate"]["ci_high"]
    assert abs(m["stereotype_rate"]["value"]) < 0.15
    assert m["correlation"]["ci_low"] < 0 < m["correlation"]["ci_high"]
    assert m["undetected_rate_attempts"]["value"] == 0
    assert m["nonbinary_rate"]["value"] == 0


@requires_data
def test_always_male_model_is_maximally_biased():
    results, _ = run_probe(JobsLumProbe(), CachedModel(ScriptedBackend("he"), ResponseCache(":memory:")),
                           RunConfig(limit=30))
    m = results.to_json()["metrics"]
    assert m["masculine_rate"]["value"] == 1.0 and m["disparity"]["value"] == 0.5
    assert m["correlation"]["value"] is None  # constant rates: r undefined, reported as null


def test_bounded_fit_matches_scipy_lsq_linear_inside_and_outside_the_box():
    from scipy.optimize import lsq_linear

    from biaslab.probes.jobs_lum.metrics import bounded_fit

    rng = np.random.default_rng(7)
    outside = 0
    for trial in range(300):
        n = int(rng.integers(2, 40))
        x = rng.uniform(0, 1, n)
        slope, intercept = rng.uniform(-3, 3), rng.uniform(-1.5, 2)  # often outside the bounds
        y = slope * x + intercept + rng.normal(0, rng.uniform(0, 0.5), n)
        a, b = bounded_fit(x, y)
        ref = lsq_linear(np.column_stack([x, np.ones_like(x)]), y, bounds=([-1, 0], [1, 1]), method="bvls")
        sse = ((a * x + b - y) ** 2).sum()
        ref_sse = ((ref.x[0] * x + ref.x[1] - y) ** 2).sum()
        assert sse <= ref_sse + 1e-9, trial
        assert (a, b) == pytest.approx(tuple(ref.x), abs=1e-6), trial
        outside += not (-1 <= slope <= 1 and 0 <= intercept <= 1)
    assert outside > 100  # the constrained branches were exercised
