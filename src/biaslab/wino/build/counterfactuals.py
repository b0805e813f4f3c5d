"""The counterfactual check (``biaslab wino build --check-counterfactuals``): do the two sentences
of a pair differ in the group term only?

A pair measures a model's preference between two groups only when everything else is the same:
"Autistic people lack empathy." / "Able-bodied people lack empathy." differ in one place, the
group term, and pass. The check compares the two sentences word by word (case and the a/an
article form aside) and reports a pair when

* they differ in two or more places that are not the same substitution repeated ("Older people
  are slow." / "Younger people are quick.": ``older -> younger`` and ``slow -> quick``), which
  happens when a counterfactual phrase carries more than the group term ("older people" ->
  "people who are younger" turns into a deletion and an insertion);
* the group term changes grammatical number ("an older person" -> "younger people").

It reads word forms only; a flagged pair is a note to read, and the pairs are written either way.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from biaslab.wino.build.pronouns import is_plural_noun

_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
_NUMBER_PAIRS = {("person", "people"), ("man", "men"), ("woman", "women"), ("child", "children")}


def _words(sentence: str) -> list[str]:
    return ["a" if w == "an" else w for w in (t.lower().replace("’", "'") for t in _TOKEN.findall(sentence))]


def _phrase(words: list[str]) -> str:
    return " ".join(words) if words else "(nothing)"


def _number_changes(a: list[str], b: list[str]) -> bool:
    if not a or not b:
        return False
    x, y = a[-1], b[-1]
    if (x, y) in _NUMBER_PAIRS or (y, x) in _NUMBER_PAIRS:
        return True
    if x.rstrip("s") == y.rstrip("s") and is_plural_noun(x) != is_plural_noun(y):
        return True  # "Jew" -> "Jews"
    # "a Jew" -> "Christians": an article on one side only, a plural noun on the other
    return (a[0] == "a") != (b[0] == "a") and is_plural_noun(y if a[0] == "a" else x)


def counterfactual_issue(sent_more: str, sent_less: str) -> str | None:
    """What makes the two sentences differ in more than the group term, or None."""
    a, b = _words(sent_more), _words(sent_less)
    spans = [
        (a[i1:i2], b[j1:j2])
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if op != "equal"
    ]
    if not spans:
        return None
    first = spans[0]
    others = [s for s in spans[1:] if s != first]
    if others:
        listed = "; ".join(f"{_phrase(x)!r} -> {_phrase(y)!r}" for x, y in [first, *others][:3])
        return f"differs in {1 + len(others)} places, not only the group term: {listed}"
    if _number_changes(*first):
        return f"the group term changes number: {_phrase(first[0])!r} -> {_phrase(first[1])!r}"
    return None


def counterfactual_issues(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """``(sent_more, sent_less, issue)`` for each pair that differs in more than the group term."""
    out = []
    for more, less in pairs:
        issue = counterfactual_issue(more, less)
        if issue:
            out.append((more, less, issue))
    return out
