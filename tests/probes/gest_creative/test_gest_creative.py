import csv
import math
import re

import numpy as np
import pytest

from biaslab.errors import ConfigError, DataError
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.gest_creative.metrics import gest_creative_metrics
from biaslab.probes.gest_creative.probe import GestCreativeProbe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe


def _gest(tmp_path, per=6):
    """A file in GEST's format with our own sentences: ``per`` for each stereotype."""
    path = tmp_path / "gest.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["sentence", "stereotype"])
        for j in range(per):
            for s in range(1, 17):
                w.writerow([f"I once did deed {j}, kind {s}, and it mattered.", s])
    return str(path)


def _model(rule):
    return CachedModel(ScriptedBackend(rule), ResponseCache(":memory:"))


def _stereotype_of(request) -> int:
    return int(re.search(r"kind (\d+)", request.display()).group(1))


def test_metrics_hand_computed():
    # stereotype 1: items at rates 1.0 and 0.0 -> 0.5; 2: one item 0.25 (+ an undetected item);
    # 8: 1.0; 15: 0.0 (left out of stereotype_rate); the others have no item
    table = {
        "male": np.array([2, 0, 1, 0, 3, 0]),
        "female": np.array([0, 2, 3, 0, 0, 1]),
        "attempts": np.array([2, 2, 4, 2, 3, 1]),
        "nonbinary": np.array([0, 0, 0, 2, 0, 0]),
        "stereotype": np.array([1, 1, 2, 2, 8, 15]),
    }
    m = gest_creative_metrics(table)
    assert m["masculine_rate:1"] == 0.5 and m["masculine_rate:2"] == 0.25 and m["masculine_rate:8"] == 1.0
    assert m["masculine_rate:15"] == 0.0 and math.isnan(m["masculine_rate:3"])
    assert m["masculine_rate"] == pytest.approx((0.5 + 0.25 + 1.0 + 0.0) / 4)
    assert m["disparity"] == pytest.approx(abs(0.5 - 0.4375))
    assert m["stereotype_rate"] == pytest.approx(1.0 - (0.5 + 0.25) / 2)
    assert m["undetected_rate_attempts"] == pytest.approx(2 / 14) and m["undetected_rate_items"] == pytest.approx(1 / 6)
    assert m["nonbinary_rate"] == pytest.approx((2 / 2) / 6)


def test_items_limit_draws_every_stereotype_equally(tmp_path):
    probe = GestCreativeProbe(gest_file=_gest(tmp_path))
    items = probe.load_items()
    assert len(items) == 96 and items[0].id == "gest-0000" and items[0].metadata["stereotype"] == 1
    assert '"I once did deed 0, kind 1, and it mattered."' in items[0].prompts[0].text
    chosen = probe.select_items(items, RunConfig(limit=40))
    counts = np.bincount([i.metadata["stereotype"] for i in chosen], minlength=17)[1:]
    assert len(chosen) == 32 and set(counts.tolist()) == {2}
    with pytest.raises(ConfigError, match="at least 16"):
        probe.select_items(items, RunConfig(limit=10))


def test_bad_gest_files_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("sentence,stereotype\nI did it.,17\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 2: stereotype '17' is not an id 1-16"):
        GestCreativeProbe(gest_file=str(bad)).load_items()
    bad.write_text("text,id\nI did it.,1\n", encoding="utf-8")
    with pytest.raises(DataError, match="missing column"):
        GestCreativeProbe(gest_file=str(bad)).load_items()
    with pytest.raises(DataError, match="does not exist"):
        GestCreativeProbe(gest_file=str(tmp_path / "none.csv")).load_items()
    with pytest.raises(ConfigError, match="slot"):
        GestCreativeProbe(template="no slot")


def test_without_gest_the_error_says_where_to_put_it(tmp_path, monkeypatch):
    from biaslab.data import registry

    if "gest/gest.csv" in registry.FILES:  # registered: its own error names BIASLAB_DATA_DIR/gest/gest.csv
        monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path))
        monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DataError, match="gest/gest.csv"):
        GestCreativeProbe().load_items()


def test_random_model_is_unbiased(tmp_path):
    probe = GestCreativeProbe(gest_file=_gest(tmp_path, per=12))
    results, attempts = run_probe(probe, _model("coin"), RunConfig(repetitions=4, seed=2))
    m = results.to_json()["metrics"]
    assert len(attempts) == 192 * 4
    for name in ("masculine_rate", "stereotype_rate"):
        assert m[name]["ci_low"] < (0.5 if name == "masculine_rate" else 0.0) < m[name]["ci_high"]
        assert m[name]["p"] > 0.05
    assert abs(m["stereotype_rate"]["value"]) < 0.1 and m["disparity"]["value"] < 0.05
    assert m["undetected_rate_attempts"]["value"] == 0
    assert results.to_json()["parameters"]["gest_file"]["sha256"]


def test_stereotyping_model_scores_one_and_is_detected(tmp_path):
    rule = lambda r: "He is proud of his past." if _stereotype_of(r) >= 8 else "She is proud of her past."  # noqa: E731
    results, _ = run_probe(GestCreativeProbe(gest_file=_gest(tmp_path)), _model(rule), RunConfig())
    out = results.to_json()
    m = out["metrics"]
    assert m["stereotype_rate"]["value"] == 1.0 and m["stereotype_rate"]["p"] < 0.001
    assert m["masculine_rate"]["value"] == pytest.approx(9 / 16)
    assert m["masculine_rate:3"]["value"] == 0.0 and m["masculine_rate:3"]["n"] == 6
    assert m["masculine_rate:3"]["q"] < 0.1
    rows = {r["stereotype"]: r for r in out["details"]["stereotypes"]}
    assert rows[15]["in_stereotype_rate"] is False and rows[16]["about"] == "men"
    # every resample gives the same stereotype_rate: no interval, and so no mark
    assert m["stereotype_rate"]["degenerate"]
    assert GestCreativeProbe.headlines[0].mark(m["stereotype_rate"]).letter is None


def test_marks_follow_the_worse_end_of_the_interval(tmp_path):
    import random

    def rule(r):  # 90% stereotypical characters, the rest the other gender
        male = (_stereotype_of(r) >= 8) == (random.Random(r.display() + str(r.params.seed)).random() < 0.9)
        return "He is proud of his past." if male else "She is proud of her past."

    results, _ = run_probe(GestCreativeProbe(gest_file=_gest(tmp_path, per=12)), _model(rule), RunConfig(repetitions=3))
    m = results.to_json()["metrics"]
    assert 0.7 < m["stereotype_rate"]["value"] < 0.9 and m["stereotype_rate"]["p"] < 0.001
    marks = {h.metric: h.mark(m[h.metric]) for h in GestCreativeProbe.headlines}
    assert marks["stereotype_rate"].letter == "D"  # harm >= 0.5
    assert marks["masculine_rate"].letter in ("B", "C")  # 9/16 stereotypes male: about 0.55 +- noise
    assert marks["disparity"].letter == marks["masculine_rate"].letter


def test_always_male_model(tmp_path):
    results, _ = run_probe(GestCreativeProbe(gest_file=_gest(tmp_path, per=2)), _model("he"), RunConfig())
    m = results.to_json()["metrics"]
    assert m["masculine_rate"]["value"] == 1.0 and m["disparity"]["value"] == 0.5
    assert m["stereotype_rate"]["value"] == 0.0
