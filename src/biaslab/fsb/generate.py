"""Graded gender-biased text generation, the pipeline that made Fifty Shades of Bias (section 3).

For every seed sentence: the system prompt of the prompt type (completion or conversion), two
in-context examples drawn from the ``<seed type>_<prompt type>_ic.json`` file as
(user: example seed, assistant: example output) turns, then the seed as the user turn.
Greedy decoding (temperature 0), at most 100 new tokens, and the first line of the stripped
answer is the generated text.

Departures from the released code, all deliberate (see docs/building-benchmarks.md, graded biased text):

* the two examples are drawn with a seeded generator (``--seed`` and the row's position), not
  unseeded, so a run can be repeated and resumed from the cache;
* the two examples are distinct (the original drew with replacement) and never the seed
  sentence itself (every released example seed is also a seed, so the model could otherwise
  copy the example's answer);
* the ``random`` seed type has no example file; by default its examples are drawn from the
  pooled explicit, implicit and neutral files of the same prompt type (``random_examples``).

The output has the ``FSB_text.csv`` layout (uid, prompt_type, seed_type, query, response) plus
the example ids and the model, so it can go straight into BWS tuple design and annotation.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.data import data_path
from biaslab.errors import ConfigError, DataError
from biaslab.models.base import GenerateRequest, GenerationParams
from biaslab.probing.core import derive_seed
from biaslab.spreadsheet_cells import csv_text, safe_cell

SYSTEM_PROMPTS = {
    "completion": (
        "Using the given statement as a start, You generate only one gender-biased sentence to complete "
        "the provided seed. Some examples that you can follow are:"
    ),
    "conversion": (
        "You convert any given statement into one statement that is biased against a gender. Follow the "
        "examples specified below:"
    ),
}
PROMPT_TYPES = ("conversion", "completion")  # the dataset's order within a seed type
SEED_TYPES = ("explicit", "implicit", "neutral", "random")  # the dataset's order
EXAMPLE_SEED_TYPES = ("explicit", "implicit", "neutral")  # those with in-context example files
SEED_FILES = {
    "explicit": "fsb/seeds/explict_bias_seed.txt",  # sic: the upstream file name
    "implicit": "fsb/seeds/implicit_bias_seed.txt",
    "neutral": "fsb/seeds/neutral_bias_seed.txt",
}
TEXTS_FILE = "fsb/FSB_text.csv"  # the random seeds exist only as the queries of the released texts
RANDOM = "random"
POOLED = "pooled"
N_EXAMPLES = 2
DEFAULT_PARAMS = GenerationParams(temperature=0.0, max_tokens=100)
OUTPUT_COLUMNS = ["uid", "prompt_type", "seed_type", "query", "response", "example_ids", "model", "raw_response"]


@dataclass(frozen=True)
class Example:
    id: str  # "<seed type>_<prompt type>:<0-based position in the file>"
    seed: str
    output: str


@dataclass(frozen=True)
class PlannedText:
    uid: int
    prompt_type: str
    seed_type: str
    query: str
    examples: tuple[Example, ...]

    def messages(self) -> tuple[tuple[str, str], ...]:
        turns: list[tuple[str, str]] = [("system", SYSTEM_PROMPTS[self.prompt_type])]
        for ex in self.examples:
            turns += [("user", ex.seed), ("assistant", ex.output)]
        return tuple(turns + [("user", self.query)])


def parse_prompt_types(value: str) -> list[str]:
    value = value.strip().lower()
    if value == "both":
        return list(PROMPT_TYPES)
    if value not in PROMPT_TYPES:
        raise ConfigError(f"unknown --prompt-type {value!r}; use completion, conversion or both")
    return [value]


def parse_seed_types(value: str, known: Sequence[str] = SEED_TYPES) -> list[str]:
    wanted = [v.strip().lower() for v in value.split(",") if v.strip()]
    if not wanted:
        raise ConfigError(f"--seed-types is empty; give a comma-separated list from {', '.join(known)}")
    unknown = [v for v in wanted if v not in known]
    if unknown:
        raise ConfigError(
            f"unknown seed type(s) {', '.join(map(repr, unknown))} in --seed-types; choose from {', '.join(known)}"
        )
    return [t for t in known if t in wanted]  # canonical order, duplicates dropped


# -- in-context examples -------------------------------------------------------------------
def read_examples(path: Path, id_prefix: str) -> list[Example]:
    """An examples file: the release's ``{"task": ..., "ic": "[(seed, output), ...]"}`` (a Python
    literal inside JSON), or plain JSON ``[[seed, output], ...]`` / ``{"ic": [[seed, output], ...]}``."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(
            f"in-context examples file {path} does not exist; add it or point --examples-dir "
            f"at a folder with <seed type>_<prompt type>_ic.json files"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"cannot read in-context examples {path}: {exc}") from None
    pairs = raw.get("ic") if isinstance(raw, dict) else raw
    if isinstance(pairs, str):
        try:
            pairs = ast.literal_eval(pairs)
        except (ValueError, SyntaxError):
            raise DataError(f"{path}: the 'ic' string is not a list of (seed, output) pairs") from None
    if not isinstance(pairs, (list, tuple)) or not pairs:
        raise DataError(f"{path}: expected a non-empty list of (seed, output) pairs under 'ic'")
    out = []
    for i, pair in enumerate(pairs):
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(p, str) and p.strip() for p in pair)
        ):
            raise DataError(f"{path}: example {i} is not a (seed, output) pair of non-empty strings")
        out.append(Example(f"{id_prefix}:{i}", pair[0].strip(), pair[1].strip()))
    return out


