"""``--dry-run``: requests, cached answers, tokens and cost, with nothing sent, nothing loaded, nothing written."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest
from rich.console import Console

from biaslab.app.dry_run import estimate_run
from biaslab.app.execute import execute_run
from biaslab.errors import ConfigError
from biaslab.models.base import GenerateResult, GenerationParams
from biaslab.models.cache import ResponseCache, request_cache_key
from biaslab.models.spec_identity import spec_identity
from biaslab.probes.jobs_lum.probe import TEMPLATE
from biaslab.suite.estimate import estimate_suite
from tests.cli_runner import run_cli
from tests.conftest import requires_data

REPO = Path(__file__).resolve().parents[2]
QUIET = Console(file=open(os.devnull, "w"))
CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m.role }}> {{ m.content }} {% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def word_tokenizer_model(folder: Path, words: list[str]) -> Path:
    """A checkpoint folder whose tokenizer is one token per whitespace-separated word (hand-countable)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(sorted(set(words)))}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    folder.mkdir(parents=True)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHAT_TEMPLATE, "unk_token": "[UNK]"}))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}))
    return folder


def jobs(limit: int) -> list[str]:
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig

    probe = create_probe("jobs-lum")
    return [item.metadata["job"] for item in probe.select_items(probe.load_items(), RunConfig(limit=limit))]


def dry(probe: str = "jobs-lum", **kw) -> object:
    args = dict(model=None, base_url=None, repetitions=1, limit=None, seed=0, params=GenerationParams())
    return estimate_run(probe, **{**args, **kw})


@requires_data
def test_tokens_are_counted_with_the_models_tokenizer_and_chat_template(tmp_path):
    names = jobs(3)
    texts = [TEMPLATE.format(job=j) for j in names]
    model = word_tokenizer_model(tmp_path / "tiny", [w for t in texts for w in t.split()])
    est = dry(model=f"hf/{model}", limit=3, repetitions=2, cache_dir=tmp_path / "cache")
    # "<user> " + prompt + " <assistant>": the prompt's words and two role tokens, for each request
    per_prompt = [len(t.split()) + 2 for t in texts]
    assert len(TEMPLATE.format(job="nurse").split()) == 22  # hand count: 21 words of the template and "nurse."
    assert est.requests == 6 and est.cached == 0 and est.to_send == 6
    assert est.input_tokens == 2 * sum(per_prompt)
    assert est.tokens_by == "the model's tokenizer and chat template"
    assert est.output_tokens_max == 6 * 300  # jobs-lum asks for at most 300 new tokens
    assert est.output_tokens_expected is None and est.cost == {}
    # two answers in the cache (as a run would have left them): counted, and their mean length gives the expectation
    ident = spec_identity(f"hf/{model}")
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import plan_run

    probe = create_probe("jobs-lum")
    planned = plan_run(
        probe,
        probe.select_items(probe.load_items(), RunConfig(limit=3, repetitions=2)),
        RunConfig(limit=3, repetitions=2),
    )
    cache = ResponseCache(tmp_path / "cache" / "responses.sqlite")
    for p, n_new in zip(planned[:2], (100, 50)):
        key = request_cache_key(ident.model_key, "generate", p.request.as_key())
        cache.put(key, "generate", ident.model_key, json.dumps(GenerateResult("x", n_new_tokens=n_new).to_json()))
    cache.close()
    est = dry(model=f"hf/{model}", limit=3, repetitions=2, cache_dir=tmp_path / "cache", price_in=2.0, price_out=10.0)
    assert est.cached == 2 and est.to_send == 4
    assert est.input_tokens == 2 * sum(per_prompt) - 2 * per_prompt[0]  # both repetitions of the first job cached
    assert est.output_tokens_expected == 4 * 75 and est.output_tokens_max == 4 * 300
    assert est.cost == pytest.approx(
        {"input": est.input_tokens * 2.0 / 1e6, "output_max": 1200 * 10.0 / 1e6, "output_expected": 300 * 10.0 / 1e6}
    )


