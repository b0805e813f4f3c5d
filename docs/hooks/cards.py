"""MkDocs hook: the cards that live beside the code (``src/biaslab/probes/<name>/README.md``, the best-worst
scaling and predicate-study cards) become pages ``cards/<name>.md`` of the site, listed in the nav entry
``Probe cards: cards/`` of mkdocs.yml. A link between cards (``../<other probe>/README.md``) becomes a link
between their pages, so the strict build checks it like any other."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

SRC = Path(__file__).resolve().parents[2] / "src" / "biaslab"
PLACEHOLDER = "cards/"


def cards() -> dict[str, tuple[str, Path]]:
    """``{page path: (nav title, card file)}``, the probes' cards in the order of their folders."""
    out: dict[str, tuple[str, Path]] = {}
    for card in sorted((SRC / "probes").glob("*/README.md")):
        folder = card.parent.name
        title = "paired-sentence probes (shared)" if folder == "paired_sentences" else folder.replace("_", "-")
        out[f"cards/{folder}.md"] = (title, card)
    out["cards/bws.md"] = ("best-worst scaling", SRC / "bws" / "README.md")
    out["cards/predicates.md"] = ("predicate extraction study", SRC / "wino" / "predicates" / "README.md")
    return out


def _fill(nav: Any) -> bool:
    """Replace the nav's ``cards/`` placeholder with one entry per card; whether it was found."""
    if not isinstance(nav, list):
        return False
    for i, entry in enumerate(nav):
        if isinstance(entry, dict):
            ((title, value),) = entry.items()
            if value == PLACEHOLDER:
                nav[i] = {title: [{name: path} for path, (name, _) in cards().items()]}
                return True
            if _fill(value):
                return True
    return False


def on_config(config: Any) -> Any:
    if not _fill(config["nav"]):
        raise ValueError(f"mkdocs.yml's nav needs an entry 'Probe cards: {PLACEHOLDER}' for the cards")
    return config


def on_files(files: Files, config: Any) -> Files:
    for path, (_, card) in cards().items():
        text = card.read_text(encoding="utf-8")
        text = re.sub(r"\]\(\.\./(\w+)/README\.md(#[^)]*)?\)", r"](\1.md\2)", text)
        files.append(File.generated(config, path, content=text))
    return files