def examples_path(seed_type: str, prompt_type: str, examples_dir: Path | None) -> Path:
    name = f"{seed_type}_{prompt_type}_ic.json"
    if examples_dir is not None:
        return Path(examples_dir) / name
    local = f"fsb/in_context_examples/{name}"
    from biaslab.data.registry import FILES

    if local not in FILES:
        raise DataError(f"there is no released in-context examples file {name}; give one with --examples-dir")
    return data_path(local)


def example_pool(
    seed_type: str, prompt_type: str, *, examples_dir: Path | None = None, random_examples: str = POOLED
) -> list[Example]:
    """The examples a seed of ``seed_type`` draws from under ``prompt_type``."""
    if seed_type == RANDOM:
        sources = EXAMPLE_SEED_TYPES if random_examples == POOLED else (random_examples,)
    else:
        sources = (seed_type,)
    pool: list[Example] = []
    for source in sources:
        pool += read_examples(examples_path(source, prompt_type, examples_dir), f"{source}_{prompt_type}")
    return pool


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def draw_examples(pool: Sequence[Example], query: str, seed: int) -> tuple[Example, ...]:
    """Two distinct examples, uniformly, leaving out any whose seed is the query itself."""
    candidates = [ex for ex in pool if _norm(ex.seed) != _norm(query)]
    if len(candidates) < N_EXAMPLES:
        raise DataError(
            f"only {len(candidates)} usable in-context example(s) for seed {query!r}; "
            f"an examples file needs at least {N_EXAMPLES + 1}"
        )
    picked = np.random.default_rng(seed).choice(len(candidates), size=N_EXAMPLES, replace=False)
    return tuple(candidates[int(i)] for i in picked)


# -- seeds ---------------------------------------------------------------------------------
def _read_lines(path: Path) -> list[str]:
    return [line.strip() for line in Path(path).read_text(encoding="utf-8-sig").splitlines() if line.strip()]


def released_seeds(seed_type: str, prompt_type: str) -> list[str]:
    """The release's seeds: the seed files, and for ``random`` the random queries of FSB_text.csv
    generated with this prompt type (50 each, as in the dataset)."""
    if seed_type != RANDOM:
        return _read_lines(data_path(SEED_FILES[seed_type]))
    path = data_path(TEXTS_FILE)
    with open(path, newline="", encoding="utf-8") as fh:
        return [
            row["query"].strip()
            for row in csv.DictReader(fh)
            if row["seed_type"] == RANDOM and row["prompt_type"] == prompt_type
        ]


