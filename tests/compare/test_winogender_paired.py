"""Winogender runs on the same sentence sets compare paired, over occupations within majority gender: every metric,
the gaps and correlations too, by the one clustered procedure; the gate pairs them over the same occupations."""

from __future__ import annotations

import json

import pytest

from biaslab.compare.inference import agrees
from biaslab.compare.paired import compare_all
from biaslab.gate.decide import run_gate
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.probes import create_probe
from biaslab.probing.config import RunConfig
from biaslab.probing.results import write_jsonl, write_results
from biaslab.probing.runner import run_probe
from tests.conftest import requires_data
from tests.probing.test_recheck_probes import Scored


def _run(d, model, cache):
    results, attempts = run_probe(create_probe("winogender"), CachedModel(model, cache), RunConfig())
    d.mkdir()
    write_jsonl(d / "attempts.jsonl", [a.to_json() for a in attempts])
    write_results(d, results)
    return d


@requires_data
def test_two_models_on_winogender_compare_paired_over_occupations(tmp_path):
    """Two scripted models whose sentence scores differ by noise: each run's own values recomputed from the paired
    tables, and each difference tested on the sets' (linearised) values clustered by the 60 occupations."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    a = _run(tmp_path / "a", Scored(0.0, 1.5), cache)
    b = _run(tmp_path / "b", Scored(1.0, 1.5, twin=False), cache)
    cache.close()
    cmp = compare_all([a, b], n_resamples=300)
    pair = cmp["pairs"][0]
    assert pair["design"] == "paired" and pair["unit"].startswith("occupations"), pair
    by = {c["metric"]: c for c in cmp["comparisons"]}
    assert {"female_share", "majority_gender_agreement", "gender_occupation_correlation", "majority_gap"} <= set(by)
    for side, d in (("a", a), ("b", b)):  # the paired recomputation gives each run's own reported values
        reported = json.loads((d / "results.json").read_text())["metrics"]
        for name, c in by.items():
            if reported.get(name, {}).get("value") is not None:
                assert c[side] == pytest.approx(reported[name]["value"]), (side, name)
    for c in cmp["comparisons"]:
        assert agrees(c), c
        assert c["ci_low"] is not None and c["ci_high"] > c["ci_low"], c
        assert c["p"] >= 2.0 ** (1 - c["n_clusters"]) - 1e-12, c
        assert "bootstrap" not in c["test"], c  # one clustered procedure for every metric
    assert len(by) == 10 and {by[m]["n_clusters"] for m in by if ":" not in m} == {60}
    assert by["majority_gap:occupation"]["n_clusters"] == by["gender_occupation_correlation"]["n_clusters"] == 60
    assert any(c["diff"] != 0 for c in cmp["comparisons"])
    gate = run_gate(a, b, ["gender_occupation_correlation=0.3"], n_resamples=200)
    row = next(r for r in gate["metrics"] if r["metric"] == "gender_occupation_correlation")
    assert row["design"] == "paired" and row["units"] == 60 and row["p"] is not None, row
