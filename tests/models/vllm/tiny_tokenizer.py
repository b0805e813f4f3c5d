"""A tiny word-level Hugging Face tokenizer written to a folder, with BOS/EOS and a chat template: a checkpoint
directory's tokenizer for tests that need one but no model (the tokenizer adds no BOS itself, like SmolLM2's)."""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL = ["<s>", "</s>", "<|user|>", "<|assistant|>", "<|end|>"]
WORDS = [
    "nurses",
    "are",
    "kind",
    "The",
    "cat",
    "sat",
    "on",
    "the",
    "mat",
    "doctors",
    "hi",
    "Hello",
    "there",
    "Please",
    "write",
    "a",
    "profile",
    "for",
    "such",
    "character",
    ".",
    ",",
]
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def write_tokenizer(directory: Path, *, chat_template: bool = True, words: list[str] | None = None) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(SPECIAL + ["<unk>"] + (words or WORDS))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(SPECIAL)
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "clean_up_tokenization_spaces": False,
    }
    if chat_template:
        config["chat_template"] = TEMPLATE
    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    (directory / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "max_position_embeddings": 64})
    )
    return directory
