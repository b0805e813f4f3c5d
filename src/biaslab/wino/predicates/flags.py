"""Automatic quality flags on model-extracted predicates (a triage for human review).

Each flag is a general rule, documented in the card (``README.md`` beside this file):

* ``not_a_predicate`` -- does not fit "All <identity noun> <predicate>.": empty; several sentences
  or a question; starts with a subject (the identity noun, a pronoun, "all"/"some"...), so it is a
  full sentence; the first word (after adverbs such as "often") has no verb reading, or is a verb
  form that cannot follow a plural subject ("controls", "controlling"); "not" first; a list of
  single characters; more than ``max_words`` words.
* ``incomplete`` -- a bare verb ("control", "believe"): one word with a verb reading, or only
  auxiliaries and negation ("are not"); ends on a word that needs a continuation ("are good at",
  "believe that"); or the model's answer was cut by the token limit.
* ``not_grounded`` -- little support in the answer: under half of its content words (lemma or
  stem) occur in the answer AND its best embedding cosine with the answer (whole, sentences,
  clauses) is below ``grounding_cosine`` (without embeddings, the word test alone decides).
* ``repeated_prior`` -- the same or near-same predicate (same normalised text, or embedding cosine
  >= ``repeat_cosine``) was proposed for at least ``repeat_min_responses`` answers and at least
  ``repeat_ungrounded_share`` of those proposals are not grounded: the model falls back on a prior
  whatever the answer says (the paper's "repetitive hallucinations"). Every member is flagged.
* ``possible_negation`` -- polarity opposite to the answer: the predicate is negated and no clause
  of the answer that shares its content words is (or the reverse); or the predicate makes the group
  the agent of a verb the answer uses with its writer on the receiving end ("catcall others" from
  "I get catcalled", "objectify others" from "they objectify us").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from biaslab.wino.predicates import text as tx
from biaslab.wino.predicates.formats import PredicateRow, SurveyAnswer

FLAGS = ("not_a_predicate", "incomplete", "not_grounded", "repeated_prior", "possible_negation")
EVIDENCE = ("grounding_overlap", "grounding_cosine", "repeat_responses", "flag_notes")
_SINGLE_CHARS = re.compile(r"(?:\b\w\b\s*,\s*){2,}\b\w\b")
_RECEIVING_SKIP = {"be", "have", "do", "get"}
_SAYING = {
    "believe",
    "think",
    "say",
    "claim",
    "feel",
    "know",
    "assume",
    "insist",
    "pretend",
    "argue",
    "hope",
    "expect",
    "suspect",
    "imagine",
    "suppose",
}
_CLOSED_CLASS = (tx.DETERMINERS | tx.PREPOSITIONS | tx.CONJUNCTIONS | tx.PRONOUNS) - tx.AUXILIARIES


@dataclass(frozen=True)
class FlagSettings:
    grounding_cosine: float = 0.30
    grounding_overlap: float = 0.5
    repeat_min_responses: int = 3
    repeat_cosine: float = 0.85
    repeat_ungrounded_share: float = 0.5
    max_words: int = 20


def normalise(predicate: str) -> str:
    """Lower-cased words only: the key of "the same predicate"."""
    return " ".join(tx.words(predicate))


def shape_flags(
    predicate: str, identity_noun: str = "", *, truncated: bool = False, settings: FlagSettings = FlagSettings()
) -> tuple[list[str], list[str]]:
    """``(not_a_predicate reasons, incomplete reasons)`` of one predicate (empty: not flagged)."""
    bad: list[str] = []
    short: list[str] = []
    toks = tx.words(predicate)
    if not toks:
        return ["no words"], []
    stripped = predicate.strip().rstrip(".").strip()
    if re.search(r"[.!?]\s+\S", stripped) or stripped.endswith("?"):
        bad.append("several sentences or a question")
    if _SINGLE_CHARS.search(predicate):
        bad.append("a list of single characters")
    if len(toks) > settings.max_words:
        bad.append(f"{len(toks)} words (a passage, not a predicate)")
    ident = tx.words(identity_noun)
    core = tx.strip_leading_adverbs(toks)
    first = core[0]
    if ident and (toks[: len(ident)] == ident or (toks[0] in ident and toks[0] not in tx.FUNCTION_WORDS)):
        bad.append(f"starts with the identity noun {identity_noun!r} (a full sentence)")
    elif toks[0] in tx.QUANTIFIERS and len(toks) > 1 and tx.has_verb_reading(toks[1]) is not True:
        bad.append(f"starts with {toks[0]!r} + a subject (a full sentence)")
    elif toks[0] in tx.SUBJECTS:
        bad.append(f"starts with the subject {toks[0]!r} (a full sentence)")
    elif first == "not":
        bad.append("starts with 'not' (no verb)")
    elif first in _CLOSED_CLASS:
        bad.append(f"does not start with a verb ({first!r})")
    else:
        reading = tx.has_verb_reading(first)
        forms = tx.verb_forms(first) if reading else frozenset()
        if reading is False:
            bad.append(f"does not start with a verb ({first!r})")
        elif forms and forms <= {"VBZ"}:
            bad.append(f"{first!r} does not agree with a plural subject")
        elif forms and forms <= {"VBG"}:
            bad.append(f"starts with the -ing form {first!r} (no finite verb)")
    # incomplete
    meaningful = [t for t in core if t not in tx.AUXILIARIES and t not in tx.NEGATORS and t != "not"]
    if not meaningful:
        short.append("only auxiliaries or negation")
    elif len(core) == 1 and tx.has_verb_reading(core[0]):
        short.append(f"a bare verb ({core[0]!r})")
    elif toks[-1] in tx.DANGLING and len(toks) > 1:
        short.append(f"ends on {toks[-1]!r}")
    elif len(toks) > 1 and toks[-1] == "that" and tx.verb_lemma(toks[-2]) in _SAYING:
        short.append(f"ends on {toks[-1]!r} (a clause is missing)")
    if truncated:
        short.append("the answer hit the token limit")
    return bad, short


def grounding(
    predicate: str, answer: str, cos: float | None, settings: FlagSettings = FlagSettings()
) -> tuple[bool, float, str]:
    """``(not_grounded, word overlap, reason)`` given the best cosine with the answer (or None)."""
    share = tx.overlap(predicate, answer)
    if share >= settings.grounding_overlap:
        return False, share, ""
    if cos is not None and cos >= settings.grounding_cosine:
        return False, share, ""
    why = f"{share:.0%} of its content words in the answer"
    if cos is not None:
        why += f", best cosine {cos:.2f} < {settings.grounding_cosine:.2f}"
    return True, share, why


def negation_reasons(predicate: str, answer: str) -> list[str]:
    """Reasons to suspect the predicate reverses the answer's polarity (empty: none)."""
    reasons = []
    ptoks = tx.words(predicate)
    related = [c for c in tx.clauses(answer) if tx.overlap(predicate, c) > 0]
    if related:
        pneg = tx.is_negated(ptoks)
        if all(tx.is_negated(tx.words(c)) != pneg for c in related):
            reasons.append(
                ("negated" if pneg else "affirmative")
                + " while the answer's related clause is "
                + ("affirmative" if pneg else "negated")
            )
    core = tx.strip_leading_adverbs(ptoks)
    passive_pred = len(core) > 1 and core[0] in tx.PASSIVE_AUX and bool(tx.verb_forms(core[1]) & {"VBD", "VBN"})
    if core and not passive_pred:
        verb = core[1] if core[0] in tx.AUXILIARIES and len(core) > 1 else core[0]
        lem = tx.verb_lemma(verb) if tx.has_verb_reading(verb) is not False else None
        if lem and lem not in _RECEIVING_SKIP and lem in tx.passive_or_object_uses(answer):
            reasons.append(f"the group does {lem!r}, but in the answer the writer receives it")
    return reasons


