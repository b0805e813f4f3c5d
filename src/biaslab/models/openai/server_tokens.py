"""The model's own tokenizer, through the server: :class:`ServerTokenizer` (vLLM's ``/tokenize``).

vLLM serves ``POST /tokenize`` beside ``/v1`` (the server root): a text (``prompt``, with or
without the tokenizer's special tokens) or a conversation (``messages``, rendered by the
model's chat template) comes back as token ids, exactly as the server would tokenize them.
The beginning-of-sequence id that the plain-text rule puts in front of a sentence is found
once per backend: the tokenizer's own when tokenizing ``""`` gives one token (Llama, Gemma...),
else the ``bos_token`` (or ``eos_token``) that ``GET /tokenizer_info`` reports (vLLM started
with ``--enable-tokenizer-info-endpoint``), or, on a stock server, the one in the model files that
``/v1/models`` names (:mod:`.tokenizer_source`), tokenized.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biaslab.errors import BackendError
from biaslab.models.openai.retry import Retrier, Unsupported

if TYPE_CHECKING:  # pragma: no cover
    from openai import AsyncOpenAI

NO_BOS = (
    "the server does not tell the model's beginning-of-sequence token (its tokenizer adds none, "
    "GET /tokenizer_info is missing and the model files /v1/models names are not readable here); name the "
    "model's tokenizer with -P tokenizer=hf/<hub id or dir>, or start vLLM with --enable-tokenizer-info-endpoint"
)


def server_root(base_url: str) -> str:
    """``http://host:port`` for ``http://host:port/v1`` (vLLM's /tokenize lives beside /v1)."""
    return base_url[:-3] if base_url.endswith("/v1") else base_url


class ServerTokenizer:
    """Token ids from the server's tokenizer, for ``model``, through ``retrier``'s calls (memoised)."""

    def __init__(self, retrier: Retrier, model: str) -> None:
        self.retrier = retrier
        self.model = model
        self.root = server_root(retrier.base_url)
        self.prefix_id: int | None = None  # BOS (else EOS) id, known after :meth:`prepare`
        self._memo: dict[tuple[str, bool], list[int]] = {}

    async def _post(self, client: AsyncOpenAI, body: dict[str, Any]) -> Any:
        url = f"{self.root}/tokenize"
        answer = await self.retrier.call(
            lambda: client.post(url, body={"model": self.model, **body}, cast_to=object), endpoint="tokenize"
        )
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise Unsupported(f"{url} did not answer with token ids")
        return tokens

    async def tokenize(self, client: AsyncOpenAI, text: str, *, special: bool) -> list[int]:
        """``text`` tokenized, with the tokenizer's special tokens (BOS...) when ``special``."""
        key = (text, special)
        if key not in self._memo:
            self._memo[key] = await self._post(client, {"prompt": text, "add_special_tokens": special})
        return self._memo[key]

    async def render(self, client: AsyncOpenAI, messages: list[dict[str, str]]) -> list[int]:
        """A conversation through the model's chat template, as token ids (no generation prompt)."""
        return await self._post(
            client, {"messages": messages, "add_generation_prompt": False, "add_special_tokens": False}
        )

    async def prepare(self, client: AsyncOpenAI) -> None:
        """Find the BOS (else EOS) id once; an Unsupported when the server has no /tokenize."""
        if self.prefix_id is not None:
            return
        empty = await self.tokenize(client, "", special=True)
        if len(empty) == 1:  # the tokenizer adds BOS itself
            self.prefix_id = empty[0]
            return
        try:
            info = await self._tokenizer_info(client)
        except Unsupported:  # a stock server: the token's text from the model's own files (tokenizer_source)
            from biaslab.models.openai.served_files import served_bos_text

            text = await served_bos_text(self.retrier, client, self.model)
            if text is None:
                raise
            info = {"bos_token": text}
        for name in ("bos_token", "eos_token"):
            text = info.get(name)
            if isinstance(text, dict):
                text = text.get("content")
            if isinstance(text, str) and text:
                ids = await self.tokenize(client, text, special=False)
                if len(ids) != 1:
                    raise BackendError(
                        f"the server tokenizes the model's {name} {text!r} as {len(ids)} tokens; cannot condition on it"
                    )
                self.prefix_id = ids[0]
                return
        raise Unsupported(NO_BOS)

    async def _tokenizer_info(self, client: AsyncOpenAI) -> dict[str, Any]:
        url = f"{self.root}/tokenizer_info"
        try:
            info = await self.retrier.call(lambda: client.get(url, cast_to=object), endpoint="tokenize")
        except Unsupported:
            raise Unsupported(NO_BOS) from None
        return info if isinstance(info, dict) else {}
