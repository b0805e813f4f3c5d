"""GGUF files of the other architectures the engine runs (Qwen2 with biases and tied embeddings, Qwen3, Phi-3 with
its fused projections), written offline from tiny random models: converted into the model store, loaded without
transformers (also in a fresh process),
scored by the engine exactly as transformers scores the file itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("gguf")

from tests.models.local.tiny_gguf import byte_level_vocab, write_gguf  # noqa: E402

pytestmark = [pytest.mark.real_model]

TEXT = "the hello in the winter"


def _tiny(arch: str):
    torch.manual_seed(5)
    common = dict(
        vocab_size=len(byte_level_vocab()[0]),
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        initializer_range=0.3,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    )
    if arch == "qwen2":
        model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(tie_word_embeddings=True, **common))
    elif arch == "phi3":  # a padding id inside this small vocabulary (Phi3Config's default is 32000)
        model = transformers.Phi3ForCausalLM(
            transformers.Phi3Config(
                tie_word_embeddings=False, original_max_position_embeddings=128, pad_token_id=0, **common
            )
        )
    else:  # what transformers reads from a Qwen3 GGUF: Qwen3Config's head_dim (128)
        model = transformers.Qwen3ForCausalLM(
            transformers.Qwen3Config(tie_word_embeddings=False, head_dim=128, **common)
        )
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "bias" in name or "norm" in name:
                p.copy_(torch.randn_like(p) * 0.5 + (1.0 if "norm" in name else 0.0))
    return model.eval().requires_grad_(False)


@pytest.mark.parametrize("arch", ["qwen2", "qwen3", "phi3"])
def test_gguf_converts_loads_light_and_scores_as_transformers(arch, tmp_path, monkeypatch):
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.registry import load_model

    monkeypatch.setenv("BIASLAB_MODELS_DIR", str(tmp_path / "store"))
    path = write_gguf(
        _tiny(arch),
        tmp_path / f"tiny-{arch}.gguf",
        arch=arch,
        name=f"tiny {arch}",
        pad_token_id=0 if arch == "phi3" else None,
    )
    direct = transformers.AutoModelForCausalLM.from_pretrained(
        str(tmp_path), gguf_file=path.name, dtype=torch.float32
    ).eval()
    tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file=path.name)
    assert direct.config.model_type == arch

    backend = load_model(f"gguf/{path}").backend()  # converts into the store, then loads the conversion
    m = backend._m
    assert type(m.model).__name__ == "LightCausalLM" and type(m.tokenizer).__name__ == "LightTokenizer"
    assert backend._engine() is not None and m.engine is not None and m.engine.arch.name == arch
    ids = tok(TEXT)["input_ids"]
    assert m.tokenizer(TEXT)["input_ids"] == ids and len(ids) > 5
    with torch.inference_mode():
        logp = torch.log_softmax(direct(torch.tensor([ids])).logits[0].float(), -1)
    want = [float(logp[p - 1, ids[p]]) for p in range(1, len(ids))]
    [res] = backend.loglikelihood([LoglikelihoodRequest(context="the", continuation=TEXT[3:])])
    got = res.token_logprobs
    assert len(got) == len(ids) - 1 and got == pytest.approx(want, abs=1e-4)

    code = (
        "import sys, json; from biaslab.models.registry import load_model; "
        "b = load_model(sys.argv[1]).backend(); e = b._engine(); "
        "print(json.dumps([b.identity(), e.arch.name, sorted({m.split('.')[0] for m in sys.modules} "
        "& {'transformers', 'gguf'})]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, f"gguf/{path}"], capture_output=True, text=True, check=True, env=os.environ
    )
    ident, name, heavy = json.loads(out.stdout.strip().splitlines()[-1])
    assert ident == backend.identity() and name == arch and heavy == []