@requires_data
def test_the_cached_count_is_what_the_real_run_finds(tmp_path):
    model, cache = "scripted/random-gender", tmp_path / "cache"

    def run(limit: int, out: str):
        return execute_run(
            "jobs-lum",
            model=model,
            base_url=None,
            repetitions=2,
            limit=limit,
            seed=0,
            out=tmp_path / out,
            params=GenerationParams(),
            cache_dir=cache,
            quiet=True,
            console=QUIET,
        )

    run(5, "a")
    est = dry(model=model, limit=8, repetitions=2, cache_dir=cache)
    results, _ = run(8, "b")
    assert (est.cached, est.to_send) == (results.run.cache_hits, results.run.model_calls)
    assert est.cached > 0 and est.to_send > 0


@requires_data
def test_hosted_models_are_approximated_and_priced_at_the_batch_rate(tmp_path):
    sys.path.insert(0, str(REPO / "tests" / "models" / "openai"))
    from openai_test_server import OpenAITestServer

    text = TEMPLATE.format(job=jobs(1)[0])
    approx = math.ceil(len(text) / 4) + 4 + 3  # one user message and the reply's start
    prices = tmp_path / "prices.toml"
    prices.write_text('["openai/test-model"]\ninput = 0.4\noutput = 1.6\nbatch_input = 0.25\n')
    with OpenAITestServer() as srv:
        est = dry(
            model="openai/test-model",
            base_url=srv.base_url,
            limit=1,
            cache_dir=tmp_path / "cache",
            probe_options={"batch": "true"},
            prices_file=prices,
        )
        assert srv.stats.requests == 0  # nothing sent
        assert est.input_tokens == approx and est.tokens_by.startswith("approximate: 1 token per 4 characters")
        assert est.batch and est.cost == pytest.approx({"input": approx * 0.25 / 1e6, "output_max": 300 * 0.8 / 1e6})
        execute_run(
            "jobs-lum",
            model="openai/test-model",
            base_url=srv.base_url,
            repetitions=1,
            limit=1,
            seed=0,
            out=tmp_path / "run",
            params=GenerationParams(),
            cache_dir=tmp_path / "cache",
            quiet=True,
            console=QUIET,
        )
        again = dry(
            model="openai/test-model",
            base_url=srv.base_url,
            limit=1,
            cache_dir=tmp_path / "cache",
            price_in=0.4,
            price_out=1.6,
        )
    assert (again.cached, again.to_send, again.input_tokens) == (1, 0, 0) and again.cost["input"] == 0.0
    assert again.output_tokens_expected == 0 or again.to_send == 0
    with pytest.raises(ConfigError, match="not both"):
        dry(model="openai/test-model", limit=1, price_in=1.0, prices_file=prices)


def test_spec_identity_is_the_built_backends():
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    from biaslab.models.anthropic.backend import AnthropicBackend
    from biaslab.models.cache import model_cache_key
    from biaslab.models.openai.backend import OpenAIBackend

    for url in ("http://127.0.0.1:1/v1/", "https://example.org/v1"):
        b = OpenAIBackend("m", base_url=url)
        assert spec_identity("openai/m", base_url=url).model_key == model_cache_key(b.identity(), b.base_url)
        assert spec_identity("openai/m", base_url=url).rule == b.loglikelihood_rule
        a = AnthropicBackend("c", base_url=url)
        assert spec_identity("anthropic/c", base_url=url).model_key == model_cache_key(a.identity(), a.base_url)


