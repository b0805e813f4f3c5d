"""Chat-template likelihood requests on a local tokenizer (:mod:`biaslab.models.likelihood_rule`)."""

from __future__ import annotations

from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.likelihood_rule import chat_messages, chat_span


def render_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """The conversation as the model sees it: its chat template, tokenized without added special tokens."""
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=False, tokenize=False)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def chat_score_ids(tokenizer: Any, role: str, text: str, system: str | None = None) -> tuple[list[int], int]:
    """``(ids, n)`` of ``text`` scored as the ``role`` turn (after a ``system`` message, if any): ids to run, and
    where the text's tokens start."""
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(
            "chat_template=user/assistant needs a model with a chat template; this one has none "
            "(use chat_template=none)"
        )
    return chat_span(
        render_ids(tokenizer, chat_messages(role, text, system)), render_ids(tokenizer, chat_messages(role, "", system))
    )
