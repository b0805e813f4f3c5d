"""Subject-verb agreement of a predicate's first verb, for the corrected build mode.

``agree(predicate, singular=True)`` turns "are greedy" into "is greedy" and "control the media"
into "controls the media"; ``agree(predicate, singular=False)`` turns "is a sin" into "are a sin".
Only the predicate's first word is changed (after leading adverbs such as "only", "always"):

* auxiliaries and their negations (are/is, were/was, have/has, do/does, don't/doesn't, ...) both
  ways;
* regular verbs, plural to singular only, and only when ``verbs=True`` (the predicates are
  known to be verb phrases): +s, +es after s/x/z/ch/sh/o, consonant+y -> ies. Words that are
  not present-tense verbs are left alone: capitalised words (names, "Jews", sentence starts),
  modals, past forms (-ed and common irregular ones), -ing forms, words already ending in s,
  and words with an adjective or noun ending (-ous, -ful, -less, -ist except verbs like "exist").
"""

from __future__ import annotations

import re

_TO_SINGULAR = {
    "are": "is", "aren't": "isn't", "were": "was", "weren't": "wasn't", "have": "has", "haven't": "hasn't",
    "do": "does", "don't": "doesn't", "dont": "doesnt", "arent": "isnt",
    "aren’t": "isn’t", "weren’t": "wasn’t", "haven’t": "hasn’t", "don’t": "doesn’t",
}
_TO_PLURAL = {v: k for k, v in _TO_SINGULAR.items()}
_MODALS = {"can", "can't", "cannot", "could", "couldn't", "will", "won't", "would", "wouldn't", "should",
           "shouldn't", "must", "mustn't", "may", "might", "shall", "need't", "can’t", "won’t", "wouldn’t",
           "shouldn’t", "couldn’t"}
_ADVERBS = {"only", "always", "never", "often", "just", "also", "all", "really", "usually", "constantly", "still",
            "even", "actually", "secretly", "generally", "typically", "sometimes", "rarely", "supposedly",
            "apparently", "mostly", "basically", "not"}
_IRREGULAR_PAST = {
    "was", "were", "had", "did", "went", "came", "saw", "took", "made", "said", "gave", "got", "knew", "thought",
    "told", "became", "left", "felt", "brought", "began", "kept", "held", "stood", "heard", "let", "meant",
    "met", "ran", "paid", "sat", "spoke", "lay", "led", "grew", "lost", "fell", "sent", "built", "understood",
    "drew", "broke", "spent", "cut", "rose", "drove", "bought", "wore", "chose", "sank", "stole", "ate", "fought",
    "threw", "caught", "taught", "sold", "wrote", "won", "forgot", "hid", "shot", "sang", "swam", "rode", "hung",
}
_IST_VERBS = {"exist", "coexist", "insist", "resist", "persist", "assist", "consist", "subsist", "desist",
              "twist", "enlist", "list"}
_NOT_VERB_ENDINGS = ("ous", "ful", "less")
_WORD_RE = re.compile(r"^(\s*)([^\s]+)(.*)$", re.S)


def agree(predicate: str, *, singular: bool, verbs: bool = True) -> str:
    """``predicate`` with its first verb agreeing with a singular (or plural) subject."""
    words = predicate.split(" ")
    for i, word in enumerate(words):
        if word in _ADVERBS and i + 1 < len(words):  # lower case only: "All Jews ..." is a sentence
            continue
        words[i] = _agree_word(word, singular=singular, verbs=verbs)
        break
    return " ".join(words)


def _agree_word(word: str, *, singular: bool, verbs: bool) -> str:
    table = _TO_SINGULAR if singular else _TO_PLURAL
    if word in table:
        return table[word]
    if not singular or not verbs:
        return word
    if not word.isalpha() or not word.islower() or len(word) < 2:
        return word
    if word.endswith("ss"):  # discuss, express, possess
        return word + "es"
    if (word in _MODALS or word in _IRREGULAR_PAST or word.endswith(("ed", "ing")) or word.endswith("s")
            or word.endswith(_NOT_VERB_ENDINGS) or (word.endswith("ist") and word not in _IST_VERBS)):
        return word
    if word.endswith(("x", "z", "ch", "sh", "o")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"
