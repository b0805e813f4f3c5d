"""Writing a tiny GGUF file from a transformers model, offline (no download), for the conversion tests.

The weights are stored as float32 under llama.cpp's tensor names (the ``gguf`` package's map, the one
transformers reads them back with); the tokenizer is a byte-level BPE (every byte, a few merges, two control
tokens), as Qwen2's files carry. Only for architectures whose tensors transformers reads back unchanged
(Qwen2, Qwen3: not Llama, whose q/k rows llama.cpp permutes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MERGED = ["he", "ll", "the", "in", "er", "an", "on", " t", " a", " the"]  # each merge of two known tokens


def byte_level_vocab() -> tuple[list[str], list[str], list[int]]:
    """(tokens, merges, token types) of a small byte-level BPE: 256 byte tokens, ``MERGED``, then
    ``<|endoftext|>`` and ``<|im_end|>`` (control tokens)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    spell = bytes_to_unicode()
    tokens = [spell[b] for b in range(256)]
    merges = []
    for word in MERGED:
        spelled = "".join(spell[b] for b in word.encode())
        for cut in range(len(spelled) - 1, 0, -1):  # the longest known left part
            left, right = spelled[:cut], spelled[cut:]
            if left in tokens and right in tokens:
                break
        merges.append(f"{left} {right}")
        tokens.append(spelled)
    tokens += ["<|endoftext|>", "<|im_end|>"]
    types = [1] * (len(tokens) - 2) + [3, 3]  # llama.cpp: 1 normal, 3 control
    return tokens, merges, types


def write_gguf(model: Any, path: Path, *, arch: str, name: str, pad_token_id: int | None = None) -> Path:
    """Write ``model`` (a Qwen2/Qwen3/Phi-3 ``...ForCausalLM`` whose vocabulary is :func:`byte_level_vocab`'s) as
    a float32 GGUF file of llama.cpp architecture ``arch`` (with a padding token if given)."""
    import gguf

    cfg = model.config
    tokens, merges, types = byte_level_vocab()
    assert cfg.vocab_size == len(tokens), (cfg.vocab_size, len(tokens))
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(cfg.rope_parameters["rope_theta"])
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(len(tokens) - 2)
    w.add_eos_token_id(len(tokens) - 1)
    w.add_add_bos_token(False)
    if pad_token_id is not None:
        w.add_pad_token_id(pad_token_id)
    names = gguf.get_tensor_name_map(
        next(k for k, v in gguf.MODEL_ARCH_NAMES.items() if v == arch), cfg.num_hidden_layers
    )
    for hf_name, tensor in model.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        base, suffix = hf_name.rsplit(".", 1)
        w.add_tensor(f"{names.get_name(base)}.{suffix}", tensor.float().numpy())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
