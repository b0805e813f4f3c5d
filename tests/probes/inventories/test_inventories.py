import random

import numpy as np
import pytest

from biaslab.errors import ConfigError
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.inventories.metrics import inventories_metrics
from biaslab.probes.inventories.probe import InventoriesProbe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data


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
    import subprocess
    import sys

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "biaslab.cli",
            "run",
            "inventories",
            "--model",
            "scripted/he",
            "--limit",
            "3",
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "--limit for inventories must be at least 6" in proc.stdout + proc.stderr
