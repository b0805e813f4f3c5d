"""The ``answer`` section of a file probe, and reading an answer to its label.

* ``options``: a multiple-choice question. The prompt shows the options lettered, ``(a) ...``, where it says
  ``{options}``; the answer is read by biaslab's option reader (:func:`biaslab.probing.answers.parse_option`):
  the letter stated, announced or alone, else the option's own words, and undetected when it names two options
  ("(a) or (b)") or none. Each option has a label (what the metrics count) and its text, fixed or the item's value
  in a column. ``rotate: true`` asks every item once with each rotation of the options (each option once in every
  place), so that a preference for a place is not read as a preference for an option.
* ``free``: free text, read by word lists or regular expressions per label: the label whose patterns match most
  often (whole words, any case) is the answer's; a tie, or no match, is undetected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from biaslab.probing.answers import parse_option
from biaslab.probing.file_probe.strict_yaml import Where, kind
from biaslab.probing.file_probe.template import LETTERS

LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
LABEL_FIX = "use letters, digits, '_' or '-', e.g. masculine"


@dataclass(frozen=True)
class Option:
    label: str
    text: str | None = None  # the option's text, the same for every item
    column: str | None = None  # or the item's value in this column

    def shown(self, row: Mapping[str, str]) -> str:
        return row[self.column] if self.column is not None else self.text or ""


@dataclass(frozen=True)
class Patterns:
    label: str
    patterns: tuple[str, ...]  # regular expressions, matched in any case

    @cached_property
    def compiled(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in self.patterns)

    def count(self, text: str) -> int:
        return sum(len(p.findall(text)) for p in self.compiled)


@dataclass(frozen=True)
class AnswerSpec:
    options: tuple[Option, ...] = ()
    free: tuple[Patterns, ...] = ()
    rotate: bool = False

    @property
    def kind(self) -> str:
        return "options" if self.options else "free"

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(o.label for o in self.options) if self.options else tuple(p.label for p in self.free)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(o.column for o in self.options if o.column is not None)

    def orders(self) -> list[tuple[Option, ...]]:
        """The orders the options are shown in: as written, or (``rotate``) each rotation of it."""
        n = len(self.options)
        if not self.rotate:
            return [self.options]
        return [self.options[r:] + self.options[:r] for r in range(n)]

    def read(self, text: str, labels: list[str] | None = None, texts: list[str] | None = None) -> str | None:
        """The label of an answer (None: undetected). ``labels`` and ``texts``: the options as shown, in order."""
        if self.options:
            picked = parse_option(text, texts or [])
            return None if picked is None else (labels or [])[picked]
        counts = {p.label: p.count(text or "") for p in self.free}
        best = max(counts.values(), default=0)
        winners = [label for label, n in counts.items() if n == best]
        return winners[0] if best > 0 and len(winners) == 1 else None


def parse_answer(w: Where, value: Any) -> AnswerSpec:
    """The ``answer`` section: ``options`` (with ``rotate``) or ``free``, exactly one."""
    fix = "write options: [...] for a multiple-choice question, or free: {label: [words]} for free text"
    section = w.mapping("answer", value, fix)
    w.keys("answer", section, ("options", "free", "rotate"), {})
    if ("options" in section) == ("free" in section):
        raise w.error("answer", "needs exactly one of options and free", fix)
    if "free" in section:
        if "rotate" in section:
            raise w.error("answer.rotate", "only options can be rotated", "leave rotate out of a free answer")
        return AnswerSpec(free=_free(w, section["free"]))
    rotate = w.flag("answer.rotate", section["rotate"]) if "rotate" in section else False
    return AnswerSpec(options=_options(w, section["options"]), rotate=rotate)


def _label(w: Where, key: str, value: Any) -> str:
    label = w.text(key, value)
    if not LABEL.fullmatch(label):
        raise w.error(key, f"{label!r} cannot be a label (labels name metrics)", LABEL_FIX)
    return label


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _options(w: Where, value: Any) -> tuple[Option, ...]:
    example = "e.g. options: [Men, Women, Neither], or [{label: first, column: name_a}, ...]"
    if not isinstance(value, list) or not 2 <= len(value) <= len(LETTERS):
        raise w.error("answer.options", f"expected a list of 2 to {len(LETTERS)} options, got {kind(value)}", example)
    out: list[Option] = []
    for i, entry in enumerate(value):
        key = f"answer.options[{i}]"
        if not isinstance(entry, Mapping):
            text = w.text(key, entry)
            label = _slug(text)
            if not label:
                raise w.error(key, f"{text!r} gives no label", f"write {{label: ..., text: {text!r}}} ({LABEL_FIX})")
            out.append(Option(label, text=text))
            continue
        w.keys(key, entry, ("label", "text", "column"), {})
        if ("text" in entry) == ("column" in entry):
            raise w.error(key, "needs exactly one of text and column", "text: the option's words, or column: NAME")
        if "column" in entry:
            if "label" not in entry:
                raise w.error(f"{key}.label", "missing", "an option from a column needs a label, e.g. label: first")
            out.append(
                Option(_label(w, f"{key}.label", entry["label"]), column=w.text(f"{key}.column", entry["column"]))
            )
            continue
        text = w.text(f"{key}.text", entry["text"])
        label = _label(w, f"{key}.label", entry["label"]) if "label" in entry else _slug(text)
        if not label:
            raise w.error(f"{key}.label", "missing", f"the text {text!r} gives no label: add label: ...")
        out.append(Option(label, text=text))
    _unique(w, "answer.options", [o.label for o in out], "label")
    _unique(w, "answer.options", [o.text.lower() for o in out if o.text is not None], "text")
    return tuple(out)


def _unique(w: Where, key: str, values: list[str], what: str) -> None:
    seen = [v for i, v in enumerate(values) if v in values[:i]]
    if seen:
        raise w.error(key, f"two options have the {what} {seen[0]!r}", f"give every option its own {what}")


def _free(w: Where, value: Any) -> tuple[Patterns, ...]:
    fix = "e.g. free: {masculine: [he, him, his], feminine: [she, her, hers]}"
    section = w.mapping("answer.free", value, fix)
    if not section:
        raise w.error("answer.free", "no label", fix)
    out = []
    for raw_label, spec in section.items():
        label = _label(w, f"answer.free.{raw_label}", raw_label)
        key = f"answer.free.{label}"
        words: Any = spec
        regexes: Any = []
        if isinstance(spec, Mapping):
            w.keys(key, spec, ("words", "regex"), {})
            if not spec:
                raise w.error(key, "no words and no regex", "give words: [...] or regex: PATTERN")
            words, regexes = spec.get("words", []), spec.get("regex", [])
        words = _list(w, f"{key}.words" if isinstance(spec, Mapping) else key, words)
        regexes = _list(w, f"{key}.regex", regexes)
        patterns = [rf"(?<!\w){re.escape(word.strip())}(?!\w)" for word in words]
        for i, pattern in enumerate(regexes):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise w.error(
                    f"{key}.regex[{i}]", f"not a valid regular expression ({exc})", "fix it (Python's re syntax)"
                ) from None
            patterns.append(pattern)
        if not patterns:
            raise w.error(key, "no words and no regex", "give at least one word or pattern")
        out.append(Patterns(label, tuple(patterns)))
    return tuple(out)


def _list(w: Where, key: str, value: Any) -> list[str]:
    """A list of texts (one text alone stands for a list of it)."""
    items = value if isinstance(value, list) else [value]
    return [w.text(f"{key}[{i}]" if isinstance(value, list) else key, v) for i, v in enumerate(items)]