def _segments(answer: str) -> list[str]:
    return list(dict.fromkeys([answer, *tx.sentences(answer), *tx.clauses(answer)]))


def best_cosines(pairs: Sequence[tuple[str, str]], embedder: Any) -> list[float]:
    """For each (predicate, answer): the best cosine of the predicate with the answer's segments."""
    texts = list(dict.fromkeys([p for p, _ in pairs] + [s for _, a in pairs for s in _segments(a)]))
    embedder.embed(texts)  # one batch
    out = []
    for p, a in pairs:
        out.append(float(embedder.cosine([p], _segments(a)).max()))
    return out


def _families(keys: list[str], embedder: Any, threshold: float) -> dict[str, int]:
    """Union of normalised predicates that are equal or embedding-near (cosine >= threshold)."""
    uniq = [k for k in dict.fromkeys(keys) if k]
    parent = list(range(len(uniq)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    if embedder is not None and len(uniq) > 1:
        sims = embedder.cosine(uniq, uniq)
        for i, j in zip(*np.nonzero(np.triu(sims >= threshold, k=1))):
            parent[find(int(i))] = find(int(j))
    return {k: find(i) for i, k in enumerate(uniq)}


def flag_predicates(
    rows: Sequence[PredicateRow],
    survey: dict[str, SurveyAnswer],
    embedder: Any = None,
    *,
    truncated: Sequence[bool] | None = None,
    settings: FlagSettings = FlagSettings(),
) -> list[dict[str, Any]]:
    """The flags and their evidence for every row (rows must carry survey response ids)."""
    answers = [survey[r.response_id] for r in rows]
    cos: list[float | None] = [None] * len(rows)
    if embedder is not None:
        idx = [i for i, r in enumerate(rows) if r.predicate.strip()]
        for i, c in zip(idx, best_cosines([(rows[i].predicate, answers[i].text) for i in idx], embedder)):
            cos[i] = c
    out: list[dict[str, Any]] = []
    for i, (r, a) in enumerate(zip(rows, answers)):
        bad, short = shape_flags(
            r.predicate, a.identity_noun, truncated=bool(truncated and truncated[i]), settings=settings
        )
        ungrounded, share, why = (
            grounding(r.predicate, a.text, cos[i], settings) if tx.words(r.predicate) else (True, 0.0, "empty")
        )
        neg = negation_reasons(r.predicate, a.text) if tx.words(r.predicate) else []
        notes = [f"not_a_predicate: {x}" for x in bad] + [f"incomplete: {x}" for x in short]
        notes += [f"not_grounded: {why}"] if ungrounded else []
        notes += [f"possible_negation: {x}" for x in neg]
        out.append(
            {
                "not_a_predicate": bool(bad),
                "incomplete": bool(short),
                "not_grounded": ungrounded,
                "repeated_prior": False,
                "possible_negation": bool(neg),
                "grounding_overlap": share,
                "grounding_cosine": cos[i],
                "repeat_responses": 0,
                "flag_notes": notes,
            }
        )
    keys = [normalise(r.predicate) for r in rows]
    fam = _families(keys, embedder, settings.repeat_cosine)
    members: dict[int, list[int]] = {}
    for i, k in enumerate(keys):
        if k:
            members.setdefault(fam[k], []).append(i)
    for idx in members.values():
        responses = {rows[i].response_id for i in idx}
        ungrounded = sum(out[i]["not_grounded"] for i in idx) / len(idx)
        for i in idx:
            out[i]["repeat_responses"] = len(responses)
        if len(responses) >= settings.repeat_min_responses and ungrounded >= settings.repeat_ungrounded_share:
            for i in idx:
                out[i]["repeated_prior"] = True
                out[i]["flag_notes"].append(
                    f"repeated_prior: near-same predicate for {len(responses)} answers, "
                    f"{ungrounded:.0%} of them not grounded"
                )
    for o in out:
        o["flag_notes"] = "; ".join(o["flag_notes"])
    return out


def flag_rates(flags: Sequence[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    """How often each flag fires (count and share of predicates), plus "any flag"."""
    n = len(flags)
    rates: dict[str, dict[str, float | int]] = {}
    for f in FLAGS:
        k = sum(bool(x[f]) for x in flags)
        rates[f] = {"count": k, "share": k / n if n else 0.0}
    k = sum(any(bool(x[f]) for f in FLAGS) for x in flags)
    rates["any_flag"] = {"count": k, "share": k / n if n else 0.0}
    rates["n_predicates"] = {"count": n, "share": 1.0}
    return rates
