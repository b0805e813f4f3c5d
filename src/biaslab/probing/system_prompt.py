"""``--system-prompt TEXT|@FILE``: a product's own system prompt on every chat request of a run.

The text goes at the start of every chat request the probe plans (:func:`apply_system_prompt`, called by
:func:`biaslab.probing.runner.plan_run`, so a run, a suite and a dry run plan the same requests). Where the probe
has a system message of its own (fsb-judge's instructions), the product's comes first and the probe's follows
after a blank line, in one system message: the model sees the product's set-up and the probe still gets the
instructions its answers are parsed by. A log-likelihood request takes it only when scored in the model's chat
template (``-P chat_template=user|assistant``); plain-text log-likelihoods and raw completions
(``bold -P format=completion``) have no chat to put it in, and the run says so (:func:`not_applied_note`).

The request changes, so its response-cache key does (no answer made with one system prompt is reused for
another); results.json records the text and its sha256 in ``parameters.system_prompt``
(:func:`run_parameters`) and how many requests carried it in ``run.system_prompt_requests``.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaslab.errors import ConfigError
from biaslab.models.base import GenerateRequest, LoglikelihoodRequest

if TYPE_CHECKING:
    from biaslab.probing.config import RunConfig, RunContext
    from biaslab.probing.core import PlannedRequest, Probe

PREVIEW_CHARS = 60  # of the text, on the report and the card


def read_system_prompt(value: str | None) -> str | None:
    """The system prompt ``--system-prompt`` gives: ``value`` itself, or for ``@FILE`` the file's text (surrounding
    blank space removed); a one-line error for an empty text or a file that is missing, unreadable, not UTF-8 or
    empty. ``@@...`` is the text ``@...``."""
    if value is None:
        return None
    if value.startswith("@") and not value.startswith("@@"):
        from biaslab.io import read_utf8

        if not value[1:].strip():
            raise ConfigError("--system-prompt @ needs a file name after the @, e.g. --system-prompt @prompt.txt")
        path = Path(value[1:]).expanduser()
        fix = "--system-prompt @FILE reads the system prompt from a UTF-8 text file"
        text = read_utf8(path, what="a text file", fix=fix).strip()
        if not text:
            raise ConfigError(f"--system-prompt {value}: the file is empty; write the system prompt into it")
        return text
    text = value[1:] if value.startswith("@@") else value
    if not text.strip():
        raise ConfigError("--system-prompt is empty; give the text, or @FILE to read it from a file")
    return text


def takes_system_prompt(request: Any) -> bool:
    """Whether a planned request has a chat to put a system prompt in."""
    if isinstance(request, GenerateRequest):
        return request.messages is not None
    return isinstance(request, LoglikelihoodRequest) and request.chat is not None


def with_system(messages: tuple[tuple[str, str], ...], system: str) -> tuple[tuple[str, str], ...]:
    """``messages`` with ``system`` first: joined before the probe's own system message by a blank line, else a
    system message of its own."""
    if messages and messages[0][0] == "system":
        return (("system", f"{system}\n\n{messages[0][1]}"), *messages[1:])
    return (("system", system), *messages)


def apply_system_prompt(planned: list[PlannedRequest], system: str | None) -> int:
    """Put ``system`` into every planned request that has a chat (in place); how many took it."""
    if system is None:
        return 0
    n = 0
    for p in planned:
        r = p.request
        if isinstance(r, GenerateRequest) and r.messages is not None:
            p.request = replace(r, messages=with_system(r.messages, system))
        elif isinstance(r, LoglikelihoodRequest) and r.chat is not None:
            p.request = replace(r, system=system)
        else:
            continue
        n += 1
    return n


def record(text: str) -> dict[str, Any]:
    """How results.json records a system prompt: its text, sha256 and length."""
    return {"text": text, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "chars": len(text)}


def run_parameters(probe: Probe, cfg: RunConfig, ctx: RunContext) -> dict[str, Any]:
    """The run's settings as results.json records them: the probe's, and the system prompt when one is given."""
    params = probe.parameters(cfg, ctx)
    return params if cfg.system_prompt is None else {**params, "system_prompt": record(cfg.system_prompt)}


def describe(entry: Any) -> str | None:
    """``“You are a helpful…” (412 chars, sha256 1a2b3c4d5e6f)`` for a recorded system prompt, else None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
        return None
    text = " ".join(entry["text"].split())
    shown = text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS].rstrip() + "…"
    return f"“{shown}” ({entry.get('chars', len(entry['text'])):,} chars, sha256 {str(entry.get('sha256', ''))[:12]})"


def not_applied_note(probe: Probe, planned: list[PlannedRequest], applied: int) -> str | None:
    """The line a run prints when a system prompt reached none (or only some) of its requests, else None."""
    if applied == len(planned):
        return None
    plain = any(isinstance(p.request, LoglikelihoodRequest) and p.request.chat is None for p in planned)
    what = "plain-text log-likelihoods" if plain else "raw text completions"
    if plain and "chat_template" in probe.options:
        what += " (-P chat_template=user or assistant scores them in the chat template, with the system prompt)"
    if applied == 0:
        return f"note: the system prompt does not apply to {probe.name}: its requests are {what}"
    return f"note: the system prompt reached {applied:,} of {len(planned):,} {probe.name} requests; the rest are {what}"
