"""Reading short decisions out of generated answers: yes / no, and one of several lettered options.

Models do not answer in one word. They write "Yes.", "**No**", "I would say yes", "Answer: B) the doctor",
or a paragraph that ends "so my answer is no". These readers find the decision when the answer states one,
and return ``None`` (undetected) when it states none or contradicts itself, so that every probe reports how
often it could not tell. The rules, in order:

* Markdown emphasis and code marks, quotes and leading bullets are removed; case is ignored.
* **A decision stated first:** the answer starts with the decision word ("Yes", "No, because ...",
  "(B)", "B.").
* **A decision announced:** "the answer is no", "answer: yes", "I would say yes", "my choice is (c)",
  "I choose B" -- the last such announcement counts (models often reason first and conclude last).
* **A lone decision word:** the decision word ends a clause ("A no.", "I am pleased to report that yes, ...") or
  is quoted ('"Yes" would be the correct answer', not 'answer "yes" if ...'), once, and the other word appears
  nowhere; "no" inside a sentence ("there is no evidence") decides nothing.

Anything else, including answers that contain both decisions without announcing one ("yes or no?"), is
undetected. A lettered answer that names two options as its answer ("(a) or (b)") picks neither
(:mod:`biaslab.probing.option_letters`).
"""

from __future__ import annotations

import re

from biaslab.probing.option_letters import names_another

_MARKUP = re.compile(r"[*_`#>\"“”‘’]+")
_YES = r"(?:yes|yeah|yep|yup|affirmative)"
_NO = r"(?:no|nope|negative)"
_ANNOUNCE = (
    r"(?:\b(?:final\s+)?answer(?:\s+to\s+(?:this|the|your)\s+question)?\s*(?:is|would\s+be|will\s+be|[:=\-])"
    r"\s*[:=\-]?|"
    r"\bi(?:\s+would|\s+will|'d|\s+'d)\s+(?:say|answer|choose|pick|go\s+with)\b\s*[:\-]?|"
    r"\bmy\s+(?:answer|choice|decision|response)\s+(?:is|would\s+be)\s*[:\-]?|"
    r"\b(?:i\s+)?(?:choose|select|pick)\s*[:\-]?|\bdecision\s*[:\-]|\bresponse\s*[:\-])\s*"
)


def _clean(text: str) -> str:
    t = _MARKUP.sub(" ", text or "").lower()
    t = re.sub(r"^[\s\-•·\d.)]*(?=[a-z(])", "", t, count=1) if re.match(r"^\s*[-•·]", t) else t
    return " ".join(t.split())


def parse_yes_no(text: str) -> bool | None:
    """``True`` for yes, ``False`` for no, ``None`` when the answer states neither (or both)."""
    t = _clean(text)
    first = re.match(rf"^\W*({_YES}|{_NO})\b", t)
    if first and not re.match(rf"^\W*(?:{_YES}|{_NO})\W+(?:and|or)\W+(?:{_YES}|{_NO})\b", t):  # "yes and no"
        return bool(re.fullmatch(_YES, first.group(1)))
    announced = re.findall(rf"{_ANNOUNCE}\(?({_YES}|{_NO})\)?\b", t)
    if announced:
        return bool(re.fullmatch(_YES, announced[-1]))
    # a lone decision word, the other one nowhere: the word ending a clause ("A no.", "that yes, you are
    # selected") or quoted ('"Yes" would be correct', not 'answer "yes" if ...'); "no" inside a sentence ("there is
    # no evidence") decides nothing
    raw = (text or "").lower()
    said = {
        w: re.findall(rf"\b{w}\s*(?=[.!?;:,]|$)", t) + re.findall(rf"[\"“'‘]{w}[\"”'’](?!\s*(?:if|or|and)\b)", raw)
        for w in ("yes", "no")
    }
    anywhere = {w: re.findall(rf"\b{w}\b", t) for w in ("yes", "no")}
    if len(said["yes"]) == 1 and len(anywhere["yes"]) == 1 and not anywhere["no"]:
        return True
    if len(said["no"]) == 1 and not anywhere["yes"]:
        return False
    return None


def _announced(t: str, letters: str) -> list[str]:
    """The letters an answer (cleaned) announces: "the answer is (b)", "I choose C", in order."""
    return [
        m.group(1).strip("()")
        for m in re.finditer(rf"{_ANNOUNCE}(?:option\s+)?(\(?([{letters}])\)?)(?=[.):,;]|\s|$)", t)
        if not re.match(r"a\s+[a-z]", t[m.start(1) :])
    ]  # "the answer is a classic case" is no choice


def _backed(t: str, letters: str) -> set[str]:
    """Letters said to be the answer: "I think (a) is more likely", "(b) is correct"."""
    verdict = r"(?:more\s+likely|correct|right|the\s+(?:correct\s+|right\s+)?answer)\b"
    return set(re.findall(rf"\(([{letters}])\)\s+is\s+{verdict}", t))


def _one_pick(t: str, letters: str, pick: int | None) -> int | None:
    """``pick``, or ``None`` when the answer names another option as well (:mod:`.option_letters`)."""
    if pick is None:
        return None
    settled = letters[pick] in set(_announced(t, letters)) | _backed(t, letters)
    return None if names_another(t, letters, letters[pick], settled=settled) else pick


