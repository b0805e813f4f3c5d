"""Lower-cased word tokens of a generated text, for probes that count or look up words.

A token is a run of letters or digits, hyphenated compounds kept whole ("self-confident", "well-known"),
split at apostrophes ("leader's" -> "leader", "s"; "don't" -> "don", "t") and at every other punctuation
mark. For the words these probes look up (adjectives of gender inventories, emotion nouns) this gives the
tokens NLTK's ``word_tokenize`` gives (GenderBench's tokenizer), without NLTK and its downloaded models; the two
differ on rare joined forms NLTK keeps whole ("caring/kind", "_kind_"), which are split here.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def words(text: str) -> list[str]:
    """The lower-cased word tokens of ``text``, in order."""
    return [w.lower() for w in _WORD.findall(text or "")]
