"""A converted checkpoint's tokenizer on the ``tokenizers`` library alone, checked against transformers'.

Importing transformers costs about a second before anything is loaded (its package index scans
every model folder), more than the rest of loading the embedded model. The backend asks little of a
tokenizer: encode, decode, the chat template, the vocabulary and the special token ids.
:class:`LightTokenizer` does those from the checkpoint's own files (``tokenizer.json``,
``tokenizer_config.json``, ``chat_template.jinja``), rendering the template the way transformers
does (a sandboxed jinja2 environment with the same options and helpers).

It is used only for a conversion whose tokenizer it reproduces: when the conversion is written,
:func:`mismatch` compares it with the transformers tokenizer that converted the model (encoding
and decoding varied texts, every special token and a spread of ids, rendering sample chats) and
the manifest records the outcome. Anything else asked of it is passed on to the transformers
tokenizer, loaded on first use.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

_SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")

SAMPLE_TEXTS = (
    "",
    " ",
    "Hello there",
    "I don’t like him because he is a Jew and he is greedy.",
    "  two  spaces,\ttab and\nnewline\n\n",
    "Zürich, São Paulo, Łódź — naïve café",
    "数字 123 4567.89 1e-5",
    "emoji 👩‍⚕️ and 🇮🇱",
    "<|im_start|>user\nhi<|im_end|>",
    "<s> </s> <bos><eos><pad>",
    "a" * 300,
    "Please write a profile for such character.",
    "can't won't it's ''quoted'' \"double\"",
)
SAMPLE_CHATS = (
    [{"role": "user", "content": "Please write a profile for a nurse."}],
    [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Is it true? Answer yes or no."}],
    [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Zürich 👩‍⚕️ \n\n twice"},
    ],
)


class LightTokenizer:
    """Encode/decode/chat template of a converted checkpoint with ``tokenizers`` (see the module)."""

    def __init__(self, directory: Path, full_loader: Any = None) -> None:
        from tokenizers import Tokenizer

        self.directory = Path(directory)
        self._tok = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        cfg = _read_json(self.directory / "tokenizer_config.json") or {}
        self._special = {n: _token_text(cfg.get(n)) for n in _SPECIAL_NAMES if _token_text(cfg.get(n)) is not None}
        template = cfg.get("chat_template")
        jinja = self.directory / "chat_template.jinja"
        if template is None and jinja.is_file():
            template = jinja.read_text(encoding="utf-8")
        self.chat_template: str | None = template if isinstance(template, str) else None
        self.clean_up_tokenization_spaces = bool(cfg.get("clean_up_tokenization_spaces", False))
        self._full_loader = full_loader
        self._full: Any = None
        self._template: Any = None
        self._lock = threading.Lock()

    # -- special tokens ---------------------------------------------------------------------
    def _id(self, name: str) -> int | None:
        text = self._special.get(name)
        return None if text is None else self._tok.token_to_id(text)

    @property
    def bos_token_id(self) -> int | None:
        return self._id("bos_token")

    @property
    def eos_token_id(self) -> int | None:
        return self._id("eos_token")

    @property
    def pad_token_id(self) -> int | None:
        return self._id("pad_token")

    @property
    def unk_token_id(self) -> int | None:
        return self._id("unk_token")

    def get_vocab(self) -> dict[str, int]:
        return self._tok.get_vocab(with_added_tokens=True)

    # -- encode / decode -------------------------------------------------------------------
    def __call__(self, text: str, add_special_tokens: bool = True, **kwargs: Any) -> dict[str, list[int]]:
        if kwargs or not isinstance(text, str):
            return self.full()(text, add_special_tokens=add_special_tokens, **kwargs)
        return {"input_ids": list(self._tok.encode(text, add_special_tokens=add_special_tokens).ids)}

    def decode(self, ids: Any, skip_special_tokens: bool = False, **kwargs: Any) -> str:
        if kwargs:
            return self.full().decode(ids, skip_special_tokens=skip_special_tokens, **kwargs)
        if isinstance(ids, int):
            ids = [ids]
        text = self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)
        if self.clean_up_tokenization_spaces and type(self._tok.model).__name__ != "BPE":
            text = clean_up_spaces(text)  # transformers 5 leaves BPE texts alone (the conversion check compares)
        return text

    def apply_chat_template(
        self, messages: list[dict[str, str]], add_generation_prompt: bool = False, tokenize: bool = True, **kwargs: Any
    ) -> Any:
        if kwargs or tokenize or self.chat_template is None:
            return self.full().apply_chat_template(
                messages, add_generation_prompt=add_generation_prompt, tokenize=tokenize, **kwargs
            )
        with self._lock:
            if self._template is None:
                self._template = _compile(self.chat_template)
        return self._template.render(messages=messages, add_generation_prompt=add_generation_prompt, **self._special)

    # -- everything else: the transformers tokenizer -----------------------------------------
    def full(self) -> Any:
        with self._lock:
            if self._full is None:
                if self._full_loader is None:
                    raise AttributeError("no transformers tokenizer to fall back on")
                self._full = self._full_loader(self.directory)
            return self._full

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _SPECIAL_NAMES and name in self.__dict__.get("_special", {}):
            return self._special[name]
        return getattr(self.full(), name)


# Spaces before punctuation and contractions that WordPiece-style decoding leaves, removed when a tokenizer
# sets ``clean_up_tokenization_spaces`` (what transformers does, in the same order).
_CLEAN_UPS = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


def clean_up_spaces(text: str) -> str:
    for before, after in _CLEAN_UPS:
        text = text.replace(before, after)
    return text


def mismatch(light: LightTokenizer, full: Any) -> str | None:
    """None if ``light`` does what ``full`` (a transformers tokenizer) does on the samples; else the first
    difference (also when ``light`` would need a transformers tokenizer to answer: it is checked alone)."""
    try:
        return _first_difference(light, full)
    except AttributeError as exc:  # something only the transformers tokenizer does
        return f"needs the transformers tokenizer ({exc})"


def _first_difference(light: LightTokenizer, full: Any) -> str | None:
    for text in SAMPLE_TEXTS:
        for special in (True, False):
            a = light(text, add_special_tokens=special)["input_ids"]
            b = list(full(text, add_special_tokens=special)["input_ids"])
            if a != b:
                return f"encoding {text[:30]!r} (add_special_tokens={special})"
    vocab = full.get_vocab()
    if light.get_vocab() != vocab:
        return "vocabulary"
    n = len(vocab)
    ids = sorted(set(range(0, n, max(1, n // 997))) | set(getattr(full, "all_special_ids", [])) | {n - 1})
    ids = [i for i in ids if 0 <= i < n]
    for skip in (True, False):
        if light.decode(ids, skip_special_tokens=skip) != full.decode(ids, skip_special_tokens=skip):
            return f"decoding (skip_special_tokens={skip})"
    for i in ids:
        if light.decode([i]) != full.decode([i]):
            return f"decoding token {i}"
    for name in ("bos_token_id", "eos_token_id", "pad_token_id", "unk_token_id"):
        if getattr(light, name) != getattr(full, name, None):
            return name
    if light.chat_template != getattr(full, "chat_template", None):
        return "chat template"
    if light.chat_template:
        for chat in SAMPLE_CHATS:
            for gen in (True, False):
                try:
                    b = full.apply_chat_template(chat, add_generation_prompt=gen, tokenize=False)
                except Exception:  # a template that rejects the sample: nothing to compare
                    continue
                if light.apply_chat_template(chat, add_generation_prompt=gen, tokenize=False) != b:
                    return "chat template rendering"
    return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _compile(template: str) -> Any:
    """The template in a sandboxed jinja2 environment set up as transformers sets up its own."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
    ) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(template)


def transformers_tokenizer(directory: Path) -> Any:
    """The transformers tokenizer of a checkpoint directory, by its own class when it names a generic one
    (the Auto classes import every model's configuration: seconds)."""
    try:
        name = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8")).get("tokenizer_class")
    except (OSError, ValueError):
        name = None
    if name in ("TokenizersBackend", "PreTrainedTokenizerFast"):
        try:
            from transformers.tokenization_utils_tokenizers import TokenizersBackend as cls
        except ImportError:  # pragma: no cover - transformers 4
            from transformers import PreTrainedTokenizerFast as cls
        return cls.from_pretrained(str(directory), local_files_only=True)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
