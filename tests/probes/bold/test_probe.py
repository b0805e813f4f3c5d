"""The bold probe end to end on scripted models: requests, scoring through the scorer, outputs."""

from __future__ import annotations

import json

import pytest

from biaslab.app.results import write_run
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from biaslab.probes import create_probe
from biaslab.probing.config import RunConfig
from biaslab.probing.runner import run_probe
from biaslab.probing.schema import validate_results
from biaslab.scorers import get_scorer
from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.probes.interval_agreement import checked, disagreements

pytestmark = requires_data
GOOD, BAD = "She is a wonderful, brilliant and beloved actor.", "He was a terrible, hated and awful failure."


def by_group(probe):
    actresses = {it.prompts[0].text for it in probe.load_items() if it.metadata["group"] == "American_actresses"}

    def rule(request):
        return BAD if request.prompt in actresses else GOOD

    return rule


def run(probe, rule, tmp_path, **cfg):
    backend = rule if hasattr(rule, "generate") else ScriptedBackend(rule)
    model = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
    try:
        res, att = run_probe(probe, model, RunConfig(**cfg))
        return res.to_json(), att
    finally:
        model.close()


def test_requests_are_raw_prompts_of_40_tokens_or_chat_messages():
    probe = create_probe("bold", domains="gender")
    items = probe.select_items(probe.load_items(), RunConfig(limit=4))
    planned = probe.plan(items, RunConfig(limit=4))
    assert [p.request.prompt for p in planned] == [it.prompts[0].text for it in items]
    assert all(p.request.messages is None and p.request.params.max_tokens == 40 for p in planned)
    chat = create_probe("bold", domains="gender", format="chat", max_new_tokens=12)
    planned = chat.plan(items, RunConfig())
    assert planned[0].request.messages == (("user", items[0].prompts[0].text),)
    assert planned[0].request.params.max_tokens == 12


def test_a_model_negative_about_one_group_shows_in_the_range(tmp_path):
    probe = create_probe("bold", domains="gender")
    results, attempts = run(probe, by_group(probe), tmp_path, limit=60)
    vader = get_scorer("vader")
    good, bad = vader.score([GOOD, BAD])
    assert good > 0.5 and bad < -0.5
    m = results["metrics"]
    assert m["mean_sentiment:American_actors"]["value"] == pytest.approx(good)
    assert m["mean_sentiment:American_actresses"]["value"] == pytest.approx(bad)
    assert m["negative_share:American_actresses"]["value"] == 1.0 and m["positive_share:American_actors"]["value"] == 1
    rng = m["sentiment_range:gender"]
    # every text of a group scores the same: the gap's spread cannot be estimated, so it counts as [-2, 2] (never a
    # zero-width interval), with the reason, and no p that its interval could contradict
    assert rng["value"] == pytest.approx(good - bad) and (rng["ci_low"], rng["ci_high"]) == (0.0, 2.0)
    assert "no spread" in rng["note"] and rng["p"] is None
    assert rng["p_permutation"] < 0.05  # its permutation test, apart from the interval's procedure
    # no metric of the run gives a p value its interval could contradict
    assert checked(m) == 0 and disagreements(m, lambda name: 0.0) == []
    assert results["parameters"]["scorer"] == vader.identity and results["parameters"]["threshold"] == 0.5
    assert {a.evaluation for a in attempts} == {good, bad}
    assert results["data"] == {
        "benchmarks/bold/gender_prompt.json": "a863aaf2492e3c911c39f435005abee2eba5f5edabe836e97de110cd83273054"
    }
    paths = write_run(tmp_path / "out", probe, validate_results(results), attempts)
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Sentiment range by domain" in html and "American_actresses" in html and len(paths) == 3
    assert "Mean sentiment by group" in html and "<svg" in html and "American_actresses (gender)</text>" in html
    row = json.loads((tmp_path / "out" / "attempts.jsonl").read_text().splitlines()[0])
    assert {"domain", "group", "name", "evaluation", "prompt", "text"} <= set(row)


def test_full_text_scores_prompt_and_continuation(tmp_path):
    probe = create_probe("bold", domains="religious_ideology", text="full")
    _, attempts = run(probe, lambda r: "", tmp_path, limit=7)
    vader = get_scorer("vader")
    assert [a.evaluation for a in attempts] == vader.score([a.prompt for a in attempts])


@pytest.mark.parametrize(
    "option, message",
    [
        ("threshold=2", "-P threshold=2: must be above 0 and at most 1"),
        ("format=poem", "format must be one of completion, chat"),
        ("domains=sports", "unknown domain(s) sports"),
        ("scorer=nope", "unknown scorer 'nope'"),
        ("max_new_tokens=0", "-P max_new_tokens=0: must be from 1 to 100,000"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, option, message):
    proc = run_cli(
        "run", "bold", "--model", "scripted/echo", "--limit", "2", "-P", option, "--out", tmp_path / "o", "-q"
    )
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()


def test_over_an_openai_compatible_server_as_completions(tmp_path):
    from biaslab.models.openai.backend import OpenAIBackend
    from tests.models.openai.openai_test_server import OpenAITestServer

    probe = create_probe("bold", domains="religious_ideology")
    srv = OpenAITestServer().start()
    try:
        results, attempts = run(probe, OpenAIBackend("m", base_url=srv.base_url, timeout=10.0), tmp_path, limit=7)
    finally:
        srv.stop()
    assert srv.stats.by_path["/v1/completions"] == 7 and not srv.stats.by_path["/v1/chat/completions"]
    assert sorted(b["prompt"] for b in srv.stats.bodies) == sorted(a.prompt for a in attempts)
    assert all(b["max_tokens"] == 40 for b in srv.stats.bodies)
    assert [a.evaluation for a in attempts] == get_scorer("vader").score([a.text for a in attempts])
    assert all(a.text.strip().startswith("echo:") for a in attempts)
    assert results["metrics"]["sentiment_range:religious_ideology"]["value"] is not None
