"""BBQ runs on the same questions compare paired, over templates within category; accuracies are diagnostics."""

from __future__ import annotations

import json

import pytest

from biaslab.compare.inference import agrees
from biaslab.compare.paired import compare_all
from tests.conftest import requires_data
from tests.probes.bbq.test_bbq_run import N, biaslab, canned_replies


@pytest.mark.slow
@requires_data
def test_likelihood_and_generated_bbq_runs_compare_paired_over_templates(tmp_path):
    replies = canned_replies(tmp_path / "replies.json", N)
    a, b = tmp_path / "ll", tmp_path / "gen"
    biaslab("run", "bbq", "--model", "scripted/echo", "--limit", N, "--out", a, "-q", cache=tmp_path / "c")
    biaslab(
        "run",
        "bbq",
        "--model",
        f"scripted/canned:file={replies}",
        "-P",
        "mode=generate",
        "--limit",
        N,
        "--out",
        b,
        "-q",
        cache=tmp_path / "c",
    )
    cmp = compare_all([a, b], n_resamples=300)
    assert cmp["pairs"][0]["design"] == "paired" and cmp["pairs"][0]["n_shared"] == N
    assert cmp["pairs"][0]["unit"].startswith("templates")
    by = {c["metric"]: c for c in cmp["comparisons"]}
    ma = json.loads((a / "results.json").read_text())["metrics"]
    mb = json.loads((b / "results.json").read_text())["metrics"]
    for name, c in by.items():  # every question shared: the paired tables reproduce each run's own values
        assert c["a"] == pytest.approx(ma[name]["value"]) and c["b"] == pytest.approx(mb[name]["value"]), name
        assert agrees(c), c
        assert c["ci_low"] is None or c["ci_high"] > c["ci_low"], c
        if c["p"] is not None:
            assert c["p"] >= 2.0 ** (1 - c["n_clusters"]) - 1e-12, c
        if c["n_clusters"] < 6:
            assert c["ci_low"] is None and c["reason"], c
    for name in ("accuracy_ambig", "accuracy_disambig"):
        assert by[name]["diagnostic"] and by[name]["q"] is None
    assert by["bias_score_disambig"]["family"] in ("headlines", "bbq other metrics")
