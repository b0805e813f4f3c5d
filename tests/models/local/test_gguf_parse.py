"""The faster metadata parsing of a conversion (:mod:`biaslab.models.local.gguf_parse`) reads every value of a GGUF
file as gguf's reader and transformers' own parsing do: strings (non-ASCII), arrays of strings (an empty one among
them), numbers of every width, booleans, and the tensors' descriptions."""

from __future__ import annotations

import pytest

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")
tf_gguf = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")


def _write(path) -> None:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("Zürich naïve — 数字")
    w.add_token_list(["<s>", "</s>", "héllo", "", " ▁the", "🤖", "שלום", *(f"t{i}" for i in range(300))])
    w.add_token_types([1, 3, 1, 1, 1, 1, 1, *([1] * 300)])
    w.add_token_scores([0.5, -1.25, *np.linspace(-3, 3, 305).tolist()])
    w.add_uint8("test.u8", 255)
    w.add_int8("test.i8", -128)
    w.add_uint16("test.u16", 65535)
    w.add_int16("test.i16", -32768)
    w.add_uint32("test.u32", 2**32 - 1)
    w.add_int32("test.i32", -(2**31))
    w.add_uint64("test.u64", 2**64 - 1)
    w.add_int64("test.i64", -(2**63))
    w.add_float32("test.f32", 1.5)
    w.add_float64("test.f64", -2.25e-300)
    w.add_bool("test.yes", True)
    w.add_bool("test.no", False)
    w.add_array("test.ints", [1, -2, 3])
    w.add_tensor("token_embd.weight", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.add_tensor("output_norm.weight", np.ones(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _read(path) -> tuple[dict, list]:
    """Every field parsed as transformers parses it, and every tensor's name, type, shape and data."""
    reader = gguf.GGUFReader(str(path))
    parse = tf_gguf._gguf_parse_value
    fields = {name: [parse(f.parts[i], f.types) for i in f.data] for name, f in reader.fields.items()}
    tensors = [(t.name, t.tensor_type, tuple(t.shape), np.array(t.data).tobytes()) for t in reader.tensors]
    return fields, tensors


def test_the_fast_parse_reads_every_value_as_gguf_and_transformers_do(tmp_path):
    from biaslab.models.local.gguf_parse import parsed_once

    path = tmp_path / "values.gguf"
    _write(path)
    plain_fields, plain_tensors = _read(path)
    original = (gguf.GGUFReader, tf_gguf._gguf_parse_value)
    with parsed_once(path):
        assert gguf.GGUFReader is not original[0] and tf_gguf._gguf_parse_value is not original[1]
        fast_fields, fast_tensors = _read(path)
        assert gguf.GGUFReader(str(path)) is gguf.GGUFReader(str(path))  # parsed once, kept
    assert (gguf.GGUFReader, tf_gguf._gguf_parse_value) == original  # put back
    assert fast_fields == plain_fields and fast_tensors == plain_tensors
    assert fast_fields["general.name"] == ["Zürich naïve — 数字"]
    assert fast_fields["tokenizer.ggml.tokens"][2:7] == ["héllo", "", " ▁the", "🤖", "שלום"]
    assert fast_fields["test.u64"] == [2**64 - 1] and fast_fields["test.yes"] == [True]
