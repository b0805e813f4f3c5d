"""The holistic-bias probe end to end: scripted, an OpenAI-compatible server and a masked LM."""

from __future__ import annotations

import json
import re
from itertools import combinations

import pytest

from biaslab.app.results import write_run
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes import create_probe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.probing.schema import validate_results
from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.models.openai.openai_test_server import OpenAITestServer, fake_logprob, fake_tokenize
from tests.probes.interval_agreement import checked, disagreements

pytestmark = requires_data


def scripted_score(sentence: str) -> float:
    """The scripted model: each whitespace token scores -0.1 x its length; mean per token."""
    words = sentence.split()
    return sum(-0.1 * len(w) for w in words) / len(words)


def run(probe, backend, tmp_path, **cfg):
    model = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
    try:
        res, att = run_probe(probe, model, RunConfig(**cfg))
        return res.to_json(), att
    finally:
        model.close()


def test_scripted_run_matches_an_independent_computation(tmp_path):
    from scipy.stats import mannwhitneyu

    probe = create_probe("holistic-bias", axes="nonce,sexual_orientation")
    results, attempts = run(probe, ScriptedBackend("echo"), tmp_path, limit=40)
    # 2 axes: isqrt(40 // 2) = 4 templates x 40 // (2 * 4) = 5 descriptors per axis
    assert results["n_items"] == len(attempts) == 4 * 5 * 2
    items = {it.id: it for it in probe.load_items()}
    cells: dict = {}
    for a in attempts:
        row = a.to_json()
        sentences = [p.text for p in items[a.item_id].prompts]
        assert row["scores"] == pytest.approx([scripted_score(s) for s in sentences])
        assert row["nouns"] == [p.metadata["noun"] for p in items[a.item_id].prompts]
        cells.setdefault((row["template_index"], row["axis"]), {})[row["descriptor"]] = row["scores"]
    shares: dict = {}
    for (_, axis), by_descriptor in cells.items():
        pairs = list(combinations(sorted(by_descriptor), 2))
        hits = sum(mannwhitneyu(by_descriptor[x], by_descriptor[y]).pvalue < 0.05 for x, y in pairs)
        shares.setdefault(axis, []).append(hits / len(pairs))
    m = results["metrics"]
    for axis, values in shares.items():
        assert m[f"likelihood_bias:{axis}"]["value"] == pytest.approx(sum(values) / len(values))
    # the headline leaves the nonce control out: it is sexual_orientation's share alone
    orientation = shares["sexual_orientation"]
    assert m["likelihood_bias"]["value"] == pytest.approx(sum(orientation) / len(orientation))
    head = m["likelihood_bias"]
    assert head["n"] == 4  # templates, the unit of the interval
    # four templates are too few for an interval (no test on 4 units gets below p = 0.125): none, with the reason
    assert head["ci_low"] is None and head["too_small"] and "4 templates" in head["reason"]
    # no metric carries a p value its interval could contradict (the scan of the other probes' runs finds none)
    assert checked(m) == 0 and disagreements(m, lambda name: 0.05) == []
    assert results["parameters"]["axes"] == ["nonce", "sexual_orientation"]
    assert results["parameters"]["phrases"] == "official" and results["details"]["control_axes"] == ["nonce"]
    assert set(results["data"]) == {
        "benchmarks/holistic_bias/descriptors.json",
        "benchmarks/holistic_bias/nouns.json",
        "benchmarks/holistic_bias/sentence_templates.json",
        "benchmarks/holistic_bias/standalone_noun_phrases.json",
    }
    write_run(tmp_path / "out", probe, validate_results(results), attempts)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Likelihood bias by axis" in page and "Most and least likely descriptors" in page
    assert "nonce (control, not in likelihood_bias)" in page
    if results["details"]["warnings"]:
        assert "Warning: the control axis" in page
    assert "Share of descriptor pairs that differ, by axis" in page and "<svg" in page
    # the shortest nonce word makes the most likely sentences under the scripted model
    nonce = results["details"]["descriptors"]["nonce"]
    assert [d["mean_score"] for d in nonce] == sorted((d["mean_score"] for d in nonce), reverse=True)


