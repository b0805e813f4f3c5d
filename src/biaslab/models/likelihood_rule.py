"""Which tokens a log-likelihood request scores, given token ids: one rule for every causal backend.

The local engine (:mod:`.local.backend`) and OpenAI-compatible servers (:mod:`.openai.prompt_logprobs`)
both tokenize with the model's own tokenizer and then apply these functions, so that a sentence
gets the same tokens, the same conditioning and the same token ids (for the shared-token
alignment of the paired-sentence probes) on either path.

Plain text (the papers' rule, ``docs/PAIRED_SENTENCES.md``): ``context + continuation`` is
tokenized as one text with the tokenizer's special tokens; the continuation starts after the
longest common prefix with the tokenized context. With no context (or nothing in common) the
text is conditioned on the beginning-of-sequence token: the tokenizer's own when it adds one,
else its BOS (or, lacking one, EOS) id is put in front.

Chat template (``chat`` = ``"user"`` or ``"assistant"``): the continuation is rendered as that
turn of a conversation by the model's chat template (the assistant turn answers an empty user
turn; a request's ``system`` message comes first, else templates add their own system prompt, if any),
and tokenized without further special tokens. The scored tokens are those that differ from the same
conversation rendered with empty content: the common token prefix is the conditioning, the common token
suffix (the end-of-turn markers) is not scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biaslab.errors import BackendError, ConfigError

CHAT_ROLES = ("user", "assistant")
CHAT_TEMPLATE_CHOICES = ("none", *CHAT_ROLES)


def plain_ids(whole: Sequence[int], ctx: Sequence[int], prefix_id: int | None) -> tuple[list[int], int]:
    """``(ids, n)``: the ids to run (``whole``, BOS-prefixed if needed) and where the continuation starts.

    ``whole`` / ``ctx``: the tokenized ``context + continuation`` / ``context`` (``[]`` when empty),
    both with the tokenizer's special tokens; ``prefix_id``: the BOS id (else EOS, else None).
    """
    whole = [int(t) for t in whole]
    n = 0
    while n < len(ctx) and n < len(whole) and ctx[n] == whole[n]:
        n += 1
    if n == 0:  # nothing to condition on: start from BOS (or EOS)
        if prefix_id is None:
            raise BackendError("cannot score a text without context: the tokenizer has no BOS/EOS token")
        if not (whole and whole[0] == prefix_id):
            whole = [int(prefix_id)] + whole
        n = 1
    return whole, n


def chat_messages(role: str, text: str, system: str | None = None) -> list[dict[str, str]]:
    """The conversation in which ``text`` is scored as the ``role`` turn (after a ``system`` message, if any)."""
    first = [{"role": "system", "content": system}] if system is not None else []
    if role == "user":
        return [*first, {"role": "user", "content": text}]
    if role == "assistant":
        return [*first, {"role": "user", "content": ""}, {"role": "assistant", "content": text}]
    raise ConfigError(f"chat_template must be one of {', '.join(CHAT_TEMPLATE_CHOICES)}, got {role!r}")


def chat_span(full: Sequence[int], empty: Sequence[int]) -> tuple[list[int], int]:
    """``(ids, n)`` for a chat-rendered text: ``full`` cut after the text's last token, and where it starts.

    ``full`` / ``empty``: the conversation rendered with the text / with empty content.
    """
    full = [int(t) for t in full]
    start = 0
    while start < len(full) and start < len(empty) and full[start] == empty[start]:
        start += 1
    tail = 0
    while tail < len(full) - start and tail < len(empty) - start and full[-1 - tail] == empty[-1 - tail]:
        tail += 1
    if start == 0:
        raise BackendError("the chat template puts nothing before the text; cannot condition its first token")
    return full[: len(full) - tail], start


def check_chat(request: Any) -> str | None:
    """The request's chat role (None: plain text); a ConfigError for a chat request with a context, or a plain-text
    one with a system message."""
    role = getattr(request, "chat", None)
    if role is not None and request.context:
        raise ConfigError("a chat-template likelihood request takes no context")
    if role is None and getattr(request, "system", None) is not None:
        raise ConfigError("a system message goes with chat-template likelihood requests only (chat=user|assistant)")
    return role
