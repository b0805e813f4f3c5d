"""Winogender runs on the same sentence sets compare paired, over occupations within majority gender."""

from __future__ import annotations

import json

import pytest

from biaslab.compare.inference import agrees
from biaslab.compare.paired import compare_all
from tests.compare.test_crows_pairs_paired import biaslab
from tests.conftest import requires_data


@requires_data
def test_two_models_on_winogender_compare_paired_over_occupations(tmp_path):
    a, b = tmp_path / "echo", tmp_path / "he"
    for model, out in (("scripted/echo", a), ("scripted/he", b)):
        biaslab("run", "winogender", "--model", model, "--out", out, "-q", cache=tmp_path / "c")
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
        assert c["ci_low"] is None or c["ci_high"] > c["ci_low"], c
        if c["p"] is not None and c.get("n_clusters"):
            assert c["p"] >= 2.0 ** (1 - c["n_clusters"]) - 1e-12, c
    # 60 occupations: the shares are tested on per-set differences clustered by occupation
    assert by["female_share"]["n_clusters"] == 60
