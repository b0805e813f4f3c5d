"""Light English analysis for the quality flags: words, lemmas, verb forms, clauses, negation.

The lexicon is lemminflect's (shipped inside its wheel, no download): a word "has a verb
reading" when lemminflect knows it as a VERB or AUX form. Words it does not know (rare verbs such
as "objectify") are *unknown*: the flags never fire on an unknown word alone. The word lists (negators,
auxiliaries, determiners...) are read once from the packaged ``words.toml``.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib.resources import files

_WORD = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*")

_WORDS = tomllib.loads(files("biaslab.wino.predicates").joinpath("words.toml").read_text("utf-8"))

NEGATORS = frozenset(_WORDS["negators"])
NEG_CONTRACTIONS = frozenset(_WORDS["neg_contractions"])
AUXILIARIES = frozenset(_WORDS["auxiliaries"]) | NEG_CONTRACTIONS
# Adverbs that may stand before the verb of a predicate ("often complain", "always have").
PRE_VERB_ADVERBS = frozenset(_WORDS["pre_verb_adverbs"])
SUBJECTS = frozenset(_WORDS["subjects"])
QUANTIFIERS = frozenset(_WORDS["quantifiers"])
DETERMINERS = frozenset(_WORDS["determiners"])
PREPOSITIONS = frozenset(_WORDS["prepositions"])
CONJUNCTIONS = frozenset(_WORDS["conjunctions"])
PRONOUNS = frozenset(_WORDS["pronouns"])
PASSIVE_AUX = frozenset(_WORDS["passive_aux"])
FIRST_PERSON_OBJECTS = frozenset(_WORDS["first_person_objects"])
# Words after which a predicate cannot end: it was cut off ("are good at", "believe that").
DANGLING = (DETERMINERS | PREPOSITIONS | CONJUNCTIONS | AUXILIARIES | NEGATORS) - {"that", "this", "those", "these"}
FUNCTION_WORDS = (
    DETERMINERS
    | PREPOSITIONS
    | CONJUNCTIONS
    | PRONOUNS
    | AUXILIARIES
    | NEGATORS
    | QUANTIFIERS
    | PRE_VERB_ADVERBS
    | set(_WORDS["function_words_extra"])
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (apostrophes kept inside a word: "don't")."""
    return [w.replace("\u2019", "'").lower() for w in _WORD.findall(text)]


@lru_cache(maxsize=65536)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's readings of ``word``: ``{upos: lemmas}`` (empty when unknown)."""
    from lemminflect import getAllLemmas

    return dict(getAllLemmas(word))


def verb_lemma(word: str) -> str | None:
    """The verb lemma of ``word`` if it has a verb reading (known or guessed for -ed/-ing/-s)."""
    known = lemmas(word)
    for pos in ("VERB", "AUX"):
        if pos in known:
            return known[pos][0]
    if not known:
        from lemminflect import getAllLemmasOOV

        return getAllLemmasOOV(word, upos="VERB").get("VERB", (None,))[0]
    return None


def has_verb_reading(word: str) -> bool | None:
    """True/False from the lexicon; None for a word it does not know."""
    if word in AUXILIARIES or word in NEG_CONTRACTIONS:
        return True
    known = lemmas(word)
    if not known:
        return None
    return "VERB" in known or "AUX" in known


@lru_cache(maxsize=65536)
def verb_forms(word: str) -> frozenset[str]:
    """Penn tags (VB, VBP, VBZ, VBD, VBN, VBG) that ``word`` is a form of, for its verb lemma."""
    lem = verb_lemma(word)
    if lem is None:
        return frozenset()
    from lemminflect import getAllInflections, getAllInflectionsOOV

    table = getAllInflections(lem, upos="VERB") or getAllInflectionsOOV(lem, upos="VERB")
    return frozenset(tag for tag, forms in table.items() if word in forms)


def content_lemma(word: str) -> str:
    known = lemmas(word)
    for pos in ("VERB", "NOUN", "ADJ", "ADV"):
        if pos in known:
            return known[pos][0].lower()
    return word


def content_words(text: str) -> list[str]:
    """Lemmas of the words that carry meaning (function words and 1-letter words dropped)."""
    return [content_lemma(w) for w in words(text) if w not in FUNCTION_WORDS and len(w) > 1]


def _similar(a: str, b: str) -> bool:
    if a == b:
        return True
    # derivations share a stem: greed/greedy, manipulate/manipulative, control/controlling
    return len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5]


def overlap(predicate: str, text: str) -> float:
    """Share of the predicate's content words found (same lemma or stem) among the text's."""
    mine = list(dict.fromkeys(content_words(predicate)))
    if not mine:
        return 0.0
    theirs = set(content_words(text))
    return sum(any(_similar(w, t) for t in theirs) for w in mine) / len(mine)


_CLAUSE_SPLIT = re.compile(r"[.;:!?\n]+|,\s*|\s+(?:and|but|although|though|while|whereas|because)\s+", re.IGNORECASE)


def clauses(text: str) -> list[str]:
    """The text's clauses (split at sentence punctuation, commas and contrastive conjunctions)."""
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(text)]
    return [p for p in parts if words(p)] or [text]


def sentences(text: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text)]
    return [p for p in parts if words(p)] or [text]


def is_negated(tokens: list[str]) -> bool:
    return any(t in NEGATORS or t in NEG_CONTRACTIONS or t.endswith("n't") for t in tokens)


def strip_leading_adverbs(tokens: list[str]) -> list[str]:
    i = 0
    while i < len(tokens) - 1 and tokens[i] in PRE_VERB_ADVERBS and tokens[i] != "never":
        i += 1
    return tokens[i:]


def passive_or_object_uses(text: str) -> set[str]:
    """Verb lemmas the text uses with its speaker or group on the receiving end.

    Either a passive ("was/were/get/been + [adverb] + participle": "I get catcalled") or an
    active verb whose object is the first person ("they objectify us", "called me greedy").
    """
    toks = words(text)
    out: set[str] = set()
    for i, w in enumerate(toks):
        forms = verb_forms(w)
        if not forms & {"VBD", "VBN"}:
            continue
        j = i - 1
        while j >= 0 and i - j <= 3 and toks[j] in PRE_VERB_ADVERBS:
            j -= 1
        passive = j >= 0 and toks[j] in PASSIVE_AUX
        obj = i + 1 < len(toks) and toks[i + 1] in FIRST_PERSON_OBJECTS
        if passive or obj:
            lem = verb_lemma(w)
            if lem:
                out.add(lem)
    for i, w in enumerate(toks[:-1]):  # present tense with a first-person object: "they objectify us"
        if toks[i + 1] in FIRST_PERSON_OBJECTS and has_verb_reading(w) is not False and w not in FUNCTION_WORDS:
            lem = verb_lemma(w)
            if lem:
                out.add(lem)
    return out