def parse_choice(text: str, n_options: int) -> int | None:
    """The index of the lettered option (A, B, C, ...) the answer picks, or ``None`` (also when it names two)."""
    letters = "abcdefghij"[:n_options]
    return _one_pick(_clean(text), letters, _parse_choice(text, letters))


def _parse_choice(text: str, letters: str) -> int | None:
    t = _clean(text)
    # "A: (b) ..." or "A (b)": a Q/A label, then the pick; "A:" and nothing more picks nothing
    labelled = re.match(rf"^\W*a\s*(?::\s*(?:\(([{letters}])\)|$)|\s\(([{letters}])\))", t)
    if labelled:
        pick = labelled.group(1) or labelled.group(2)
        return letters.index(pick) if pick else None
    first = re.match(rf"^\W*\(?([{letters}])\)?(?=[.):,;]|\s|$)", t)
    article = re.match(r"^\W*a\s+[a-z]", t)  # "A man walked in" starts with an article, not a choice
    announced = _announced(t, letters)
    if first and not (first.group(1) == "a" and article):
        if any(a != first.group(1) for a in announced):  # "(c) ... The correct answer is (b)": contradicts itself
            return None
        return letters.index(first.group(1))
    if announced:
        return letters.index(announced[-1])
    lone = re.findall(rf"(?:^|\s)\(([{letters}])\)(?=[\s.,;:]|$)", t)
    if len(set(lone)) == 1:
        return letters.index(lone[0])
    return None


def parse_option(text: str, options: list[str] | tuple[str, ...], *, mentions: bool = True) -> int | None:
    """:func:`_parse_option`, ``None`` when the answer names another option's letter as well ("(a) or (b)")."""
    return _one_pick(_clean(text), "abcdefghij"[: len(options)], _parse_option(text, options, mentions=mentions))


def _parse_option(text: str, options: list[str] | tuple[str, ...], *, mentions: bool = True) -> int | None:
    """The index of the option an answer to a lettered question picks: by its letter (:func:`parse_choice`),
    else by the option's own words ("Women.", "I think Maria is right").

    No pick: an answer that writes every option's letter ("(a) Men (b) Women (c) Neither", "A. David and (b)
    Maya") or lists two options with their words ("(a) Men\n(b) Women"); one whose letter and words disagree
    ("(c) Men" where (c) is Neither); one that states a letter and announces another ("(c) ... The correct answer
    is (b)"); one that goes on with the list ("(d) Both (e) Neither ...") and announces no letter. "A: Men" is a
    Q/A label, then the answer. Without a letter, the answer picks the option it consists of or starts with
    before a stop ("Women.", "Neither, because"), or (``mentions``) the only option it names (whole words, any
    case): "Men and women" picks none.
    """
    n = len(options)
    letters = "abcdefghij"[:n]
    t = _clean(text)
    words = [" ".join(_clean(o).split()) for o in options]
    # the options' letters as the answer writes them: "(b)" anywhere, "A." / "a)" opening the answer
    markers = {x or y for x, y in re.findall(rf"\(([{letters}])\)|^\W*([{letters}])[.)]\s", t)}
    # "I can't decide between (a) and (b). I think (a) is more likely.": a letter said to be the answer
    backed = _backed(t, letters)
    if len(backed) == 1:
        return letters.index(backed.pop())
    if n > 1 and len(markers) == n:
        return None
    listed = {
        i
        for i, (x, w) in enumerate(zip(letters, words, strict=True))
        if w and re.search(rf"(?:^|\s)(?:\({x}\)|{x}[.)])\s*{re.escape(w)}\b", t)
    }
    if len(listed) > 1:
        return None
    if len(set(re.findall(r"\(([a-z])\)", t)) - set(letters)) > 1:  # "(d) Both (e) Neither ...": the list goes on
        said = _announced(t, letters)
        return letters.index(said[-1]) if said and len(set(said)) == 1 else None
    label = re.match(r"^\W*a\s*:\s*(.+)$", t)  # "A: Men": a Q/A label, then the answer
    if label and not re.match(rf"\(?[{letters}]\b", label.group(1)):
        return _parse_option(label.group(1), options, mentions=mentions)
    picked = parse_choice(text, n)
    if picked is not None:
        # the words written right after the picked letter ("(c) Men", "option (c) - Men") must be its option's
        after = [m.group(1) for m in re.finditer(rf"(?:^|[\s(])\(?{letters[picked]}\)[\s.:\-]*([a-z][a-z ]*)", t)]
        after += [m.group(1) for m in re.finditer(rf"^\W*{letters[picked]}[.:\-]\s*([a-z][a-z ]*)", t)]
        written = {i for a in after for i, w in enumerate(words) if w and re.match(rf"{re.escape(w)}\b", a)}
        return None if written and picked not in written else picked
    if markers:  # a letter was written but no single pick stated ("(c) ... the answer is (b)")
        return None
    for i, w in enumerate(words):
        if w and re.match(rf"^\W*{re.escape(w)}\s*(?:[.,;:!)]|$)", t):
            return i
    named = [i for i, w in enumerate(words) if w and re.search(rf"\b{re.escape(w)}\b", t)]
    return named[0] if mentions and len(named) == 1 else None
