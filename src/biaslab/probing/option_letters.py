"""Whether an answer to a lettered question names more than one option as its answer.

A reader finds a pick (a letter stated first, announced, or alone in parentheses); this module then asks whether
the answer also names another option without setting it aside. "(a) or (b)", "The answer is (a) or (b)", "(b)
Women, or maybe (a) Men", "(a) -- it could also be (c)": each names two options and picks neither, so every
lettered reader leaves it undetected. What still picks one option:

* the other options set aside: "(c) Weakness of shoulder shrug, not (a)", "(b), rather than (d)", "(d) is
  incorrect because ...";
* the pick announced or said to be right, outside a list of alternatives: "After weighing (a) and (b), the
  answer is (c)", "I can't decide between (a) and (b). I think (b) is more likely" -- but not "the answer is
  (a) or (b)", whose announcement offers two.

An option is named by its letter in parentheses or brackets, "(b)" / "[b]", anywhere in the answer, or by a
letter opening a line ("b) ...", "B. ..."). The text is the reader's cleaned, lower-cased answer.
"""

from __future__ import annotations

import re


def _letter(letters: str) -> str:
    return rf"[\(\[]([{letters}])[\)\]]"


def named_letters(t: str, letters: str) -> set[str]:
    """The option letters the answer writes: "(x)" / "[x]" anywhere, "x)" or "x." opening a line."""
    inline = set(re.findall(_letter(letters), t))
    opening = set(re.findall(rf"(?m)^[\s\-•*]*([{letters}])[.)](?=\s|$)", t))
    return inline | opening


def set_aside(t: str, letters: str) -> set[str]:
    """The letters the answer rejects: "not (x)", "rather than (x)", "(x) is incorrect", "(x) would not ..."."""
    x = _letter(letters)
    before = re.findall(rf"\b(?:not|rather\s+than|instead\s+of|over|excluding|except)\s+(?:option\s+)?{x}", t)
    verdict = r"(?:not|n't|incorrect|wrong|unlikely|less\s+likely|ruled\s+out|excluded)"
    after = re.findall(
        rf"{x}(?:\s+[a-z'\-]+){{0,6}}?\s+(?:is|are|was|were|would|does|do|can|could)(?:\s+be)?\s*{verdict}", t
    )
    return set(before) | set(after)


def alternatives(t: str, letters: str) -> set[str]:
    """Letters offered as alternatives of each other: "(a) or (b)", "either (a) or (c)", "(a)/(b)"."""
    x = _letter(letters)
    out: set[str] = set()
    for m in re.finditer(rf"{x}[^.;\n]{{0,40}}?(?:\bor\b|/)\s*(?:maybe\s+|perhaps\s+)?(?:option\s+)?{x}", t):
        out |= {m.group(1), m.group(2)}
    return out - {""}


def names_another(t: str, letters: str, pick: str, *, settled: bool) -> bool:
    """Whether the answer (cleaned, lower case) that a reader reads as ``pick`` names another option it does not
    set aside, and the pick is not ``settled`` (announced, or said to be right) outside a list of alternatives."""
    others = named_letters(t, letters) - {pick} - set_aside(t, letters)
    if not others:
        return False
    return not settled or pick in alternatives(t, letters)