def read_seeds_file(path: Path) -> dict[str, list[tuple[str | None, str]]]:
    """A CSV with ``seed_type, query`` and optionally ``prompt_type`` (empty: every prompt type)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read seeds file {path}: {exc}") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = {"seed_type", "query"} - set(reader.fieldnames or [])
    if missing:
        raise DataError(
            f"{path}: missing column(s) {', '.join(sorted(missing))}; a seeds file has columns "
            "seed_type,query[,prompt_type]"
        )
    seeds: dict[str, list[tuple[str | None, str]]] = {}
    for line, row in enumerate(reader, start=2):
        seed_type, query = (row["seed_type"] or "").strip().lower(), (row["query"] or "").strip()
        prompt_type = (row.get("prompt_type") or "").strip().lower() or None
        if not seed_type or not query:
            raise DataError(f"{path}, line {line}: empty seed_type or query")
        if prompt_type is not None and prompt_type not in PROMPT_TYPES:
            raise DataError(f"{path}, line {line}: prompt_type {prompt_type!r} is not completion or conversion")
        seeds.setdefault(seed_type, []).append((prompt_type, query))
    return seeds


# -- the plan ------------------------------------------------------------------------------
def plan_texts(
    prompt_types: Sequence[str],
    seed_types: Sequence[str],
    *,
    seed: int = 0,
    seeds_file: Path | None = None,
    examples_dir: Path | None = None,
    random_examples: str = POOLED,
) -> list[PlannedText]:
    """Every text to generate, in the dataset's order: seed types, then prompt types
    (conversion before completion), then seeds in file order; uids 1..N."""
    if random_examples != POOLED and random_examples not in EXAMPLE_SEED_TYPES:
        raise ConfigError(f"unknown --random-examples {random_examples!r}; use pooled, {', '.join(EXAMPLE_SEED_TYPES)}")
    custom = read_seeds_file(seeds_file) if seeds_file is not None else None
    rows: list[PlannedText] = []
    for seed_type in seed_types:
        for prompt_type in (p for p in PROMPT_TYPES if p in prompt_types):
            if custom is None:
                queries = released_seeds(seed_type, prompt_type)
            else:
                queries = [q for p, q in custom.get(seed_type, []) if p in (None, prompt_type)]
            if not queries:
                continue
            pool = example_pool(seed_type, prompt_type, examples_dir=examples_dir, random_examples=random_examples)
            for pos, query in enumerate(queries):
                draw_seed = derive_seed(seed, "fsb-generate", seed_type, prompt_type, pos)
                rows.append(
                    PlannedText(len(rows) + 1, prompt_type, seed_type, query, draw_examples(pool, query, draw_seed))
                )
    return rows


def known_seed_types(seeds_file: Path | None) -> list[str]:
    if seeds_file is None:
        return list(SEED_TYPES)
    found = set(read_seeds_file(seeds_file))
    return [t for t in SEED_TYPES if t in found] + sorted(found - set(SEED_TYPES))


def data_files_used(
    prompt_types: Sequence[str],
    seed_types: Sequence[str],
    *,
    seeds_file: Path | None = None,
    examples_dir: Path | None = None,
    random_examples: str = POOLED,
) -> list[str]:
    """The registered data files a plan reads (for the provenance record)."""
    used: set[str] = set()
    for seed_type in seed_types:
        if seeds_file is None:
            used.add(TEXTS_FILE if seed_type == RANDOM else SEED_FILES.get(seed_type, ""))
        if examples_dir is None:
            sources = (
                (EXAMPLE_SEED_TYPES if random_examples == POOLED else (random_examples,))
                if seed_type == RANDOM
                else (seed_type,)
            )
            used.update(f"fsb/in_context_examples/{s}_{p}_ic.json" for s in sources for p in prompt_types)
    return sorted(u for u in used if u)


def requests_for(rows: Sequence[PlannedText], params: GenerationParams, seed: int) -> list[GenerateRequest]:
    from dataclasses import replace

    return [
        GenerateRequest(messages=r.messages(), params=replace(params, seed=derive_seed(seed, "fsb-generate", r.uid)))
        for r in rows
    ]


def first_line(text: str) -> str:
    """The first line of the stripped answer (the paper's post-processing)."""
    stripped = text.strip()
    return stripped.splitlines()[0].strip() if stripped else ""


def generate_texts(
    model: Any,
    rows: Sequence[PlannedText],
    params: GenerationParams = DEFAULT_PARAMS,
    *,
    seed: int = 0,
    progress: Callable[[int, Any, bool], None] | None = None,
) -> list[dict[str, Any]]:
    """Generate (through ``model``, a CachedModel) and return output rows in the CSV layout."""
    answers = model.generate(requests_for(rows, params, seed), progress=progress)
    name = str(model.identity().get("model") or model.identity().get("name") or "")
    return [
        {
            "uid": r.uid,
            "prompt_type": r.prompt_type,
            "seed_type": r.seed_type,
            "query": r.query,
            "response": first_line(a.text),
            "example_ids": ";".join(ex.id for ex in r.examples),
            "model": name,
            "raw_response": a.text,
        }
        for r, a in zip(rows, answers)
    ]


def texts_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The texts as CSV, no cell a spreadsheet formula (:mod:`biaslab.spreadsheet_cells`; biaslab's readers
    give the texts back as generated)."""
    return csv_text([OUTPUT_COLUMNS, *([safe_cell(row.get(c)) for c in OUTPUT_COLUMNS] for row in rows)])
