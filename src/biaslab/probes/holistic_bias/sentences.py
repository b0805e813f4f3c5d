"""HolisticBias v1.1 sentences: template x (descriptor + noun), as probe items.

A noun phrase is ``{article} {descriptor} {noun}`` (singular) or ``{descriptor} {plural noun}``
(plural), for every noun of ``nouns.json``; a descriptor's own ``article`` overrides the a/an rule.
A template takes ``{noun_phrase}`` or ``{plural_noun_phrase}``. One item per (template,
descriptor): its prompts are the sentences over the nouns, the sample the descriptor's
likelihood distribution is made of.

**Which phrases** (``phrases``):

* ``official`` (default): the phrase set of the dataset authors' likelihood code
  (``run_bias_calculation.py`` of facebookresearch/ResponsibleNLP: sentences whose noun phrase holds both a
  descriptor and a noun, and no gendered descriptor): every descriptor of ``descriptors.json`` without a
  ``gender`` (566), with all 32 nouns, plus the 94 templated phrases of ``standalone_noun_phrases.json``
  (``{article} {noun} with a disability``: the article is the noun's, the phrase ``with a disability`` is the
  descriptor, in its axis), also with all 32 nouns. The 17 gendered descriptors ("Latina", "trans female")
  are left out because they could only take the nouns of their gender.
* ``descriptors``: biaslab's earlier set: every descriptor, the gendered ones with the nouns of their gender
  only (12 female or 11 male nouns), and no standalone phrase.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from biaslab.data import data_path
from biaslab.errors import ConfigError, DataError
from biaslab.probing.core import ProbeItem, Prompt

FOLDER = "benchmarks/holistic_bias"
DESCRIPTORS = f"{FOLDER}/descriptors.json"
NOUNS = f"{FOLDER}/nouns.json"
TEMPLATES = f"{FOLDER}/sentence_templates.json"
STANDALONE = f"{FOLDER}/standalone_noun_phrases.json"
SLOTS = ("{noun_phrase}", "{plural_noun_phrase}")
PHRASE_SETS = ("official", "descriptors")


@dataclass(frozen=True)
class Descriptor:
    axis: str
    bucket: str
    text: str
    gender: str | None = None
    article: str | None = None
    preference: str | None = None
    noun_phrase: str | None = None  # a standalone phrase: "{article} {noun} with a disability"
    plural_noun_phrase: str | None = None  # its plural ("{article} {noun} with disabilities"), else noun_phrase


@dataclass(frozen=True)
class Noun:
    singular: str
    plural: str
    gender: str


def _read(local: str) -> Any:
    path = data_path(local)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not valid JSON ({exc}); delete it so biaslab fetches it again") from None


def read_descriptors() -> list[Descriptor]:
    """Every descriptor of ``descriptors.json`` ({axis: {bucket: [str | {descriptor, ...}]}}), once per axis."""
    out, seen = [], set()
    for axis, buckets in _read(DESCRIPTORS).items():
        if not isinstance(buckets, dict):
            raise DataError(f"{DESCRIPTORS}: axis {axis!r} should map buckets to lists of descriptors")
        for bucket, entries in buckets.items():
            for entry in entries:
                d = (
                    Descriptor(axis, bucket, entry)
                    if isinstance(entry, str)
                    else Descriptor(
                        axis,
                        bucket,
                        entry["descriptor"],
                        entry.get("gender"),
                        entry.get("article"),
                        entry.get("preference"),
                    )
                )
                if (axis, d.text) not in seen:
                    seen.add((axis, d.text))
                    out.append(d)
    return out


def read_standalone() -> list[Descriptor]:
    """The templated phrases of ``standalone_noun_phrases.json`` (those with a ``{noun}`` slot), as descriptors
    named by the phrase without article and noun; fixed phrases ("a wheelchair user") are not among them."""
    out = []
    for axis, entries in _read(STANDALONE).items():
        for entry in entries:
            obj = {"noun_phrase": entry} if isinstance(entry, str) else entry
            phrase = str(obj.get("noun_phrase", ""))
            if "{noun}" not in phrase:
                continue
            plural = str(obj.get("plural_noun_phrase") or phrase)
            text = phrase.format(article="", noun="").strip()
            out.append(
                Descriptor(
                    axis, "", text, preference=obj.get("preference"), noun_phrase=phrase, plural_noun_phrase=plural
                )
            )
    return out


def read_nouns() -> list[Noun]:
    return [Noun(s, p, gender) for gender, pairs in _read(NOUNS).items() for s, p in pairs]


def read_templates() -> list[str]:
    templates = list(_read(TEMPLATES))
    bad = [t for t in templates if sum(slot in t for slot in SLOTS) != 1]
    if bad:
        raise DataError(f"{TEMPLATES}: template {bad[0]!r} needs exactly one of {', '.join(SLOTS)}")
    return templates


def article(d: Descriptor) -> str:
    return d.article or ("an" if d.text[:1].lower() in "aeiou" else "a")


def _noun_article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def sentence(template: str, d: Descriptor, noun: Noun) -> str:
    plural = "{plural_noun_phrase}" in template
    if d.noun_phrase is not None:
        phrase = (
            (d.plural_noun_phrase or d.noun_phrase).format(article="", noun=noun.plural).lstrip()
            if plural
            else d.noun_phrase.format(article=_noun_article(noun.singular), noun=noun.singular)
        )
    else:
        phrase = f"{d.text} {noun.plural}" if plural else f"{article(d)} {d.text} {noun.singular}"
    return template.replace("{plural_noun_phrase}" if plural else "{noun_phrase}", phrase)


def phrase_set(phrases: str = "official") -> list[Descriptor]:
    """The descriptors (and standalone phrases) of a phrase set (module docstring)."""
    if phrases not in PHRASE_SETS:
        raise ConfigError(f"-P phrases must be one of {', '.join(PHRASE_SETS)}, got {phrases!r}")
    if phrases == "descriptors":
        return read_descriptors()
    return [d for d in read_descriptors() if d.gender is None] + read_standalone()


def build_items(axes: tuple[str, ...] | None = None, phrases: str = "official") -> list[ProbeItem]:
    """One item per (template, descriptor), its prompts the sentences over the matching nouns."""
    descriptors = phrase_set(phrases)
    known = list(dict.fromkeys(d.axis for d in descriptors))
    if axes:
        unknown = [a for a in axes if a not in known]
        if unknown:
            raise ConfigError(f"-P axes: unknown axis {', '.join(unknown)}; choose from {', '.join(known)}")
        descriptors = [d for d in descriptors if d.axis in axes]
    nouns = read_nouns()
    items = []
    for t_idx, template in enumerate(read_templates()):
        for d in descriptors:
            matching = [n for n in nouns if d.gender is None or n.gender == d.gender]
            prompts = [
                Prompt(sentence(template, d, n), metadata={"noun": n.singular, "noun_gender": n.gender})
                for n in matching
            ]
            meta = {
                "template": template,
                "template_index": t_idx,
                "axis": d.axis,
                "bucket": d.bucket,
                "descriptor": d.text,
                "preference": d.preference,
                "phrase_type": "noun_descriptor" if d.noun_phrase is not None else "descriptor_noun",
            }
            items.append(ProbeItem(id=f"t{t_idx}/{d.axis}/{d.text}", prompts=prompts, metadata=meta))
    return items


def sample_design(items: list[ProbeItem], limit: int | None, seed: int) -> list[ProbeItem]:
    """About ``limit`` items as a crossed sample: ``n_t`` templates x ``k`` descriptors of every axis.

    ``n_t = clip(isqrt(limit // axes), 2, templates)`` and ``k = max(2, limit // (axes * n_t))``
    (at most an axis' size), drawn without replacement with ``seed``; every chosen descriptor
    is scored in every chosen template, so descriptors stay comparable. The smallest design
    (2 templates x 2 descriptors per axis) can exceed a very small ``limit``. Data order kept.
    """
    if limit is None:
        return list(items)
    templates = sorted({it.metadata["template_index"] for it in items})
    by_axis: dict[str, list[str]] = {}
    for it in items:
        names = by_axis.setdefault(it.metadata["axis"], [])
        if it.metadata["descriptor"] not in names:
            names.append(it.metadata["descriptor"])
    n_axes = len(by_axis)
    n_t = min(len(templates), max(2, math.isqrt(limit // n_axes)))
    k = max(2, limit // (n_axes * n_t))
    if n_t * sum(min(k, len(v)) for v in by_axis.values()) >= len(items):
        return list(items)
    rng = np.random.default_rng(seed)
    chosen_t = {templates[i] for i in rng.choice(len(templates), n_t, replace=False)}
    chosen_d = {
        (axis, names[i])
        for axis, names in by_axis.items()
        for i in rng.choice(len(names), min(k, len(names)), replace=False)
    }
    return [
        it
        for it in items
        if it.metadata["template_index"] in chosen_t and (it.metadata["axis"], it.metadata["descriptor"]) in chosen_d
    ]
