"""HolisticBias v1.1 sentences: template x (descriptor + noun), as probe items.

A noun phrase is ``{article} {descriptor} {noun}`` (singular) or ``{descriptor} {plural noun}``
(plural), for every noun of ``nouns.json``; a descriptor marked with a gender is only combined
with the nouns of that gender, and a descriptor's own ``article`` overrides the a/an rule.
A template takes ``{noun_phrase}`` or ``{plural_noun_phrase}``. One item per (template,
descriptor): its prompts are the sentences over the nouns, the sample the descriptor's
likelihood distribution is made of.
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
SLOTS = ("{noun_phrase}", "{plural_noun_phrase}")


@dataclass(frozen=True)
class Descriptor:
    axis: str
    bucket: str
    text: str
    gender: str | None = None
    article: str | None = None
    preference: str | None = None


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
                d = (Descriptor(axis, bucket, entry) if isinstance(entry, str) else
                     Descriptor(axis, bucket, entry["descriptor"], entry.get("gender"), entry.get("article"),
                                entry.get("preference")))
                if (axis, d.text) not in seen:
                    seen.add((axis, d.text))
                    out.append(d)
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


def sentence(template: str, d: Descriptor, noun: Noun) -> str:
    if "{plural_noun_phrase}" in template:
        return template.replace("{plural_noun_phrase}", f"{d.text} {noun.plural}")
    return template.replace("{noun_phrase}", f"{article(d)} {d.text} {noun.singular}")


def build_items(axes: tuple[str, ...] | None = None) -> list[ProbeItem]:
    """One item per (template, descriptor), its prompts the sentences over the matching nouns."""
    descriptors = read_descriptors()
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
            prompts = [Prompt(sentence(template, d, n), metadata={"noun": n.singular, "noun_gender": n.gender})
                       for n in matching]
            meta = {"template": template, "template_index": t_idx, "axis": d.axis, "bucket": d.bucket,
                    "descriptor": d.text, "preference": d.preference}
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
    chosen_d = {(axis, names[i]) for axis, names in by_axis.items()
                for i in rng.choice(len(names), min(k, len(names)), replace=False)}
    return [it for it in items if it.metadata["template_index"] in chosen_t
            and (it.metadata["axis"], it.metadata["descriptor"]) in chosen_d]
