"""Token ids in and text out on a model's own tokenizer: the rules the local engine and in-process vLLM share.

* :func:`prompt_ids`: a generation request as the model sees it (the chat template for chat messages when the
  tokenizer has one, else the message texts joined by blank lines; a raw prompt with the tokenizer's special
  tokens);
* :func:`stop_ids`: the end-of-sequence ids of the tokenizer and the generation config, plus the end-of-turn
  tokens of the common chat formats when the chat template is used;
* :func:`score_ids`: which ids a log-likelihood request runs and where its scored tokens start
  (:mod:`biaslab.models.likelihood_rule`);
* :func:`generated_result`: the new ids as a :class:`~biaslab.models.base.GenerateResult` (the closing stop
  token counted but not decoded).

Nothing here imports torch: the tokenizer is a transformers tokenizer or a
:class:`~.light_tokenizer.LightTokenizer`.
"""

from __future__ import annotations

from typing import Any

from biaslab.models.base import GenerateRequest, GenerateResult, LoglikelihoodRequest
from biaslab.models.likelihood_rule import check_chat, plain_ids
from biaslab.models.local.chat_likelihood import chat_score_ids

CHAT_END_TOKENS = ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>", "<|endoftext|>")


def has_chat_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def stop_ids(tokenizer: Any, generation_eos: Any, use_chat_template: bool) -> set[int]:
    """Ids that end a generation: ``generation_eos`` (the generation config's ``eos_token_id``: an id, a list
    or None), the tokenizer's EOS, and with the chat template the end-of-turn tokens it may use."""
    ids: set[int] = set()
    for value in (generation_eos, getattr(tokenizer, "eos_token_id", None)):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    if use_chat_template:
        vocab = tokenizer.get_vocab()
        ids.update(vocab[t] for t in CHAT_END_TOKENS if t in vocab)
    return ids


def prompt_ids(tokenizer: Any, request: GenerateRequest, use_chat_template: bool) -> list[int]:
    """The token ids the model sees for ``request``."""
    if request.prompt is not None:
        return list(tokenizer(request.prompt, add_special_tokens=True)["input_ids"])
    messages = [{"role": role, "content": content} for role, content in request.messages or ()]
    if use_chat_template:
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    text = "\n\n".join(m["content"] for m in messages)
    return list(tokenizer(text, add_special_tokens=True)["input_ids"])


def score_ids(tokenizer: Any, request: LoglikelihoodRequest) -> tuple[list[int], int]:
    """Token ids of context + continuation and the index where the continuation starts."""
    role = check_chat(request)
    if role is not None:
        return chat_score_ids(tokenizer, role, request.continuation, request.system)
    whole = list(tokenizer(request.context + request.continuation, add_special_tokens=True)["input_ids"])
    ctx = list(tokenizer(request.context, add_special_tokens=True)["input_ids"]) if request.context else []
    prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    return plain_ids(whole, ctx, prefix)


def generated_result(tokenizer: Any, new_ids: list[int], reason: str, n_prompt: int, stops: set[int]) -> GenerateResult:
    """``new_ids`` as text; ``n_new_tokens`` counts every generated token, the closing stop token included."""
    n_new = len(new_ids)
    if reason == "stop" and new_ids and new_ids[-1] in stops:
        new_ids = new_ids[:-1]
    text = tokenizer.decode(new_ids, skip_special_tokens=True)
    return GenerateResult(text=text, n_prompt_tokens=n_prompt, n_new_tokens=n_new, finish_reason=reason)
