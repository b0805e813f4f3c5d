"""Prompt templates of a file probe: ``{column}`` is the item's value in that column, ``{options}`` the lettered
options of a multiple-choice answer, ``{{`` and ``}}`` a literal brace. Nothing else is special: a brace that opens
no placeholder is kept as written."""

from __future__ import annotations

import re
from collections.abc import Mapping

_PART = re.compile(r"\{\{|\}\}|\{([^{}\n]*)\}")
OPTIONS = "options"  # the placeholder of the lettered options
LETTERS = "abcdefghij"  # the options' letters (at most ten options)


def fields(template: str) -> list[str]:
    """The placeholders of ``template``, in order (as written, stripped)."""
    return [m.group(1).strip() for m in _PART.finditer(template) if m.group(1) is not None]


def render(template: str, values: Mapping[str, str]) -> str:
    """``template`` with every placeholder replaced by its value (every one must be in ``values``)."""

    def part(m: re.Match[str]) -> str:
        if m.group(1) is None:
            return m.group(0)[0]
        return values[m.group(1).strip()]

    return _PART.sub(part, template)


def lettered(texts: list[str]) -> str:
    """The options as the prompt shows them: one a line, ``(a) text``."""
    return "\n".join(f"({LETTERS[i]}) {t}" for i, t in enumerate(texts))
