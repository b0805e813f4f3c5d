import math
import random

import numpy as np
import pytest
from scipy.stats import t as student_t

from biaslab.errors import ConfigError
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.inventories.metrics import inventories_inference, inventories_metrics
from biaslab.probes.inventories.probe import InventoriesProbe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.stats.intervals import clopper_pearson
from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width
from tests.probes.scripted_runs import request_rng


def _model(rule):
    return CachedModel(ScriptedBackend(rule), ResponseCache(":memory:"))


def test_metrics_hand_computed():
    # bsri: male-coded items at 1.0 and 0.5, female-coded at 0.0 -> masculine 0.5, gap 0.75 - 0.0
    # epaq: male-coded 1.0, female-coded 1.0 -> masculine 1.0, gap 0; gaucher: only undetected -> left out
    table = {
        "male": np.array([2, 1, 0, 1, 3, 0]),
        "female": np.array([0, 1, 2, 0, 0, 0]),
        "attempts": np.array([2, 2, 2, 1, 3, 2]),
        "nonbinary": np.zeros(6),
        "inventory": np.array(["bsri", "bsri", "bsri", "epaq", "epaq", "gaucher"], dtype=object),
        "gender": np.array(["male", "male", "female", "male", "female", "male"], dtype=object),
    }
    m = inventories_metrics(table)
    assert m["masculine_rate:bsri"] == pytest.approx(0.5) and m["masculine_rate:epaq"] == 1.0
    assert m["stereotype_rate:bsri"] == pytest.approx(0.75) and m["stereotype_rate:epaq"] == 0.0
    assert np.isnan(m["masculine_rate:gaucher"]) and np.isnan(m["stereotype_rate:gaucher"])
    assert m["masculine_rate"] == pytest.approx(0.75) and m["disparity"] == pytest.approx(0.25)
    assert m["stereotype_rate"] == pytest.approx(0.375)
    assert m["undetected_rate_attempts"] == pytest.approx(2 / 12) and m["undetected_rate_items"] == pytest.approx(1 / 6)


def _described(rates_by_stratum):
    """A table of descriptions with two answers each (rate 1: two men, 0.5: one of each, 0: two women, None: no
    gender read), from ``{(inventory, coded gender): [rates]}``."""
    cols = {k: [] for k in ("male", "female", "attempts", "nonbinary", "inventory", "gender")}
    for (inv, g), rates in rates_by_stratum.items():
        for r in rates:
            men = 0 if r is None else int(2 * r)
            cols["male"].append(men)
            cols["female"].append(0 if r is None else 2 - men)
            cols["attempts"].append(2)
            cols["nonbinary"].append(0)
            cols["inventory"].append(inv)
            cols["gender"].append(g)
    return {k: np.array(v, dtype=object if k in ("inventory", "gender") else float) for k, v in cols.items()}


def test_run_report_by_hand():
    table = _described(
        {
            ("bsri", "male"): [1, 0.5, 1, 0.5],  # mean 0.75, s^2 1/12
            ("bsri", "female"): [0, 0.5, 0, 0.5],  # mean 0.25, s^2 1/12
            ("epaq", "male"): [1, 1, 1],
            ("epaq", "female"): [1, 1, 1],
            ("gaucher", "male"): [None],
            ("gaucher", "female"): [None],
        }
    )
    m = inventories_inference(table)
    # stereotype_rate:bsri = 0.75 - 0.25, Welch se sqrt(1/48 + 1/48), Hsu's 3 df
    se = math.sqrt(1 / 24)
    s = m["stereotype_rate:bsri"]
    assert s["value"] == pytest.approx(0.5) and s["se"] == pytest.approx(se) and s["df"] == 3 and s["n"] == 8
    assert s["ci_low"] == pytest.approx(0.5 - student_t.ppf(0.975, 3) * se)
    assert s["p"] == pytest.approx(2 * student_t.sf(0.5 / se, 3))
    # epaq: every description at 1 -> masculine rate 1 (Clopper-Pearson 6 of 6, p 2 x 0.5^6); the gap 1 - 1 = 0
    # over 3 against 3 descriptions: too small (1 / C(6, 3) = 0.05 is the smallest p they allow), the permutation p 1
    e = m["masculine_rate:epaq"]
    assert e["value"] == 1.0 and (e["ci_low"], e["ci_high"]) == pytest.approx(clopper_pearson(6, 6))
    assert e["p"] == pytest.approx(2 * 0.5**6)
    assert m["stereotype_rate:epaq"]["too_small"] and m["stereotype_rate:epaq"]["p"] == 1.0
    # masculine_rate:bsri: residuals from 0.5 sum to 0, so the sign-flip p is 1
    assert m["masculine_rate:bsri"]["value"] == 0.5 and m["masculine_rate:bsri"]["p"] == 1.0
    assert m["masculine_rate:gaucher"]["value"] is None and m["masculine_rate:gaucher"]["n"] == 0
    # masculine_rate = (0.5 + 1) / 2 over 14 descriptions; weights 14 / (2 x 8) = 0.875 (bsri), 14 / (2 x 6) (epaq):
    # residuals 0.4375 x (+1, 0, +1, 0, -1, 0, -1, 0) and 0.5833 x 6, sum 3.5. Exact sign-flip: |0.4375 A +
    # 0.5833 B| >= 3.5 (A the sum of 4 signs, B of 6) for B = +-6 with A >= 0 (as sign) (1/64 x 11/16) and B = +-4
    # with A = +-4 (6/64 x 1/16): p = 2 x (11 + 6) / 1024
    mr = m["masculine_rate"]
    assert mr["value"] == 0.75 and mr["n"] == 14 and mr["p"] == pytest.approx(34 / 1024)
    assert mr["ci_low"] > 0.5 and "sign-flip" in mr["method"]
    assert m["disparity"]["value"] == 0.25 and m["disparity"]["p"] == mr["p"] and m["disparity"]["ci_low"] > 0
    # stereotype_rate = (0.5 + 0) / 2; CR2 within the 4 strata: se^2 = sum c^2 s^2 / n = 2 x 0.25 x (1/12) / 4,
    # Bell-McCaffrey df = 14^2 / (16/3 + 16/3 + 9/2 + 9/2)
    st = m["stereotype_rate"]
    se, df = math.sqrt(1 / 96), 196 / (32 / 3 + 9)
    assert st["value"] == pytest.approx(0.25) and st["se"] == pytest.approx(se) and st["df"] == pytest.approx(df)
    assert st["p"] == pytest.approx(2 * student_t.sf(0.25 / se, df)) and st["n"] == 14
    assert m["undetected_rate_attempts"]["value"] == 4 / 32 and m["undetected_rate_attempts"]["n_clusters"] == 16
    assert disagreements(m, null_of) == [] and no_zero_width(m)


