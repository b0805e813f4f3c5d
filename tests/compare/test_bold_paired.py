"""BOLD runs on the same prompts compare paired, over persons/topics within group: the mean sentiments by paired
cluster inference on the prompts' scores, the ranges by the paired bootstrap; the gate on the same runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from biaslab.compare.inference import agrees
from biaslab.compare.paired import compare_all
from biaslab.gate.decide import run_gate
from biaslab.probes.bold.pairing import BoldPairing
from tests.compare.test_crows_pairs_paired import biaslab
from tests.conftest import requires_data


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bold")
    a, b = tmp / "echo", tmp / "he"
    for model, out in (("scripted/echo", a), ("scripted/he", b)):
        biaslab(
            "run",
            "bold",
            "--model",
            model,
            "-P",
            "domains=religious_ideology",
            "--limit",
            "60",
            "--out",
            out,
            "-q",
            cache=tmp / "c",
        )
    return a, b


@requires_data
def test_two_models_on_bold_compare_paired_over_persons(two_runs):
    a, b = two_runs
    cmp = compare_all([a, b], n_resamples=300)
    assert cmp["pairs"][0]["design"] == "paired" and cmp["pairs"][0]["unit"].startswith("persons/topics")
    by = {c["metric"]: c for c in cmp["comparisons"]}
    assert by["sentiment_range"]["family"] == "headlines"
    for side, d in (("a", a), ("b", b)):
        reported = json.loads((d / "results.json").read_text())["metrics"]
        for name, c in by.items():
            assert c[side] == pytest.approx(reported[name]["value"]), (side, name)
    means = [n for n in by if n.startswith("mean_sentiment")]
    assert len(means) == 8 and all("bootstrap" not in by[n]["test"] for n in means)  # overall and 7 groups
    assert by["mean_sentiment"]["n_clusters"] == by["sentiment_range"]["n_clusters"] > 6
    assert all("bootstrap" in c["test"] for n, c in by.items() if n.startswith("sentiment_range"))
    for c in cmp["comparisons"]:
        assert agrees(c), c
        assert c["ci_low"] is None or c["ci_high"] > c["ci_low"], c
        if c["p"] is not None:
            assert c["p"] >= 2.0 ** (1 - c["n_clusters"]) - 1e-12, c


@requires_data
def test_the_gate_on_two_bold_runs(two_runs):
    a, b = two_runs
    r = run_gate(a, b, ["sentiment_range=0.5", "sentiment_range:religious_ideology=0.5"], n_resamples=200)
    rows = {m["metric"]: m for m in r["metrics"]}
    assert set(rows) == {"sentiment_range", "sentiment_range:religious_ideology"}
    assert all(m["design"] == "paired" and m["units"] > 6 for m in rows.values())
    assert rows["sentiment_range"]["candidate"] == 0.0 and rows["sentiment_range"]["verdict"] == "non-inferior"
    # a range keeps no unit values (a maximum): runs that agree on every prompt cannot be bounded by agreement
    same = run_gate(a, a, ["sentiment_range=0.5"], n_resamples=200)["metrics"][0]
    assert same["verdict"] == "too small" and "not a mean of values" in same["reason"]


def test_unit_values_average_to_the_pairings_metrics():
    """On a random table (3 domains, 6 groups, people of 1-4 prompts, some unscored): each unit value's mean is
    metric_fn's value; every mean sentiment has them, no range does."""
    rng = np.random.default_rng(7)
    rows = []
    for d, groups in (("d1", ("a", "b")), ("d2", ("c", "d", "e")), ("d3", ("f",))):
        for g in groups:
            for person in range(int(rng.integers(2, 6))):
                for k in range(int(rng.integers(1, 5))):
                    score = None if rng.random() < 0.15 else float(rng.uniform(-1, 1))
                    rows.append({"domain": d, "group": g, "name": f"{g}{person}", "prompt": f"{g}{person}.{k}",
                                 "repetition": 0, "evaluation": score})  # fmt: skip
    pairing = BoldPairing()
    table = pairing.table(rows).columns
    values = pairing.unit_values(table)
    metrics = pairing.metric_fn(table)(table)
    assert set(values) == {n for n in metrics if n.startswith("mean_sentiment")} and len(values) == 7
    for name, uv in values.items():
        assert np.mean(uv.values[uv.mask]) == pytest.approx(metrics[name]), name
        assert uv.bounds == (-1.0, 1.0) and np.array_equal(uv.mask, table["n"] > 0) == (name == "mean_sentiment")
