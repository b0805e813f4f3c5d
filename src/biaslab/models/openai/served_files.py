"""The BOS token's text of a model served by a stock ``vllm serve``, from the model's own files: ``GET /v1/models``
names the ``root`` the server loaded it from; when that directory is readable here, or the hub id is in the Hugging
Face cache, the token is read from its ``tokenizer_config.json`` (:mod:`.tokenizer_source` explains when it is
needed). Its own module, below both tokenizers (:mod:`.server_tokens`, :mod:`.tokenizer_source`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaslab.models.openai.retry import Retrier, Unsupported

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI


def _token_text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def bos_text_from_files(directory: Path) -> str | None:
    """The BOS (else EOS) token's text from a checkpoint's ``tokenizer_config.json`` / ``special_tokens_map.json``."""
    for name in ("bos_token", "eos_token"):
        for file in ("tokenizer_config.json", "special_tokens_map.json"):
            try:
                config = json.loads((directory / file).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            text = _token_text(config.get(name))
            if text:
                return text
    return None


def _model_directory(root: str) -> Path | None:
    """Where the files of the model the server loaded from ``root`` are on this machine, if they are."""
    path = Path(root).expanduser()
    if path.is_dir():
        return path
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(root, "tokenizer_config.json")
    except Exception:  # no huggingface_hub, or not a hub id
        return None
    return Path(found).parent if isinstance(found, str) else None


async def served_bos_text(retrier: Retrier, client: AsyncOpenAI, model: str) -> str | None:
    """The BOS (else EOS) token's text of the served ``model``, from the files named by ``/v1/models``'s root."""
    try:
        listing = await retrier.call(
            lambda: client.get(f"{retrier.base_url}/models", cast_to=object), endpoint="tokenize"
        )
    except Unsupported:
        return None
    entries = listing.get("data") if isinstance(listing, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model and isinstance(entry.get("root"), str):
            directory = _model_directory(entry["root"])
            return bos_text_from_files(directory) if directory is not None else None
    return None
