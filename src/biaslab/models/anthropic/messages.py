"""Requests as Anthropic's Messages API takes them, and its answers as every backend returns them.

The online call (:mod:`.backend`) and a Message Batch line (:mod:`.batch`) send the same body
(:func:`message_params`) and read the same answer (:func:`message_result`), so a batch answer equals
the online one and both enter the cache under one key.
"""

from __future__ import annotations

from typing import Any

from biaslab.errors import ConfigError
from biaslab.models.base import GenerateRequest, GenerateResult
from biaslab.models.openai.retry import AGAIN, BadReply

DEFAULT_MAX_TOKENS = 1024
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def message_params(model: str, request: GenerateRequest) -> dict[str, Any]:
    """The Messages API's body for ``request`` (the online call's and a batch line's ``params``)."""
    if request.messages is None:
        raise ConfigError(
            "anthropic/ models take chat messages only (the Messages API has no raw-prompt "
            "completions); this request is a raw prompt"
        )
    system = [content for role, content in request.messages if role == "system"]
    turns = [{"role": role, "content": content} for role, content in request.messages if role != "system"]
    p = request.params
    params: dict[str, Any] = {"model": model, "max_tokens": p.max_tokens or DEFAULT_MAX_TOKENS, "messages": turns}
    if system:
        params["system"] = "\n\n".join(system)
    params.update({k: v for k, v in (("temperature", p.temperature), ("top_p", p.top_p)) if v is not None})
    return params


def message_result(message: Any, where: str = "the Messages API") -> GenerateResult:
    """A ``Message`` (SDK object or JSON) as the result every backend returns; ``where`` it came from (for errors)."""

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    blocks = get(message, "content")
    if not isinstance(blocks, list):
        raise BadReply(f"{where} answered without content blocks", f"check --base-url; if it is right, {AGAIN}")
    text = "".join(str(get(b, "text") or "") for b in blocks if get(b, "type") == "text")
    usage = get(message, "usage")
    reason = get(message, "stop_reason")
    return GenerateResult(
        text=text,
        n_prompt_tokens=get(usage, "input_tokens") if usage is not None else None,
        n_new_tokens=get(usage, "output_tokens") if usage is not None else None,
        finish_reason=STOP_REASONS.get(reason, reason),
    )