def test_total_log_likelihood_when_not_normalised(tmp_path):
    probe = create_probe("holistic-bias", axes="nonce", normalize=False)
    _, attempts = run(probe, ScriptedBackend("echo"), tmp_path, limit=8)
    items = {it.id: it for it in probe.load_items()}
    for a in attempts:
        expected = [sum(-0.1 * len(w) for w in p.text.split()) for p in items[a.item_id].prompts]
        assert a.extra["scores"] == pytest.approx(expected)


def test_over_an_openai_compatible_server(tmp_path):
    probe = create_probe("holistic-bias", axes="nonce")
    srv = OpenAITestServer(add_bos=True).start()
    try:
        from biaslab.models.openai.backend import OpenAIBackend

        _, attempts = run(probe, OpenAIBackend("m", base_url=srv.base_url, timeout=10.0), tmp_path, limit=8)
    finally:
        srv.stop()
    items = {it.id: it for it in probe.load_items()}
    for a in attempts:
        for sentence, score in zip((p.text for p in items[a.item_id].prompts), a.extra["scores"], strict=True):
            tokens = [t for t, _ in fake_tokenize(sentence)]
            assert score == pytest.approx(sum(map(fake_logprob, tokens)) / len(tokens))


@pytest.mark.parametrize(
    "args, message",
    [
        (["-P", "axes=gendr"], "unknown axis gendr"),
        (["-P", "normalize=maybe"], "expected true or false"),
        (["--repetitions", "2"], "--repetitions has no meaning for holistic-bias"),
        (["-P", "phrases=some"], "-P phrases must be one of official, descriptors"),
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path, args, message):
    proc = run_cli(
        "run",
        "holistic-bias",
        "--model",
        "scripted/echo",
        "--limit",
        "8",
        *args,
        "--out",
        tmp_path / "o",
        "-q",
        env={"BIASLAB_CACHE_DIR": str(tmp_path / "c")},
    )
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()


def test_results_rebuild_from_attempts(tmp_path):
    probe = create_probe("holistic-bias", axes="nonce,age")
    results, attempts = run(probe, ScriptedBackend("echo"), tmp_path, limit=16)
    write_run(tmp_path / "out", probe, validate_results(results), attempts)
    rows = [json.loads(line) for line in (tmp_path / "out" / "attempts.jsonl").read_text().splitlines()]
    from biaslab.probes.holistic_bias.metrics import likelihood_bias
    from biaslab.probing.honest_results import no_zero_width
    from biaslab.probing.metric_ranges import declare_ranges

    again, _ = likelihood_bias(rows, seed=0)
    # as the run writes them: no zero-width interval, each metric's range declared
    assert declare_ranges(no_zero_width(again, 16), probe.metric_ranges) == results["metrics"]


def test_report_names_the_most_and_least_likely_descriptors_of_each_axis():
    from biaslab.probes.holistic_bias.report import sections

    ranking = {
        "X": [{"descriptor": f"d{i}", "mean_score": -float(i), "n": 1} for i in range(12)],
        "Y": [{"descriptor": "top", "mean_score": -1.0, "n": 1}, {"descriptor": "bottom", "mean_score": -2.0, "n": 1}],
    }
    title = "Most and least likely descriptors"
    from biaslab.probing.results import build_results

    results = build_results(
        probe="holistic-bias",
        probe_version="2",
        model={},
        parameters={},
        data={},
        metrics={},
        n_items=1,
        n_attempts=1,
        details={"descriptors": ranking},
    )
    [table] = [s["html"] for s in sections(results) if s["title"] == title]
    rows = {
        cells[0]: cells[1:]
        for cells in (re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", table))
        if cells
    }
    most, least = rows["X"]
    assert "d0 (-0.00)" in most and "d4 (-4.00)" in most and "d5" not in most
    assert least.startswith("d11 (-11.00)") and "d7 (-7.00)" in least and "d6" not in least
    assert rows["Y"] == ["top (-1.00)", "bottom (-2.00)"]
