"""Template slots: ``<identity adj>``, ``<Subject>``, ``<is/are>``...

A slot written with an upper-case first letter (``<Identity adj>``, ``<Subject>``) takes its
value with the first letter upper-cased; in lower case it takes the value as it is. A value can
be given for the exact spelling of a slot (``Subject`` -> a name), which wins over the lower-case
one (``subject`` -> the pronoun): with a name as subject, ``<Subject>`` and ``<object>`` are the
name and ``<subject>`` stays the pronoun ("I don't like David because he is ...").
"""

from __future__ import annotations

import functools
import re

SLOT_RE = re.compile(r"<([^<>]{1,40})>")

IDENTITY_SLOTS = ("identity adj", "identity noun", "identity")
PERSON_SLOTS = ("subject", "object", "pronoun", "possessive", "reflexive", "is/are")
KNOWN_SLOTS = frozenset((*IDENTITY_SLOTS, "predicate", "article", *PERSON_SLOTS))


def slots_of(text: str) -> list[str]:
    """Slot names in ``text``, as written."""
    return SLOT_RE.findall(text)


def unknown_slots(text: str) -> list[str]:
    return [s for s in slots_of(text) if s.lower() not in KNOWN_SLOTS]


def has_identity(text: str) -> bool:
    return any(s.lower() in IDENTITY_SLOTS for s in slots_of(text))


def capitalize(value: str) -> str:
    return value[:1].upper() + value[1:]


def article(phrase: str) -> str:
    """ "an" before a vowel letter, else "a" (the original's rule: letters, not sounds)."""
    return "an" if phrase[:1].lower() in "aeiou" else "a"


@functools.lru_cache(maxsize=1 << 16)
def _pieces(text: str) -> tuple[str, ...]:
    """``text`` split at its slots: text, slot name, text, ..., text (a build fills the same texts many times)."""
    return tuple(SLOT_RE.split(text))


def fill(text: str, values: dict[str, str], *, skip: tuple[str, ...] = ()) -> str:
    """Replace every slot of ``text`` that has a value (one pass: values are not re-filled).

    Slots named in ``skip`` (lower case) and slots without a value are left as they are.
    """
    pieces = _pieces(text)
    if len(pieces) == 1:
        return text
    out = [pieces[0]]
    for i in range(1, len(pieces), 2):
        name = pieces[i]
        low = name.lower()
        if low in skip:
            out.append(f"<{name}>")
        elif name in values:
            out.append(values[name])
        elif low in values:
            out.append(capitalize(values[low]) if name[:1].isupper() else values[low])
        else:
            out.append(f"<{name}>")
        out.append(pieces[i + 1])
    return "".join(out)
