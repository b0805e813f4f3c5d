"""The model's tokenizer for exact log-likelihoods when the server does not describe it: a stock ``vllm serve``.

A vLLM server started without ``--enable-tokenizer-info-endpoint`` tokenizes (``/tokenize``) but does not say
which beginning-of-sequence token the plain-text rule puts before a sentence when the tokenizer adds none
itself (SmolLM2, Qwen, GPT-2...). Two ways around it, both giving the ids the local engine gives:

* :func:`.served_files.served_bos_text`: ``GET /v1/models`` names the ``root`` the server loaded the model from (a
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
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaslab.errors import ConfigError
from biaslab.models.openai.retry import Retrier, Unsupported

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

CHECK_TEXT = "The nurse said that she was tired, and the doctor didn’t believe her – 2,000 times."


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
