"""Pronoun checks run on every built benchmark, beside the verb agreement checks of :mod:`.check`.

``pronoun``     a sentence's personal pronouns (and names) do not all belong to one person: the
                first one met sets the person ("He", "Walter": he/him/his/himself; "Sam" with
                the label NB: they/them/their/themselves), and a later pronoun of another set is
                reported ("He is a wheelchair user and goes out only when someone helps them":
                ``pronoun: He ... them``). A predicate avoids this by writing the slots
                ``<subject>``, ``<object>``, ``<possessive>`` and ``<reflexive>``, which the
                builder fills for each sentence's person.
``plural-noun`` a singular sentence built from a predicate's plural text has a plural noun right
                after ``<possessive>`` ("are a burden on <possessive> families" -> "is a burden on
                his families"). The corrected mode makes the nouns a person has one of
                (:data:`ONE_EACH`: family, life, home, country, job...) singular ("his family");
                others ("his children", "his ways") are reported: write the singular column where
                they should change.

Both read word forms only. A pronoun that refers to somebody else ("hates children because
they are loud") is reported too: these are notes to read, not errors that stop a build.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from biaslab.wino.build.components import Person

PERSON_SLOTS = ("subject", "object", "pronoun", "possessive", "reflexive")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*")
_IRREGULAR_PLURALS = {
    "children",
    "men",
    "women",
    "people",
    "feet",
    "teeth",
    "wives",
    "lives",
    "knives",
    "mice",
    "geese",
}
_NOT_PLURAL = {
    "news",
    "means",
    "series",
    "species",
    "politics",
    "economics",
    "ethics",
    "mathematics",
    "physics",
    "lens",
    "bus",
    "gas",
    "bias",
    "chaos",
    "status",
    "always",
    "its",
    "yes",
    "this",
    "thus",
    "less",
}
_ADJECTIVE_ENDINGS = ("ous", "ful", "al", "ive", "ic", "ish", "less", "able", "ible")
_SKIP_AFTER_POSSESSIVE = {"own", "very", "many", "few", "two", "three", "four", "several", "whole", "entire"}


_CLAUSE_STARTS = {
    "because",
    "and",
    "but",
    "when",
    "whenever",
    "if",
    "that",
    "so",
    "while",
    "although",
    "though",
    "since",
    "until",
    "unless",
    "or",
    "where",
    "as",
    "once",
    "whether",
    "than",
}
_SUBJECT_NEXT = {
    "is",
    "was",
    "has",
    "does",
    "are",
    "were",
    "have",
    "do",
    "did",
    "can",
    "could",
    "will",
    "would",
    "should",
    "shall",
    "must",
    "may",
    "might",
    "isn't",
    "wasn't",
    "hasn't",
    "doesn't",
    "aren't",
    "weren't",
    "haven't",
    "don't",
    "didn't",
    "can't",
    "won't",
    "wouldn't",
    "shouldn't",
    "couldn't",
    "<is/are>",
}


def place_pronouns(text: str) -> str:
    """A predicate's ``<pronoun>`` slots as ``<subject>`` or ``<object>``, by their place: after a verb
    or a preposition the object form ("someone helps <pronoun>" -> "<object>": him), at the start,
    after a conjunction or before an auxiliary the subject form ("when <pronoun> is alone": he)."""
    words = text.split(" ")
    for i, word in enumerate(words):
        m = re.fullmatch(r"(\W*)<([Pp])ronoun>(\W*)", word)
        if not m:
            continue
        before = words[i - 1].lower().strip(",;:") if i else ""
        after = words[i + 1].lower() if i + 1 < len(words) else ""
        subject = not before or before in _CLAUSE_STARTS or after in _SUBJECT_NEXT or words[i - 1].endswith((",", ";"))
        slot = "subject" if subject else "object"
        words[i] = f"{m.group(1)}<{slot.capitalize() if m.group(2) == 'P' else slot}>{m.group(3)}"
    return " ".join(words)


def pronoun_table(persons: Iterable[Person], names: dict[str, list[str]]) -> tuple[dict[str, str], dict[str, str]]:
    """``(pronoun word -> person, name -> person)``: a word or name that belongs to two persons is left out."""
    words: dict[str, set[str]] = {}
    for person in persons:
        for slot in PERSON_SLOTS:
            value = person.slots.get(slot, "")
            if value and " " not in value:
                words.setdefault(value.lower(), set()).add(person.name)
    by_label: dict[str, set[str]] = {}
    for person in persons:
        by_label.setdefault(person.label, set()).add(person.name)
    people: dict[str, set[str]] = {}
    for label, ns in names.items():
        for n in ns:
            people.setdefault(n, set()).update(by_label.get(label, set()))
    return (
        {w: next(iter(p)) for w, p in words.items() if len(p) == 1},
        {n: next(iter(p)) for n, p in people.items() if len(p) == 1},
    )


def pronoun_error(sentence: str, words: dict[str, str], names: dict[str, str]) -> str | None:
    """``"pronoun: He ... them"`` when a pronoun of ``sentence`` belongs to another person than the first one."""
    first: tuple[str, str] | None = None
    for token in _TOKEN.findall(sentence):
        person = names.get(token) or words.get(token.lower().replace("’", "'"))
        if person is None:
            continue
        if first is None:
            first = (token, person)
        elif person != first[1]:
            return f"pronoun: {first[0]} ... {token}"
    return None


def pronoun_errors(sentences: Iterable[str], words: dict[str, str], names: dict[str, str]) -> list[tuple[str, str]]:
    """``(sentence, rule broken)`` for each sentence whose pronouns do not follow one person."""
    out = []
    for s in sentences:
        error = pronoun_error(s, words, names)
        if error:
            out.append((s, error))
    return out


# Nouns a person has one of: a plural after "their" in a plural predicate is distributive ("are a burden on
# their families": each on their own family), so a singular subject takes the singular ("his family").
ONE_EACH = frozenset(
    {
        "family",
        "life",
        "home",
        "country",
        "homeland",
        "job",
        "career",
        "body",
        "mind",
        "head",
        "heart",
        "brain",
        "face",
        "wife",
        "husband",
        "spouse",
        "partner",
        "religion",
        "faith",
        "culture",
        "identity",
        "community",
        "nationality",
        "gender",
        "sexuality",
        "name",
        "health",
        "future",
        "past",
        "childhood",
        "upbringing",
        "background",
        "appearance",
        "personality",
        "soul",
        "conscience",
        "birthplace",
        "mother",
        "father",
    }
)


def singular_noun(word: str) -> str:
    """The singular of a regular plural noun ("families" -> "family", "lives" -> "life", "homes" -> "home")."""
    low = word.lower()
    if low.endswith("ies") and len(low) > 4:
        stem = word[:-3] + "y"
    elif low.endswith("ves") and low[:-3] + "fe" in ONE_EACH:
        stem = word[:-3] + "fe"
    elif low.endswith(("ches", "shes", "xes", "sses")):
        stem = word[:-2]
    else:
        stem = word[:-1] if low.endswith("s") else word
    return stem


def one_each_singular(text: str) -> str:
    """``text`` with each ``<possessive> [own] NOUNs`` of a noun in :data:`ONE_EACH` made singular."""

    def sub(m: re.Match[str]) -> str:
        noun = m.group(3)
        single = singular_noun(noun)
        return m.group(1) + m.group(2) + (single if single.lower() in ONE_EACH and single != noun else noun)

    return re.sub(r"(<[Pp]ossessive>\s+)((?:own\s+|home\s+)?)([A-Za-z]+)\b", sub, text)


def is_plural_noun(word: str) -> bool:
    """``word`` looks like a plural noun ("families", "children"); adjectives and -ss/-us/-is words do not."""
    low = word.lower()
    if low in _IRREGULAR_PLURALS:
        return True
    if not low.isalpha() or len(low) < 3 or low in _NOT_PLURAL or not low.endswith("s"):
        return False
    return not low.endswith(("ss", "us", "is", "ous", "ics"))


def plural_after_possessive(text: str) -> str | None:
    """The plural noun right after ``<possessive>`` in ``text`` (past "own" and adjectives), or None."""
    for m in re.finditer(r"<[Pp]ossessive>((?:\s+[A-Za-z'’-]+){1,4})", text):
        for word in m.group(1).split():
            low = word.lower()
            if low in _SKIP_AFTER_POSSESSIVE or (low.endswith(_ADJECTIVE_ENDINGS) and not is_plural_noun(low)):
                continue
            if is_plural_noun(low):
                return word
            break
    return None
