"""Reading MBBQ: the files of the chosen languages and categories, the biased answer, and which items are parallel.

Files are the registered ``benchmarks/mbbq/<Category>[_control]_<lang>.jsonl`` (sha256 pinned, downloaded from the
authors' repository when not under ``BIASLAB_DATA_DIR``). Each line is a BBQ question (:mod:`biaslab.probes.bbq.data`
parses it); the *control* files keep the contexts with the group words replaced by first names, to measure question
answering apart from bias.

**Target answer.** Read as BBQ's (:func:`biaslab.probes.bbq.data.resolve_target`), with the translated group words:
a stereotyped group ``F`` / ``M`` also matches the answer labels the authors' script maps to it in every language
(``kadın``, ``vrouw``, ``mujer``, ...), so a Turkish woman-or-man question resolves like its English twin.

**Parallel items.** The paper pairs items across languages by ``example_id``. In this copy that holds for Dutch and
Turkish, but the Spanish Gender_identity files list templates in another order from example 48 on (example 57 is
template 9 in English and 8 in Spanish). So an item's ``parallel_id`` is its template (``question_index``), context
condition, polarity and rank among the file's questions with those three: it equals the example_id pairing wherever
that one is right, and keeps every pair's answer roles (unknown / target / other) the same in all four languages.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaslab.data.registry import data_path
from biaslab.data.table import FILES
from biaslab.errors import ConfigError, DataError
from biaslab.probes.bbq.data import parse_question, resolve_target

PREFIX = "benchmarks/mbbq/"
_MBBQ_FILES = [local.removeprefix(PREFIX) for local in FILES if local.startswith(PREFIX)]
LANGUAGES = ("en", "es", "nl", "tr")
CATEGORIES = tuple(sorted({n.rsplit("_", 1)[0] for n in _MBBQ_FILES if "_control_" not in n}))
SETS = ("bias", "control")
# the authors' mapping of F / M to answer labels, every language (mbbq.py, get_samples)
GROUP_WORDS = {
    "F": ["F", "girl", "woman", "vrouw", "meisje", "kız", "kadın", "chica", "mujer", "maestra"],
    "M": ["M", "boy", "man", "jongen", "erkek çocuk", "adam", "chico", "hombre", "maestro"],
}


@dataclass
class MbbqQuestion:
    language: str
    set: str  # "bias" or "control"
    category: str
    example_id: str
    parallel_id: str
    question_index: str
    question_polarity: str
    context_condition: str
    context: str
    question: str
    answers: list[str]
    label: int
    unknown_answer: int | None
    target_answer: int | None
    biased_answer: int | None
    stereotyped_groups: list[str] = field(default_factory=list)


def file_of(category: str, language: str, kind: str) -> str:
    """The registered file: ``benchmarks/mbbq/Age_control_tr.jsonl``."""
    return f"{PREFIX}{category}{'_control' if kind == 'control' else ''}_{language}.jsonl"


def files_for(categories: list[str], languages: list[str]) -> list[str]:
    return [file_of(c, lang, s) for c in categories for lang in languages for s in SETS]


def split_names(text: str | list[str] | None, known: tuple[str, ...], option: str) -> list[str] | None:
    """``-P languages=en,tr`` / ``-P categories=...`` as a list (None: every one), each checked."""
    if text is None:
        return None
    names = text if isinstance(text, list) else [c.strip() for c in str(text).split(",") if c.strip()]
    if not names:
        raise ConfigError(f"-P {option} is empty; give some of {', '.join(known)} or omit it")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"-P {option}: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    return list(dict.fromkeys(names))


def available_categories(languages: list[str]) -> tuple[list[str], list[str]]:
    """``(categories whose files for these languages are all here, the others)`` (presence only, nothing fetched)."""
    from biaslab.data.availability import missing

    here = [c for c in CATEGORIES if not missing(files_for([c], languages))]
    return here, [c for c in CATEGORIES if c not in here]


def _groups(stereotyped: list[str]) -> list[str]:
    out: list[str] = []
    for g in stereotyped:
        out += GROUP_WORDS.get(str(g), [str(g)])
    return out


def read_file(path: Path, category: str, language: str, kind: str) -> list[MbbqQuestion]:
    out: list[MbbqQuestion] = []
    rank: Counter[tuple[str, str, str]] = Counter()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row: dict[str, Any] = json.loads(line)
            except json.JSONDecodeError:
                raise DataError(f"{path}, line {n}: not valid JSON") from None
            q = parse_question(category, row, f"{path}, line {n}")
            groups = list((row.get("additional_metadata") or {}).get("stereotyped_groups") or [])
            target = resolve_target(row["answer_info"], _groups(groups))
            biased = None
            if target is not None and q.unknown_answer is not None:
                other = next(i for i in range(3) if i not in (target, q.unknown_answer))
                biased = target if q.question_polarity == "neg" else other
            key = (q.question_index, q.context_condition, q.question_polarity)
            out.append(
                MbbqQuestion(
                    language=language,
                    set=kind,
                    category=category,
                    example_id=q.example_id,
                    parallel_id="-".join([*key, str(rank[key])]),
                    question_index=q.question_index,
                    question_polarity=q.question_polarity,
                    context_condition=q.context_condition,
                    context=q.context,
                    question=q.question,
                    answers=q.answers,
                    label=q.label,
                    unknown_answer=q.unknown_answer,
                    target_answer=target,
                    biased_answer=biased,
                    stereotyped_groups=groups,
                )
            )
            rank[key] += 1
    return out


def load_questions(categories: list[str], languages: list[str]) -> list[MbbqQuestion]:
    """Every question of ``categories`` x ``languages`` x (bias, control), in that order."""
    out: list[MbbqQuestion] = []
    for c in categories:
        for lang in languages:
            for kind in SETS:
                out += read_file(data_path(file_of(c, lang, kind)), c, lang, kind)
    return out
