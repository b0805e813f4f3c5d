"""Which subject each verb of a singular template agrees with.

A singular template can hold two subjects: ``<Subject>`` (a name, when the sentence is built with
one, else the pronoun) and ``<subject>`` or ``<pronoun>`` (always the pronoun): "I don't trust <object> because
<subject> is ... and <subject> <predicate>." With the name Sam of a person whose pronoun is
*they*, the first subject is "Sam" (singular: "Sam is") and the second "they" (plural: "they
are", "they drive"). So each verb that must agree -- an auxiliary written right after a subject
slot ("<subject> is"), the ``<is/are>`` slot and the ``<predicate>`` -- agrees with the nearest
subject slot before it; with none before it, with the sentence's subject (the name, else the
pronoun).

:func:`tag_verbs` rewrites a template so that every such verb is a slot naming its subject
(``<agree:is@subject>``, ``<predicate@Subject>``); the builder gives those slots their values
for each person (and name) with :func:`singular_subject` and :func:`biaslab.wino.build.grammar.agree`.
"""

from __future__ import annotations

import re

_AUX = r"(?:is|was|has|does|are|were|have|do)(?:n't|n’t)?"
_SUBJECTS = "Subject|subject|Pronoun|pronoun"
_PIECE = re.compile(rf"<({_SUBJECTS})>(\s+)({_AUX})\b|<({_SUBJECTS})>|<is/are>|<predicate>")
AGREE_PREFIX = "agree:"
PREDICATE_PREFIX = "predicate@"


def tag_verbs(template: str) -> str:
    """``template`` with each agreeing verb turned into a slot that names its subject slot."""
    last = ""

    def sub(m: re.Match[str]) -> str:
        nonlocal last
        if m.group(1):
            last = m.group(1)
            return f"<{last}>{m.group(2)}<{AGREE_PREFIX}{m.group(3)}@{last}>"
        if m.group(4):
            last = m.group(4)
            return m.group(0)
        if m.group(0) == "<is/are>":
            return f"<{AGREE_PREFIX}is/are@{last}>"
        return f"<{PREDICATE_PREFIX}{last}>"

    return _PIECE.sub(sub, template)


def singular_subject(slot: str, *, name: str | None, plural_verb: bool) -> bool:
    """Whether the subject slot ``slot`` ("Subject", "subject", "pronoun" or "": none) is singular."""
    if name is not None and slot in ("Subject", ""):
        return True  # a name takes "is", whatever its pronoun
    return not plural_verb


def verb_slots(template: str) -> list[tuple[str, str | None, str]]:
    """``(slot, auxiliary or None for the predicate, subject slot)`` for each tagged slot of ``template``.

    The auxiliary is as written after the subject slot, or "is/are" for the ``<is/are>`` slot.
    """
    out = []
    for slot in re.findall(r"<([^<>]{1,40})>", template):
        if slot.startswith(AGREE_PREFIX):
            aux, subject = slot[len(AGREE_PREFIX) :].split("@")
            out.append((slot, aux, subject))
        elif slot.startswith(PREDICATE_PREFIX):
            out.append((slot, None, slot[len(PREDICATE_PREFIX) :]))
    return out


def untag(template: str) -> str:
    """A tagged template as a reader would write it (``<is/are>``, ``<predicate>``)."""
    text = re.sub(r"<" + AGREE_PREFIX + r"[^<>@]*@[^<>]*>", "<is/are>", template)
    return re.sub(r"<" + PREDICATE_PREFIX + r"[^<>]*>", "<predicate>", text)
