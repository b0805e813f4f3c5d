"""HolisticBias runs on the same templates compare paired, over templates."""

from __future__ import annotations

import json

import pytest

from biaslab.compare.inference import agrees
from biaslab.compare.paired import compare_all
from tests.compare.test_crows_pairs_paired import biaslab
from tests.conftest import requires_data


@requires_data
def test_two_scorings_of_holistic_bias_compare_paired_over_templates(tmp_path):
    a, b = tmp_path / "mean", tmp_path / "total"
    for flag, out in (("true", a), ("false", b)):
        biaslab(
            "run",
            "holistic-bias",
            "--model",
            "scripted/echo",
            "-P",
            "axes=gender_and_sex,age",
            "--limit",
            "120",
            "-P",
            f"normalize={flag}",
            "--out",
            out,
            "-q",
            cache=tmp_path / "c",
        )
    cmp = compare_all([a, b], n_resamples=300)
    assert cmp["pairs"][0]["design"] == "paired" and cmp["pairs"][0]["unit"] == "templates"
    by = {c["metric"]: c for c in cmp["comparisons"]}
    assert "likelihood_bias" in by and by["likelihood_bias"]["family"] == "headlines"
    for side, d in (("a", a), ("b", b)):
        reported = json.loads((d / "results.json").read_text())["metrics"]
        for name, c in by.items():
            assert c[side] == pytest.approx(reported[name]["value"]), (side, name)
    for c in cmp["comparisons"]:
        assert agrees(c), c
        assert c["ci_low"] is None or c["ci_high"] > c["ci_low"], c
        if c["p"] is not None:
            assert c["p"] >= 2.0 ** (1 - c["n_clusters"]) - 1e-12, c
        assert "bootstrap" not in c["test"], c  # the cells' paired differences, clustered by template
    # the gate: a run against itself rests on its templates, each cell's value a share in [0, 1]
    from biaslab.gate.decide import run_gate

    k = json.loads((a / "results.json").read_text())["metrics"]["likelihood_bias"]["n"]
    same = run_gate(a, a, ["likelihood_bias=0.3"], n_resamples=200)["metrics"][0]
    assert same["units"] == k and same["p"] == pytest.approx(0.7**k), same
    r = run_gate(a, b, ["likelihood_bias=0.3"], n_resamples=200)["metrics"][0]
    assert r["design"] == "paired" and r["units"] == k and r["diff"] == pytest.approx(by["likelihood_bias"]["diff"])