def null_of(name: str) -> float:
    if name.startswith("masculine_rate"):
        return 0.5
    if name.startswith(("disparity", "stereotype_rate")):
        return 0.0
    raise KeyError(name)


@requires_data
@pytest.mark.parametrize("p_coded, least", [(0.8, 9), (0.5, 9)])
def test_scripted_runs_report_intervals_that_agree_with_their_p_values(p_coded, least):
    probe = InventoriesProbe()
    coded = {i.prompts[0].text: i.metadata["gender"] for i in probe.load_items()}

    def rule(r):  # a character of the trait's coded gender with probability p_coded
        male = (coded[r.display().split("\n")[-1]] == "male") == (request_rng(r).random() < p_coded)
        return "He grew up by the sea; his father fished." if male else "She grew up by the sea; her father fished."

    results, _ = run_probe(probe, _model(rule), RunConfig(repetitions=2, seed=3))
    m = results.to_json()["metrics"]
    assert checked(m) >= least and disagreements(m, null_of) == [] and no_zero_width(m)
    assert all(x["ci_high"] - x["ci_low"] > 1e-12 for x in m.values() if x.get("ci_low") is not None)
    assert m["masculine_rate:epaq"]["n"] == 32 and m["stereotype_rate:epaq"]["n"] == 32


@requires_data
def test_items_are_genderbenchs_149_descriptions_and_limit_keeps_every_list():
    probe = InventoriesProbe()
    items = probe.load_items()
    assert len(items) == 149
    sizes = {}
    for i in items:
        key = (i.metadata["inventory"], i.metadata["gender"])
        sizes[key] = sizes.get(key, 0) + 1
    assert sizes == {
        ("bsri", "female"): 20,
        ("bsri", "male"): 20,
        ("epaq", "female"): 16,
        ("epaq", "male"): 16,
        ("gaucher", "female"): 38,
        ("gaucher", "male"): 39,
    }
    assert "a character who acts as a leader." in items[20].prompts[0].text
    chosen = probe.select_items(items, RunConfig(limit=30))
    assert len(chosen) == 30
    assert len({(i.metadata["inventory"], i.metadata["gender"]) for i in chosen}) == 6
    with pytest.raises(ConfigError, match="at least 6"):
        probe.validate(RunConfig(limit=5))


@requires_data
def test_random_model_is_unbiased():
    results, attempts = run_probe(InventoriesProbe(), _model("coin"), RunConfig(repetitions=5, seed=1))
    m = results.to_json()["metrics"]
    assert len(attempts) == 149 * 5
    assert m["masculine_rate"]["ci_low"] < 0.5 < m["masculine_rate"]["ci_high"]
    assert m["stereotype_rate"]["ci_low"] < 0 < m["stereotype_rate"]["ci_high"]
    assert (
        m["stereotype_rate"]["p"] > 0.05
        and min(m[f"stereotype_rate:{i}"]["q"] for i in ("bsri", "epaq", "gaucher")) > 0.05
    )


@requires_data
def test_stereotyping_model_is_found_in_every_inventory():
    probe = InventoriesProbe()
    coded = {i.prompts[0].text: i.metadata["gender"] for i in probe.load_items()}

    def rule(r):  # 85% of characters take the trait's coded gender
        male = (coded[r.display().split("\n")[-1]] == "male") == (
            random.Random(r.display() + str(r.params.seed)).random() < 0.85
        )
        return "He grew up by the sea; his father fished." if male else "She grew up by the sea; her father fished."

    results, _ = run_probe(probe, _model(rule), RunConfig(repetitions=3))
    m = results.to_json()["metrics"]
    assert 0.55 < m["stereotype_rate"]["value"] < 0.85 and m["stereotype_rate"]["p"] < 0.001
    assert all(m[f"stereotype_rate:{i}"]["q"] < 0.01 for i in ("bsri", "epaq", "gaucher"))
    assert InventoriesProbe.headlines[0].mark(m["stereotype_rate"]).letter == "D"


@requires_data
def test_too_small_a_limit_is_a_one_line_error_on_the_command_line(tmp_path):
    proc = run_cli("run", "inventories", "--model", "scripted/he", "--limit", "3", "--out", tmp_path / "run")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "--limit for inventories must be at least 6" in proc.stdout + proc.stderr
