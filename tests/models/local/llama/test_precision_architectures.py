"""precision=bf16 on every architecture the engine runs: scoring through the reduced layers and LM head stays
close to float32 (Gemma 3's final softcap, Qwen2's q/k/v biases, Qwen3's q/k norms, Mistral's and Phi-3's
windows). These tiny random models have large weights and sharp attention, so their errors are larger than a
trained model's."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")

TEXTS = [[1, 5, 9, 13, 40, 2, 7, 7, 30], [1, 5, 9, 20], [1, 70, 3, 3, 8, 12, 33, 60, 61, 62, 4]]


@pytest.mark.parametrize("name", ["tiny_llama", "tiny_gemma3", "tiny_qwen2", "tiny_qwen3", "tiny_mistral", "tiny_phi3"])
def test_bf16_scoring_stays_close_to_float32(name, request):
    from biaslab.models.local.llama.engine import LlamaEngine

    model = request.getfixturevalue(name)
    got: dict[str, dict[int, list[float]]] = {"f32": {}, "bf16": {}}
    with torch.inference_mode():
        full, low = LlamaEngine(model), LlamaEngine(model, matmul_dtype=torch.bfloat16)
        assert low.reduced_head is not None and low.reduced_head.softcap == full.arch.final_softcap
        for key, engine in (("f32", full), ("bf16", low)):
            engine.score(TEXTS, lambda i, lp, g, key=key: got[key].__setitem__(i, lp), workers=1)
        ref = torch.log_softmax(model(torch.tensor([TEXTS[2]])).logits[0].float(), -1)
    want = [ref[p, TEXTS[2][p + 1]].item() for p in range(len(TEXTS[2]) - 1)]
    assert got["f32"][2] == pytest.approx(want, abs=1e-4)  # the float32 engine is transformers' model
    gaps = [abs(a - b) for i in range(3) for a, b in zip(got["f32"][i], got["bf16"][i])]
    scale = max(abs(v) for lp in got["f32"].values() for v in lp)  # about 10 nats for these peaked models
    assert 0 < max(gaps) < 0.05 * scale  # rounded products: close, not equal (measured 0.2 % to 2.7 % of it)
