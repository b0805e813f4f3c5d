"""Agreement checks run on every built benchmark: a small rule set over the words of a sentence.

A *clause* starts at a subject: a pronoun (*they*, *we*, *you*: plural verbs; *he*, *she*, *it*:
singular) or one of the benchmark's names (singular). In a clause (up to , ; : . ! ? or a
subordinating word such as "because"), after leading adverbs:

``plural-aux``     a plural subject followed by a singular auxiliary ("they is", "they has")
``plural-verb``    a plural subject followed by a third-person -s verb ("they drives")
``singular-aux``   a singular subject followed by a plural auxiliary ("he are", "Sam have")
``and-verb``       the same checks after "and" once the clause's verb has been seen ("They are an
                   older person and drives", "He is a Jew and are greedy"); an -s word after "and"
                   counts as a verb only when the word before "and" has no -s itself ("horns and
                   tails" is a list of nouns)

The rules read only word forms (:func:`biaslab.wino.build.grammar.is_third_singular`), not a list
of sentences; a sentence is reported once, with the first rule it breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from biaslab.wino.build.grammar import is_third_singular

_PLURAL_SUBJECTS = {"they", "we", "you"}
_SINGULAR_SUBJECTS = {"he", "she", "it"}
_SINGULAR_AUX = {"is", "was", "has", "does", "isn't", "wasn't", "hasn't", "doesn't"}
_PLURAL_AUX = {"are", "were", "have", "do", "aren't", "weren't", "haven't", "don't"}
_BOUNDARIES = {
    "because",
    "since",
    "although",
    "though",
    "while",
    "when",
    "that",
    "who",
    "which",
    "if",
    "but",
    "so",
    "or",
    "than",
    "unless",
    "whereas",
}
_ADVERBS = {
    "only",
    "always",
    "never",
    "often",
    "just",
    "also",
    "all",
    "really",
    "usually",
    "constantly",
    "still",
    "even",
    "actually",
    "secretly",
    "generally",
    "typically",
    "sometimes",
    "rarely",
    "supposedly",
    "apparently",
    "mostly",
    "basically",
    "not",
    "probably",
    "certainly",
    "definitely",
    "clearly",
    "both",
}
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*|[,;:.!?]")


def agreement_error(sentence: str, names: Iterable[str] = (), *, verbs: bool = True) -> str | None:
    """The first agreement rule ``sentence`` breaks ("plural-aux: they is"), or None.

    ``verbs=False`` (predicates not known to be verb phrases, such as "snowflakes") checks the
    auxiliaries only: a plural noun cannot be told from a third-person verb by its form.
    """
    names = names if isinstance(names, (set, frozenset)) else set(names)  # a set given is not copied per sentence
    words = [w.replace("’", "'") for w in _TOKEN.findall(sentence)]
    number = None  # "plural"/"singular": the clause's subject; None: no clause open
    after_verb = False
    i = 0
    while i < len(words):
        word, low = words[i], words[i].lower()
        if word in ",;:.!?" or low in _BOUNDARIES:
            number, after_verb = None, False
        elif low in _PLURAL_SUBJECTS or low in _SINGULAR_SUBJECTS or word in names:
            number, after_verb = ("plural" if low in _PLURAL_SUBJECTS else "singular"), False
            j = _skip_adverbs(words, i + 1)
            error = _verb_error(number, words[j] if j < len(words) else "", low, verbs)
            if error:
                return f"{error}: {word} {words[j]}"
            after_verb = True
            i = j
        elif low == "and" and number and after_verb:
            j = _skip_adverbs(words, i + 1)
            error = _verb_error(number, words[j] if j < len(words) else "", "", verbs)
            if error and (error != "plural-verb" or not is_third_singular(words[i - 1])):
                return f"and-verb: ... and {words[j]} (subject {number})"
        i += 1
    return None


def _skip_adverbs(words: list[str], j: int) -> int:
    while j < len(words) - 1 and words[j] in _ADVERBS:  # lower case only: "All lesbians ..." is a sentence
        j += 1
    return j


def _verb_error(number: str, word: str, subject: str, verbs: bool) -> str | None:
    if number == "plural":
        if word in _SINGULAR_AUX:
            return "plural-aux"
        if verbs and is_third_singular(word) and not (subject == "you" and word == "was"):
            return "plural-verb"
    elif word in _PLURAL_AUX and subject != "i":
        return "singular-aux"
    return None


def agreement_errors(
    sentences: Iterable[str], names: Iterable[str] = (), *, verbs: bool = True
) -> list[tuple[str, str]]:
    """``(sentence, rule broken)`` for each sentence with an agreement error."""
    names = set(names)
    out = []
    for s in sentences:
        error = agreement_error(s, names, verbs=verbs)
        if error:
            out.append((s, error))
    return out
