"""HTML rendering: a Jinja2 environment that always autoescapes, and a tiny Markdown subset.

Item texts reach the page only through autoescaped ``{{ }}`` and are isolated with ``<bdi>``
(so right-to-left overrides cannot reorder the page around them); no template marks them safe.
"""

from __future__ import annotations

import re
import unicodedata
from importlib import resources

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_BIDI_CONTROLS = {
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
}


def templates() -> Environment:
    folder = resources.files(__package__).joinpath("templates")
    env = Environment(loader=FileSystemLoader(str(folder)), autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["has_controls"] = has_invisible_controls
    return env


def has_invisible_controls(text: str) -> bool:
    """True when the text holds direction overrides or other invisible format characters."""
    return any(ch in _BIDI_CONTROLS or unicodedata.category(ch) == "Cf" for ch in text)


def _inline(text: str) -> Markup:
    return Markup(_BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", str(escape(text))))


def markdown(text: str) -> Markup:
    """Headings (#, ##), paragraphs, ``-`` lists (nested by two-space indents) and **bold**; all else
    is escaped text. Enough for instructions, with no way to inject markup."""
    out: list[str] = []
    depth = 0
    paragraph: list[str] = []

    def close_paragraph():
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()

    def set_depth(target: int):
        nonlocal depth
        while depth < target:
            out.append("<ul>")
            depth += 1
        while depth > target:
            out.append("</ul>")
            depth -= 1

    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.lstrip(" ")
        if not stripped:
            close_paragraph()
            set_depth(0)
            continue
        heading = re.match(r"(#{1,3})\s+(.*)", stripped)
        bullet = re.match(r"[-*]\s+(.*)", stripped)
        if heading:
            close_paragraph()
            set_depth(0)
            level = len(heading.group(1)) + 1
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif bullet:
            close_paragraph()
            set_depth((len(line) - len(stripped)) // 2 + 1)
            out.append(f"<li>{_inline(bullet.group(1))}</li>")
        elif depth:
            out[-1] = out[-1][: -len("</li>")] + f" {_inline(stripped)}</li>"
        else:
            paragraph.append(stripped)
    close_paragraph()
    set_depth(0)
    return Markup("\n".join(out))
