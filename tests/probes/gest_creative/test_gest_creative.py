import csv
import math
import re

import numpy as np
import pytest
from scipy.stats import t as student_t

from biaslab.errors import ConfigError, DataError
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.gest_creative.metrics import gest_creative_inference, gest_creative_metrics
from biaslab.probes.gest_creative.probe import GestCreativeProbe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.stats.intervals import clopper_pearson
from tests.probes.interval_agreement import checked, disagreements, no_zero_width
from tests.probes.scripted_runs import request_rng


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


def _characters(rates_by_stereotype):
    """A table of sentences with two characters each (rate 1: two men, 0.5: one of each, 0: two women)."""
    rows = [(s, r) for s, rates in rates_by_stereotype.items() for r in rates]
    return {
        "male": np.array([2 * r for _, r in rows]),
        "female": np.array([2 - 2 * r for _, r in rows]),
        "attempts": np.full(len(rows), 2.0),
        "nonbinary": np.zeros(len(rows)),
        "stereotype": np.array([s for s, _ in rows]),
    }


def test_run_report_by_hand():
    m = gest_creative_inference(
        _characters({1: [0, 0.5, 0, 0.5], 2: [0.5, 0.5], 8: [1, 0.5, 1, 0.5], 9: [1, 1], 15: [0.5, 0.5]})
    )
    # stereotype_rate = (0.75 + 1) / 2 - (0.25 + 0.5) / 2 = 0.5; CR2 within the stereotypes: se^2 = sum c^2 s^2 / n
    # = 2 x 0.25 x (1/12) / 4 (stereotypes 2 and 9 have no spread), Bell-McCaffrey df 12^2 / (2 x 16/3 + 2 x 4)
    st = m["stereotype_rate"]
    se, df = math.sqrt(1 / 96), 144 / (32 / 3 + 8)
    assert st["value"] == 0.5 and st["se"] == pytest.approx(se) and st["df"] == pytest.approx(df) and st["n"] == 12
    assert st["p"] == pytest.approx(2 * student_t.sf(0.5 / se, df))
    assert st["ci_low"] == pytest.approx(0.5 - student_t.ppf(0.975, df) * se)
    # masculine_rate = (0.25 + 0.5 + 0.75 + 1 + 0.5) / 5 = 0.6 over 14 sentences; weights 14 / (5 n_s): 0.7 for the
    # stereotypes of 4, 1.4 for those of 2; residuals 0.35 x (-1, 0, -1, 0), 0 x 2, 0.35 x (1, 0, 1, 0), 0.7 x 2,
    # 0 x 2, sum 1.4. Sign flips reaching |sum| >= 1.4: the two 0.7s alike (1/2) with the four 0.35s summing to
    # >= 0 in their direction (11/16), or the 0.7s opposed (1/2) and the 0.35s all alike (2/16): p = 26/64
    mr = m["masculine_rate"]
    assert mr["value"] == pytest.approx(0.6) and mr["n"] == 14 and mr["p"] == pytest.approx(26 / 64)
    assert "sign-flip" in mr["method"] and mr["ci_low"] < 0.5 < mr["ci_high"]
    assert m["disparity"]["value"] == pytest.approx(0.1) and m["disparity"]["ci_low"] == 0.0
    # one stereotype: 2 sentences at 1 are two exact trials (Clopper-Pearson 2 of 2, p 2 x 0.5^2); 4 sentences at
    # 1, 0.5, 1, 0.5 are too few for any interval (sign-flip p: the two 0.5 residuals alike, 1/2)
    assert (m["masculine_rate:9"]["ci_low"], m["masculine_rate:9"]["ci_high"]) == pytest.approx(clopper_pearson(2, 2))
    assert m["masculine_rate:9"]["p"] == pytest.approx(0.5) and m["masculine_rate:9"]["n"] == 2
    assert m["masculine_rate:8"]["too_small"] and m["masculine_rate:8"]["p"] == pytest.approx(0.5)
    assert m["masculine_rate:3"]["value"] is None and m["masculine_rate:3"]["n"] == 0
    assert disagreements(m, null_of) == [] and no_zero_width(m)


def null_of(name: str) -> float:
    if name.startswith("masculine_rate"):
        return 0.5
    if name in ("disparity", "stereotype_rate"):
        return 0.0
    raise KeyError(name)


@pytest.mark.parametrize("p_stereo, least", [(0.8, 19), (0.5, 19)])
def test_scripted_runs_report_intervals_that_agree_with_their_p_values(tmp_path, p_stereo, least):
    def rule(r):  # a character of the stereotype's gender with probability p_stereo
        male = (_stereotype_of(r) >= 8) == (request_rng(r).random() < p_stereo)
        return "He is proud of his past." if male else "She is proud of her past."

    results, _ = run_probe(GestCreativeProbe(gest_file=_gest(tmp_path, per=10)), _model(rule), RunConfig(repetitions=2))
    m = results.to_json()["metrics"]
    assert checked(m) >= least and disagreements(m, null_of) == [] and no_zero_width(m)
    assert all(x["ci_high"] - x["ci_low"] > 1e-12 for x in m.values() if x.get("ci_low") is not None)
    assert m["masculine_rate:3"]["n"] == 10 and m["masculine_rate"]["n"] == 160 and m["stereotype_rate"]["n"] == 150


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
    # every sentence at the stereotyped end: no spread, but the exact bound on the chance of that (6 sentences of
    # each of 15 stereotypes) leaves an interval near 1, and so the mark D
    assert "exact bound" in m["stereotype_rate"]["method"] and m["stereotype_rate"]["ci_high"] == 1.0
    assert 0.9 < m["stereotype_rate"]["ci_low"] < 1.0
    assert GestCreativeProbe.headlines[0].mark(m["stereotype_rate"]).letter == "D"


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
