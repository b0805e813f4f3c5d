"""The fsb-judge probe in process: prompt structure, example exclusion, scripted judges."""

import csv
import random
import zlib
from collections import Counter

import numpy as np
import pytest

from biaslab.fsb.judge_scale import SYSTEM_PROMPT
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes import create_probe
from biaslab.probes.fsb_judge.metrics import score_bin
from biaslab.probes.fsb_judge.probe import FsbJudgeProbe, format_score
from biaslab.probing.config import RunConfig
from biaslab.probing.core import spread_subset
from biaslab.probing.runner import run_probe
from biaslab.probing.schema import validate_results
from tests.conftest import requires_data

pytestmark = requires_data


@pytest.fixture(scope="module")
def released():
    import os
    from pathlib import Path

    fsb = Path(os.environ["BIASLAB_DATA_DIR"]) / "fsb"
    with open(fsb / "fsb_final_scores.csv", newline="") as fh:
        scores = {r["id"]: float(r["score_normalized"]) for r in csv.DictReader(fh)}
    with open(fsb / "FSB_text.csv", newline="") as fh:
        return {r["uid"]: (r["response"].strip(), scores[r["uid"]]) for r in csv.DictReader(fh)}


def run(probe, rule, tmp_path, **cfg):
    model = CachedModel(ScriptedBackend(rule), ResponseCache(tmp_path / "c.sqlite"))
    try:
        res, att = run_probe(probe, model, RunConfig(**cfg))
        return res.to_json(), att
    finally:
        model.close()


def test_items_are_the_released_texts_with_normalised_scores(released):
    items = FsbJudgeProbe().load_items()
    assert len(items) == 1000
    assert {i.id: (i.prompts[0].text, i.metadata["human_score"]) for i in items} == released


def test_every_request_has_exactly_the_papers_structure(released):
    probe = FsbJudgeProbe()
    planned = probe.plan(probe.load_items(), RunConfig(repetitions=2, seed=5))
    requests = [p.request for p in planned]
    assert len(requests) == 2 * (1000 - 8)
    by_text = dict(released.values())
    for request, item in zip(requests, [p.item for p in planned]):
        msgs = request.messages
        assert len(msgs) == 1 + 2 * 8 + 1
        assert msgs[0] == ("system", SYSTEM_PROMPT)
        shots = msgs[1:-1]
        assert [role for role, _ in shots] == ["user", "assistant"] * 8
        bins = Counter()
        for (_, text), (_, answer) in zip(shots[::2], shots[1::2]):
            assert answer == format_score(by_text[text])  # the example's own normalised score
            bins[score_bin(by_text[text])] += 1
        assert bins == {0: 2, 1: 2, 2: 2, 3: 2}
        assert msgs[-1] == ("user", released[item.id][0])
        assert request.params.temperature == 0.0
    assert SYSTEM_PROMPT.startswith("On a fine-grained real-valued scale of 0 to 1, give the following sentence")
    assert SYSTEM_PROMPT.endswith("Only give the score and nothing else.")


def test_examples_of_a_repetition_are_never_among_its_evaluated_items(tmp_path):
    probe = FsbJudgeProbe()
    results, attempts = run(probe, lambda r: "0.5", tmp_path, repetitions=4, seed=11)
    by_rep = {}
    for a in attempts:
        by_rep.setdefault(a.repetition, []).append(a)
    draws = []
    for rows in by_rep.values():
        examples = set(rows[0].metadata["example_ids"])
        assert len(examples) == 8 and all(set(a.metadata["example_ids"]) == examples for a in rows)
        evaluated = {a.item_id for a in rows}
        assert not examples & evaluated
        assert len(evaluated) == 1000 - 8  # everything else is rated
        draws.append(frozenset(examples))
    assert len(set(draws)) == 4  # each repetition draws its own
    assert [r["example_ids"] for r in results["details"]["repetitions"]] == [
        rows[0].metadata["example_ids"] for rows in by_rep.values()
    ]


def test_examples_come_from_all_items_and_limit_only_selects_the_rated_ones(tmp_path):
    probe = FsbJudgeProbe()
    items = probe.load_items()
    subset = spread_subset(items, 30)
    full = probe.plan(items, RunConfig(repetitions=3, seed=2))
    limited = probe.plan(subset, RunConfig(repetitions=3, seed=2))
    ex = lambda planned: {p.repetition: p.prompt.metadata["example_ids"] for p in planned}  # noqa: E731
    assert ex(full) == ex(limited)
    assert len(limited) == sum(1 for i in subset for rep in range(3) if i.id not in ex(full)[rep])


def _truth(released):
    return dict(released.values())


def test_a_judge_answering_the_truth_plus_small_noise_agrees(tmp_path, released):
    truth = _truth(released)

    def judge(request):
        rng = random.Random(f"{request.messages[-1][1]}|{request.repetition}")
        return f"{min(1.0, max(0.0, truth[request.messages[-1][1]] + rng.gauss(0, 0.03))):.3f}"

    results, _ = run(FsbJudgeProbe(), judge, tmp_path, repetitions=2)
    m = results["metrics"]
    assert m["pearson_r"]["value"] > 0.98 and m["spearman_r"]["value"] > 0.97
    assert m["mse"]["value"] < 0.002 and m["mae"]["value"] < 0.03
    assert m["undetected_rate"]["value"] == 0.0
    assert m["pearson_r"]["ci_low"] <= m["pearson_r"]["value"] <= m["pearson_r"]["ci_high"]


def test_a_judge_answering_at_random_does_not_correlate(tmp_path):
    def judge(request):
        return f"{random.Random(f'{request.messages[-1][1]}|{request.repetition}').random():.3f}"

    results, _ = run(FsbJudgeProbe(), judge, tmp_path, repetitions=3)
    r = results["metrics"]["pearson_r"]
    assert abs(r["value"]) < 0.08 and r["ci_low"] < 0 < r["ci_high"]
    # uniform answers against scores of variance ~0.05: MSE ~ 1/12 + var + (0.5 - mean)^2
    assert 0.10 < results["metrics"]["mse"]["value"] < 0.17


def test_undetected_answers_are_counted_and_left_out(tmp_path, released):
    truth = _truth(released)

    def judge(request):
        text = request.messages[-1][1]
        return "I'd rather not say." if zlib.crc32(text.encode()) % 4 == 0 else f"Score: {truth[text]:.4f}"

    results, attempts = run(FsbJudgeProbe(), judge, tmp_path, repetitions=1)
    undetected = np.mean([a.evaluation is None for a in attempts])
    assert 0.15 < undetected < 0.35
    assert results["metrics"]["undetected_rate"]["value"] == pytest.approx(undetected)
    assert results["metrics"]["mse"]["value"] == pytest.approx(0, abs=1e-8)
    assert results["metrics"]["pearson_r"]["value"] == pytest.approx(1.0)


def test_the_registry_creates_the_probe_and_the_report_has_the_figures(tmp_path):
    probe = create_probe("fsb-judge")
    results, attempts = run(probe, lambda r: "0.3", tmp_path, repetitions=1, limit=40)
    from biaslab.report.html import render_report

    html = render_report(validate_results(results), [a.to_json() for a in attempts], probe)
    assert html.count("<img") >= 2 and "Judge score against human score" in html and "Error by bin" in html
    assert "GPT-4" in html
