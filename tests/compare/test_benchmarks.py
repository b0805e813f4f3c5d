"""`biaslab compare` over runs of two benchmarks (synthetic results.json in the wino probes' shape)."""

import json

import numpy as np
import pytest
from scipy.stats import pearsonr

from biaslab.compare.benchmarks import compare_benchmarks, load_runs, split_two_benchmarks
from biaslab.stats.correlation import pearson_inference
from tests.cli_runner import run_cli

MODELS = ["m1", "m2", "m3", "m4", "m5", "m6"]
A = [60.0, 65.0, 70.0, 72.0, 75.0, 80.0]
B = [55.0, 66.0, 62.0, 75.0, 70.0, 79.0]
GA = {"Jewish": [60, 62, 70, 71, 74, 79], "Women": [80, 70, 90, 60, 85, 75]}
GB = {"Jewish": [58, 64, 69, 73, 73, 80], "Women": [70, 72, 71, 69, 73, 70]}


def _run(tmp_path, probe, model, score, groups):
    d = tmp_path / f"{probe}-{model}"
    d.mkdir()
    metrics = {"bias_score": {"value": score, "ci_low": score - 3, "ci_high": score + 3}}
    for g, v in groups.items():
        metrics[f"bias_score:{g}"] = {"value": float(v), "ci_low": v - 5.0, "ci_high": v + 5.0}
    (d / "results.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "probe": probe,
                "probe_version": "1",
                "model": {"model": model},
                "parameters": {},
                "metrics": metrics,
            }
        )
    )
    return d


def _dirs(tmp_path):
    a = [_run(tmp_path, "winosemitism", m, A[i], {g: GA[g][i] for g in GA}) for i, m in enumerate(MODELS)]
    b = [_run(tmp_path, "gpt-winosemitism", m, B[i], {g: GB[g][i] for g in GB}) for i, m in enumerate(MODELS)]
    return a, b


def test_pearson_r_and_its_fisher_interval_over_models(tmp_path):
    a, b = _dirs(tmp_path)
    split = split_two_benchmarks(load_runs(a + b))
    assert split is not None
    cmp = compare_benchmarks(*split)
    assert cmp["benchmark_a"] == "winosemitism" and cmp["benchmark_b"] == "gpt-winosemitism"
    assert cmp["overall"]["r"] == pytest.approx(pearsonr(A, B).statistic)
    ci = pearsonr(A, B).confidence_interval(0.95)  # scipy's Fisher interval; p from the same z
    assert (cmp["overall"]["ci_low"], cmp["overall"]["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert (cmp["overall"]["p"] < 0.05) == (cmp["overall"]["ci_low"] > 0 or cmp["overall"]["ci_high"] < 0)
    assert list(cmp["overall"]) == ["r", "ci_low", "ci_high", "p", "n_models"] and cmp["overall"]["n_models"] == 6
    for g in GA:
        assert cmp["groups"][g]["r"] == pytest.approx(pearsonr(GA[g], GB[g]).statistic)
    assert [r["model"] for r in cmp["models"]] == MODELS


def test_identical_benchmarks_give_r_one_and_a_constant_side_gives_none():
    x = np.array([1.0, 2.0, 3.0, 5.0])
    line = pearson_inference(x, 2 * x + 1, label="models")
    assert line["value"] == pytest.approx(1.0) and line["ci_low"] is None and line["reason"]
    assert pearson_inference(x, np.ones(4))["value"] is None
    assert pearson_inference(x[:3], x[:3] ** 2)["too_small"]  # Fisher's z needs 4 models


def test_cli_auto_detects_two_benchmarks_and_writes_the_scatter_report(tmp_path):
    a, b = _dirs(tmp_path)
    out = tmp_path / "cmp.html"
    proc = run_cli("compare", *a, *b, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "Pearson r" in proc.stdout and f"{pearsonr(A, B).statistic:.2f}" in proc.stdout
    html = out.read_text()
    assert html.count("data:image/png;base64,") == 2 and "Women" in html
    md = tmp_path / "cmp.md"
    proc = run_cli("compare", *a, *sum([["--against", str(d)] for d in b], []), "--out", md)
    assert proc.returncode == 0, proc.stderr
    assert "| overall | 6 |" in md.read_text()


def test_too_few_shared_models_is_a_one_line_error(tmp_path):
    a, b = _dirs(tmp_path)
    proc = run_cli("compare", a[0], a[1], "--against", b[0], "--against", tmp_path / "nope")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    proc = run_cli("compare", a[0], a[1], "--against", b[0], "--against", b[1])
    assert proc.returncode != 0 and "share 2 model(s)" in proc.stderr and "at least 3" in proc.stderr
