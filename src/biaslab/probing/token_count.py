"""Token counts of planned requests for a dry run: the model's own tokenizer where it is on disk, else a
stated approximation.

A local model's tokenizer is read from its files alone (no weights: ``tokenizer.json`` through
:class:`~biaslab.models.local.light_tokenizer.LightTokenizer` for a checkpoint folder or a converted
GGUF, else transformers' tokenizer for the folder or GGUF file); a generation request is counted as the
local backend feeds it (the chat template with the generation prompt, or the turns joined by blank
lines), a log-likelihood request as context and continuation with the special tokens. Hosted models'
tokenizers are not public or not local: their requests are counted as one token per 4 characters plus
4 per message and 3 for the reply's start (OpenAI's rule of thumb for English text).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biaslab.models.base import GenerateRequest, LoglikelihoodRequest

CHARS_PER_TOKEN = 4
PER_MESSAGE, PER_REPLY = 4, 3
APPROXIMATION = (
    f"approximate: 1 token per {CHARS_PER_TOKEN} characters, {PER_MESSAGE} per message and {PER_REPLY} "
    "for the reply; no local tokenizer for this model"
)


def approximate_tokens(request: Any) -> int:
    if isinstance(request, LoglikelihoodRequest):
        return math.ceil(len(_scored_text(request)) / CHARS_PER_TOKEN)
    if request.prompt is not None:
        return math.ceil(len(request.prompt) / CHARS_PER_TOKEN)
    turns = request.messages or ()
    return sum(math.ceil(len(c) / CHARS_PER_TOKEN) + PER_MESSAGE for _, c in turns) + PER_REPLY


def _scored_text(request: LoglikelihoodRequest) -> str:
    """The text a log-likelihood request runs, its system message (chat requests) first."""
    return (f"{request.system}\n\n" if request.system else "") + request.context + request.continuation


def _tokenizer_dir(prefix: str, name: str) -> tuple[Path | None, tuple[str, str | None]]:
    """(a folder with tokenizer.json, or None; the (source, gguf file) transformers would read)."""
    from biaslab.models.local.identity import gguf_source, hf_source

    if prefix == "hf":
        source, _ = hf_source(name, None)
        folder = Path(source)
        return (folder if (folder / "tokenizer.json").is_file() else None), (source, None)
    source, gguf_file = gguf_source(name, None)
    path = Path(source) / gguf_file
    if path.is_file():
        from biaslab.models.local.conversion import find, source_sha256

        entry = find(source_sha256(path))
        if entry is not None and (entry / "tokenizer.json").is_file():
            return entry, (source, gguf_file)
    return None, (source, gguf_file)


def local_tokenizer(prefix: str, name: str) -> Any | None:
    """The tokenizer of a local model (no weights loaded), or None when it cannot be read."""
    if prefix not in ("hf", "gguf"):
        return None
    try:
        folder, (source, gguf_file) = _tokenizer_dir(prefix, name)
        if folder is not None:
            from biaslab.models.local.light_tokenizer import LightTokenizer

            return LightTokenizer(folder)
        from transformers import AutoTokenizer

        if gguf_file is not None:
            return AutoTokenizer.from_pretrained(source, gguf_file=gguf_file)
        return AutoTokenizer.from_pretrained(source)
    except Exception:  # a missing or unusual tokenizer: the approximation, said as such
        return None


def counter(prefix: str, name: str, *, chat_template: bool = True) -> tuple[Callable[[Any], int], str]:
    """(tokens of one request, how they are counted)."""
    tok = local_tokenizer(prefix, name)
    if tok is None:
        return approximate_tokens, APPROXIMATION
    use_template = chat_template and bool(getattr(tok, "chat_template", None))

    def count(request: Any) -> int:
        if isinstance(request, LoglikelihoodRequest):
            return len(tok(_scored_text(request), add_special_tokens=True)["input_ids"])
        assert isinstance(request, GenerateRequest)
        if request.prompt is not None:
            return len(tok(request.prompt, add_special_tokens=True)["input_ids"])
        messages = [{"role": r, "content": c} for r, c in request.messages or ()]
        if use_template:
            text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            return len(tok(text, add_special_tokens=False)["input_ids"])
        return len(tok("\n\n".join(m["content"] for m in messages), add_special_tokens=True)["input_ids"])

    return count, "the model's tokenizer" + (" and chat template" if use_template else "")
