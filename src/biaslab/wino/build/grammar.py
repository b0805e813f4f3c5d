"""Subject-verb agreement of a predicate's first verb, for the corrected build mode.

``agree(predicate, singular=True)`` turns "are greedy" into "is greedy" and "control the media"
into "controls the media"; ``agree(predicate, singular=False)`` turns "is a sin" into "are a sin".
Only the predicate's first word is changed (after leading adverbs such as "only", "always"):

* auxiliaries and their negations (are/is, were/was, have/has, do/does, don't/doesn't, ...) both
  ways;
* regular verbs, only when ``verbs=True`` (the predicates are known to be verb phrases): to
  singular +s, +es after s/x/z/ch/sh/o, consonant+y -> ies; to plural the reverse, for words
  that end in a third-person -s ("drives" -> "drive", "worries" -> "worry", "watches" ->
  "watch"; not "-ss", "-us", "-is"), so that singular *they* takes "drive". Words that are
  not present-tense verbs are left alone: capitalised words (names, "Jews", sentence starts),
  modals, past forms (-ed and common irregular ones), -ing forms, words already ending in s,
  and words with an adjective or noun ending (-ous, -ful, -less, -ist except verbs like "exist").
"""

from __future__ import annotations

_TO_SINGULAR = {
    "are": "is",
    "aren't": "isn't",
    "were": "was",
    "weren't": "wasn't",
    "have": "has",
    "haven't": "hasn't",
    "do": "does",
    "don't": "doesn't",
    "dont": "doesnt",
    "arent": "isnt",
    "aren’t": "isn’t",
    "weren’t": "wasn’t",
    "haven’t": "hasn’t",
    "don’t": "doesn’t",
}
_TO_PLURAL = {v: k for k, v in _TO_SINGULAR.items()}
_MODALS = {
    "can",
    "can't",
    "cannot",
    "could",
    "couldn't",
    "will",
    "won't",
    "would",
    "wouldn't",
    "should",
    "shouldn't",
    "must",
    "mustn't",
    "may",
    "might",
    "shall",
    "need't",
    "can’t",
    "won’t",
    "wouldn’t",
    "shouldn’t",
    "couldn’t",
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
}
_IRREGULAR_PAST = {
    "was",
    "were",
    "had",
    "did",
    "went",
    "came",
    "saw",
    "took",
    "made",
    "said",
    "gave",
    "got",
    "knew",
    "thought",
    "told",
    "became",
    "left",
    "felt",
    "brought",
    "began",
    "kept",
    "held",
    "stood",
    "heard",
    "let",
    "meant",
    "met",
    "ran",
    "paid",
    "sat",
    "spoke",
    "lay",
    "led",
    "grew",
    "lost",
    "fell",
    "sent",
    "built",
    "understood",
    "drew",
    "broke",
    "spent",
    "cut",
    "rose",
    "drove",
    "bought",
    "wore",
    "chose",
    "sank",
    "stole",
    "ate",
    "fought",
    "threw",
    "caught",
    "taught",
    "sold",
    "wrote",
    "won",
    "forgot",
    "hid",
    "shot",
    "sang",
    "swam",
    "rode",
    "hung",
}
_IST_VERBS = {
    "exist",
    "coexist",
    "insist",
    "resist",
    "persist",
    "assist",
    "consist",
    "subsist",
    "desist",
    "twist",
    "enlist",
    "list",
}
_NOT_VERB_ENDINGS = ("ous", "ful", "less")
_QUOTES = "\"'“‘«("


def agree(predicate: str, *, singular: bool, verbs: bool = True) -> str:
    """``predicate`` with its first verb agreeing with a singular (or plural) subject.

    An auxiliary right after "and" agrees too ("fall in love and have bad endings" -> "... and has
    ..."): a coordinated verb phrase shares the subject. Quotes around a word are kept.
    """
    words = predicate.split(" ")
    starts = [0] + [i + 1 for i, w in enumerate(words) if w == "and"]
    for n, start in enumerate(starts):
        for i in range(start, len(words)):
            word = words[i]
            if word in _ADVERBS and i + 1 < len(words):  # lower case only: "All Jews ..." is a sentence
                continue
            lead = len(word) - len(word.lstrip(_QUOTES))
            core = word[lead:]
            if n == 0 or core in _TO_SINGULAR or core in _TO_PLURAL:
                words[i] = word[:lead] + _agree_word(core, singular=singular, verbs=verbs)
            break
    return " ".join(words)


def _agree_word(word: str, *, singular: bool, verbs: bool) -> str:
    table = _TO_SINGULAR if singular else _TO_PLURAL
    if word in table:
        return table[word]
    if not verbs or not word.isalpha() or not word.islower() or len(word) < 2:
        return word
    if not singular:
        return base_form(word)
    if word.endswith("ss"):  # discuss, express, possess
        return word + "es"
    if (
        word in _MODALS
        or word in _IRREGULAR_PAST
        or word.endswith(("ed", "ing"))
        or word.endswith("s")
        or word.endswith(_NOT_VERB_ENDINGS)
        or (word.endswith("ist") and word not in _IST_VERBS)
    ):
        return word
    if word.endswith(("x", "z", "ch", "sh", "o")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def is_third_singular(word: str) -> bool:
    """``word`` looks like a present-tense third-person-singular regular verb ("drives", "worries")."""
    return base_form(word) != word


def base_form(word: str) -> str:
    """The plural (base) form of a third-person-singular verb; other words as they are."""
    if word in _TO_PLURAL:
        return _TO_PLURAL[word]
    if (
        not word.isalpha()
        or not word.islower()
        or len(word) < 3
        or not word.endswith("s")
        or word.endswith(("ss", "us", "is", "ous", "ics"))
        or word in _NOT_VERBS
    ):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y" if len(word) > 4 else word[:-1]  # worries -> worry; lies -> lie
    if word.endswith(("sses", "xes", "zes", "ches", "shes", "oes")):
        return word[:-2]
    return word[:-1]


# words ending in -s that are never third-person verbs (a small closed set: adverbs, pronouns...)
_NOT_VERBS = {
    "always",
    "sometimes",
    "perhaps",
    "nevertheless",
    "besides",
    "towards",
    "afterwards",
    "its",
    "ours",
    "yours",
    "hers",
    "theirs",
    "this",
    "thus",
    "less",
    "unless",
    "across",
    "yes",
    "as",
    "us",
    "whereas",
    "news",
    "plus",
    "series",
    "species",
    "means",
    "lots",
    "nowadays",
}
