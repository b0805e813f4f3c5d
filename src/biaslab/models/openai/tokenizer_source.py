"""The model's tokenizer for exact log-likelihoods when the server does not describe it: a stock ``vllm serve``.

A vLLM server started without ``--enable-tokenizer-info-endpoint`` tokenizes (``/tokenize``) but does not say
which beginning-of-sequence token the plain-text rule puts before a sentence when the tokenizer adds none
itself (SmolLM2, Qwen, GPT-2...). Two ways around it, both giving the ids the local engine gives:

* :func:`served_bos_text`: ``GET /v1/models`` names the ``root`` the server loaded the model from (a
  directory or a hub id); when that directory is readable here, or the hub id is in the Hugging Face cache,
  the BOS (else EOS) token is read from its ``tokenizer_config.json`` and tokenized by the server;
* ``-P tokenizer=hf/<hub id or dir>`` (:class:`LocalTokenizer`): the named tokenizer, loaded here with
  transformers, tokenizes texts, renders the chat template and gives the BOS id, as the local engine does;
  the server then only scores token ids (``prompt_logprobs``), so any server that does that works, with or
  without ``/tokenize``. Where the server has ``/tokenize``, a sample text is tokenized both ways once: a
  tokenizer that is not the served model's is a one-line error instead of wrong scores.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaslab.errors import ConfigError
from biaslab.models.openai.retry import Retrier, Unsupported

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

CHECK_TEXT = "The nurse said that she was tired, and the doctor didn’t believe her – 2,000 times."


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


def parse_tokenizer_option(value: Any) -> str | None:
    """``-P tokenizer=hf/<hub id or dir>`` -> the hub id or directory; a ConfigError for anything else."""
    if value is None:
        return None
    text = str(value).strip()
    if not text.startswith("hf/") or len(text) == 3:
        raise ConfigError(
            f"-P tokenizer must name a Hugging Face tokenizer: tokenizer=hf/<hub id or dir>, got {text!r}"
        )
    return text[3:]


class LocalTokenizer:
    """The ``-P tokenizer=hf/<name>`` tokenizer, with the interface of :class:`~.server_tokens.ServerTokenizer`."""

    def __init__(self, name: str, retrier: Retrier, model: str) -> None:
        self.name = name
        self.retrier = retrier
        self.model = model
        self.prefix_id: int | None = None
        self._tok: Any = None
        self._lock = threading.Lock()
        self._checked = False

    def tokenizer(self) -> Any:
        with self._lock:
            if self._tok is None:
                self._tok = _load(self.name)
            return self._tok

    async def tokenize(self, client: AsyncOpenAI, text: str, *, special: bool) -> list[int]:
        return list(self.tokenizer()(text, add_special_tokens=special)["input_ids"])

    async def render(self, client: AsyncOpenAI, messages: list[dict[str, str]]) -> list[int]:
        from biaslab.models.local.chat_likelihood import render_ids

        tok = self.tokenizer()
        if not getattr(tok, "chat_template", None):
            raise ConfigError(
                f"chat_template=user/assistant needs a chat template; the tokenizer hf/{self.name} "
                "has none (use chat_template=none)"
            )
        return render_ids(tok, messages)

    async def prepare(self, client: AsyncOpenAI) -> None:
        """The BOS (else EOS) id, as the local engine takes it; and, once, the tokenizer checked against the
        server's ``/tokenize`` where it has one."""
        tok = await asyncio.to_thread(self.tokenizer)
        if not self._checked:
            await self._check(client, tok)
            self._checked = True
        prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        if prefix is None:
            raise ConfigError(f"the tokenizer hf/{self.name} has no BOS or EOS token to condition a text on")
        self.prefix_id = int(prefix)

    async def _check(self, client: AsyncOpenAI, tok: Any) -> None:
        from biaslab.models.openai.server_tokens import ServerTokenizer

        try:
            served = await ServerTokenizer(self.retrier, self.model).tokenize(client, CHECK_TEXT, special=False)
        except Unsupported:
            return  # no /tokenize: the named tokenizer is trusted
        if list(tok(CHECK_TEXT, add_special_tokens=False)["input_ids"]) != served:
            raise ConfigError(
                f"the tokenizer hf/{self.name} tokenizes differently from the model {self.model} at "
                f"{self.retrier.base_url}; name the served model's own tokenizer"
            )


def _load(name: str) -> Any:
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ConfigError(
            "-P tokenizer=hf/... needs transformers; install it with: pip install 'biaslab[local]'"
        ) from None
    path = Path(name).expanduser()
    try:
        if path.is_dir():
            from biaslab.models.local.light_tokenizer import transformers_tokenizer

            return transformers_tokenizer(path)
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"cannot load the tokenizer hf/{name}: {first}") from None
