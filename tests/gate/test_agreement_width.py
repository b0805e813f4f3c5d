"""The gate's bound on runs that agree on every unit, beyond means: a linear statistic's agreement width (a
least-squares slope on fixed scores, a contrast of group means) and a folded metric ``|x - c|`` bounded by its
base metric's units (:mod:`biaslab.gate.units`)."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from biaslab.compare.paired import pair_runs
from biaslab.compare.run import load_run
from biaslab.gate.decide import run_gate
from biaslab.gate.units import agreement_p, metric_units
from biaslab.probes import get_probe_class
from biaslab.probes.jobs_lum.inference import occupation_rates, slope_width
from biaslab.probing.pairing import UnitValues
from biaslab.stats.estimand import Estimand, Rows, units_of
from tests.conftest import requires_data


def test_slope_width_by_hand():
    """x = 0, 1, 3: xbar = 4/3, deviations -4/3, -1/3, 5/3, Sxx = 42/9; with the intercept free (y = 0.2, 0.5, 0.6:
    slope 0.12, intercept 0.27) W = max|x - xbar| / (Sxx / N) = (5/3) / (14/9) = 15/14. With the intercept at its
    bound 0 (y = 0, 0 on x = 1, 2) the slope is sum x y / sum x^2: coefficients 1/5, 2/5, W = 2 * 2/5. A slope at
    its bound -1 or 1 has none."""
    assert slope_width(np.array([0.0, 1.0, 3.0]), np.array([0.2, 0.5, 0.6])) == pytest.approx(15 / 14)
    assert slope_width(np.array([1.0, 2.0]), np.array([0.0, 0.0])) == pytest.approx(0.8)
    assert slope_width(np.array([0.0, 1.0]), np.array([0.0, 1.0])) is None  # slope 1: at its bound


def test_contrast_width_by_hand():
    """mean_m - mean_f over 2 m and 3 f rows of 0/1 values: one m row moves the contrast by 1/2, times 5 rows: 2.5."""
    uv = UnitValues.contrast(np.array([0.0, 1, 1, 0, 1]), np.ones(5, bool), np.array(list("mmfff")), "m", "f")
    assert uv is not None and uv.bounds is None and uv.agreement_width == pytest.approx(2.5)


def test_combination_width_by_hand():
    """(mean_a + mean_b) / 2 with 1 row of a and 3 of b, values in [0, 1]: the a row moves it by 1/2, times 4 rows:
    W = 2 (the unequal groups leave the values unbounded)."""
    e = Estimand("m", "combination", "rows", 0.5, bounds=(0.0, 1.0))
    rows = Rows(values=np.array([1.0, 0, 1, 0]), groups=np.array(list("abbb")), coef={"a": 0.5, "b": 0.5})
    uv = UnitValues.of(units_of(e, rows))
    assert uv is not None and uv.bounds is None and uv.agreement_width == pytest.approx(2.0)


def test_clustered_rows_widen_the_agreement_width():
    """A slope's width 1.5 over 4 rows in 2 clusters of 3 and 1 rows: a cluster moves it by at most 3 rows' worth,
    1.5 * 3 / 4 per the 2 clusters: W = 1.5 * 3 * 2 / 4 = 2.25, and p = (1 - 0.1 / 2.25)^2."""
    uv = UnitValues(np.array([0.1, 0.2, 0.3, 0.4]), np.ones(4, bool), agreement_width=1.5)
    clusters = [np.array([0, 1, 2]), np.array([3])]
    pdata = SimpleNamespace(n_shared=4, units=clusters, strata=None, unit="clusters", a={}, b={})
    pairing = SimpleNamespace(unit_values=lambda table: {"s": uv}, folds={"g": "s"})
    units = metric_units(pdata, pairing, ["s", "g"])
    assert units["s"].k == 2 and units["s"].agree and units["s"].agreement_width == pytest.approx(2.25)
    assert units["g"].agreement_width == pytest.approx(2.25) and units["g"].width is None
    assert agreement_p(units["g"], 0.1) == agreement_p(units["s"], 0.1) == pytest.approx((1 - 0.1 / 2.25) ** 2)


@pytest.fixture(scope="module")
def coin_runs(tmp_path_factory):
    """Two scripted coin runs of jobs-lum on 150 occupations, 2 repetitions each, with different seeds."""
    from tests.cli_runner import run_cli

    root = tmp_path_factory.mktemp("agree")
    env = {"BIASLAB_CACHE_DIR": str(root / "cache")}
    for name, seed in (("a", "0"), ("c", "1")):
        args = ["run", "jobs-lum", "--model", "scripted/coin", "--limit", "150", "--repetitions", "2"]
        run_cli(*args, "--seed", seed, "--out", root / name, env=env, check=True)
    return root


@requires_data
def test_jobs_lum_self_gate_bounds_disparity_and_the_slope(coin_runs, cli, tmp_path):
    """A run gated against itself: disparity = |masculine_rate - 0.5| takes the rate's units, so both get
    (1 - 0.03)^150 (non-inferior after Holm: 3 x 0.0103); the slope's width from the scores by hand, its bound
    (1 - 0.05 / W)^150 too weak at 150 occupations, and the line says how many would do; the gate still fails."""
    a = coin_runs / "a"
    res = cli("gate", a, a, "--json", tmp_path / "gate.json")
    failed = " ".join(res.stdout.split("FAIL")[1].split())
    assert res.returncode == 1 and "stereotype_rate" in failed and "disparity" not in failed
    rows = {r["metric"]: r for r in json.loads((tmp_path / "gate.json").read_text())["metrics"]}
    assert rows["disparity"]["verdict"] == rows["masculine_rate"]["verdict"] == "non-inferior"
    every = {"k": 150, "width": 1, "unit": "occupations"}
    assert rows["disparity"]["agree"] == rows["masculine_rate"]["agree"] == every
    assert rows["disparity"]["p"] == rows["masculine_rate"]["p"] == pytest.approx(0.97**150)
    pdata, _ = pair_runs(load_run(a), load_run(a), 0)
    has, _ = occupation_rates(pdata.a)
    x = np.asarray(pdata.a["score"], dtype=float)[has]
    width = np.abs(x - x.mean()).max() / np.var(x)  # max |x_i - xbar| * 1 / (Sxx / N)
    slope = rows["stereotype_rate"]
    assert slope["agree"] == {"k": 150, "width": pytest.approx(width), "unit": "occupations"}
    assert slope["p"] == pytest.approx((1 - 0.05 / width) ** 150)
    need = math.ceil(math.log(0.05 / 3) / math.log1p(-0.05 / width))
    assert slope["verdict"] == "too small" and f"agreement on {need} occupations" in slope["reason"]


@requires_data
def test_folded_metric_is_no_mean_in_compare_or_gate(coin_runs, cli, tmp_path):
    """Runs that differ: disparity's units carry only its base's agreement width (no range, no 0/1 test, no
    correlation), so the gate bootstraps it, and compare still reports it by the paired bootstrap while the rate it
    folds gets the cluster procedure."""
    a, c = coin_runs / "a", coin_runs / "c"
    pdata, _ = pair_runs(load_run(a), load_run(c), 0)
    pairing = get_probe_class("jobs-lum").pairing
    units = metric_units(pdata, pairing, ["masculine_rate", "disparity"])
    rate, fold = units["masculine_rate"], units["disparity"]
    assert not fold.agree and fold.k == rate.k and fold.agreement_width == rate.width == 1.0
    assert fold.width is None and fold.binary == 0 and fold.updown is None and fold.overlap is None
    assert agreement_p(fold, 0.1) == agreement_p(rate, 0.1) == pytest.approx(0.9**rate.k)
    rows = {r["metric"]: r for r in run_gate(a, c)["metrics"]}
    assert "bootstrap" in rows["disparity"]["method"] and "Tango" not in rows["disparity"]["method"]
    cli("compare", a, c, "--out", tmp_path / "cmp.json", check=True)
    cmp = {r["metric"]: r for r in json.loads((tmp_path / "cmp.json").read_text())["comparisons"]}
    assert "bootstrap" in cmp["disparity"]["test"] and "bootstrap" not in cmp["masculine_rate"]["test"]