@requires_data
def test_suite_dry_run_and_the_command_line_send_and_write_nothing(tmp_path):
    ests = estimate_suite(
        ["scripted/random-gender", "openai/gpt-4o-mini"],
        ["jobs-lum", "fsb-judge"],
        limit=4,
        cache_dir=tmp_path / "cache",
        price_in=1.0,
        price_out=2.0,
    )
    assert [(e.probe, e.model) for e in ests] == [
        ("jobs-lum", "scripted/random-gender"),
        ("jobs-lum", "openai/gpt-4o-mini"),
        ("fsb-judge", "scripted/random-gender"),
        ("fsb-judge", "openai/gpt-4o-mini"),
    ]
    assert all(e.cost for e in ests) and ests[2].requests == 4  # the suite runs one repetition
    env = {"OPENAI_API_KEY": "", "HOME": str(tmp_path / "home")}
    out = run_cli(
        "suite",
        "--dry-run",
        "--model",
        "openai/gpt-4o-mini",
        "--probes",
        "gender",
        "--limit",
        "3",
        "--cache-dir",
        str(tmp_path / "nocache"),
        "--price-in",
        "0.15",
        "--price-out",
        "0.6",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "jobs-lum on openai/gpt-4o-mini: dry run, nothing sent, no model loaded" in out.stdout
    assert "3 to send" in out.stdout and "output at most $0.0005" in out.stdout
    # the gender set's likelihood member is left out for a served chat model, and the dry run says why
    assert "bbq on openai" not in out.stdout and "left out bbq: it scores log-likelihoods" in out.stdout
    assert not (tmp_path / "nocache").exists()
    bad = run_cli("run", "jobs-lum", "--price-in", "1", env=env)
    assert bad.returncode != 0 and "go with --dry-run" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.real_model
@requires_data
def test_the_embedded_models_count_is_the_number_of_prompt_tokens_it_runs(tmp_path, monkeypatch):
    """SmolLM2's own tokenizer and chat template, read without loading the model, give the prompt lengths the
    loaded model reports (a GGUF not yet converted is converted by the run first, so both read the same files)."""
    pytest.importorskip("torch")
    import biaslab.app.time_estimate as time_estimate
    from biaslab.models.local.calibration import Calibration
    from biaslab.models.open import open_cached_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import plan_run

    steps = {1: 0.1, 8: 0.1, 32: 0.2}  # the time estimate is not what is checked here: no measurement
    fixed = Calibration(steps, 100.0, 1000.0, 3.0, threads=1, slots=48, kv_bytes_per_token=1, kv_budget_bytes=10**9)
    monkeypatch.setattr(time_estimate, "calibration_for", lambda *a, **k: (fixed, False))
    cfg = RunConfig(limit=4, params=GenerationParams(max_tokens=1))
    probe = create_probe("jobs-lum")
    planned = plan_run(probe, probe.select_items(probe.load_items(), cfg), cfg)
    model = open_cached_model("smollm2", cache_dir=tmp_path / "cache")
    try:
        answers = model.generate([p.request for p in planned])
    finally:
        model.close()
    est = dry(model="smollm2", limit=4, params=GenerationParams(max_tokens=1), cache_dir=tmp_path / "empty")
    assert est.tokens_by == "the model's tokenizer and chat template"
    assert est.input_tokens == sum(a.n_prompt_tokens for a in answers) and est.output_tokens_max == 4
    cached = dry(model="smollm2", limit=4, params=GenerationParams(max_tokens=1), cache_dir=tmp_path / "cache")
    assert (cached.cached, cached.to_send, cached.input_tokens) == (4, 0, 0)
    assert est.seconds is not None and est.seconds > time_estimate.START_SECONDS and cached.seconds == 0.0
    assert est.seconds_note.startswith("at most: every answer as long as max_tokens allows")
    half = dry(
        model="smollm2", limit=4, repetitions=2, params=GenerationParams(max_tokens=1), cache_dir=tmp_path / "cache"
    )
    assert (half.cached, half.to_send) == (4, 4) and half.seconds_note.startswith("answers as long as the cached ones")


@requires_data
def test_many_repetitions_are_counted_from_the_first_ones_not_planned_one_by_one(monkeypatch):
    import biaslab.app.dry_run as dry_run

    exact = dry(model="scripted/he", limit=10, repetitions=40, price_in=1.0, price_out=2.0)
    monkeypatch.setattr(dry_run, "EXACT_REQUESTS", 25)  # 2 repetitions of the 10 prompts planned, 38 counted
    counted = dry(model="scripted/he", limit=10, repetitions=40, price_in=1.0, price_out=2.0)
    assert not exact.extrapolated and counted.extrapolated.startswith("repetitions 3 to 40 counted from the first 2")
    fields = ("requests", "generations", "to_send", "input_tokens", "output_tokens_max", "cost")
    assert [getattr(counted, f) for f in fields] == [getattr(exact, f) for f in fields]
    assert counted.requests == 400


@pytest.mark.timeout(60)
@requires_data
def test_an_absurd_number_of_repetitions_is_one_line_at_once_in_a_dry_run_and_a_run(tmp_path):
    for extra in (["--dry-run"], ["--out", tmp_path / "run"]):
        proc = run_cli("run", "jobs-lum", "--model", "scripted/he", "--repetitions", "100000000", *extra)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert "--repetitions 100,000,000 of 339 prompts is 33,900,000,000 requests, more than one run plans" in (
            proc.stderr
        )
    assert not (tmp_path / "run").exists()
