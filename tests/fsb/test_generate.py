"""Graded biased-text generation: the plan, the prompt structure and the example draws."""

import ast
import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from biaslab.errors import ConfigError, DataError
from biaslab.fsb.generate import (
    SYSTEM_PROMPTS,
    first_line,
    generate_texts,
    parse_prompt_types,
    parse_seed_types,
    plan_texts,
    read_examples,
    texts_csv,
)
from biaslab.models.cache import CachedModel, ResponseCache
from biaslab.models.scripted import ScriptedBackend
from tests.conftest import requires_data

pytestmark = requires_data
DATA = Path(__import__("os").environ.get("BIASLAB_DATA_DIR", "."))
FSB = DATA / "fsb"


def released_pairs(seed_type, prompt_type):
    raw = json.loads((FSB / "in_context_examples" / f"{seed_type}_{prompt_type}_ic.json").read_text())
    return ast.literal_eval(raw["ic"])


def released_seed_lines(name):
    return [line.strip() for line in (FSB / "seeds" / name).read_text().splitlines() if line.strip()]


def test_release_example_files_parse_into_ids_and_pairs():
    ex = read_examples(FSB / "in_context_examples" / "explicit_completion_ic.json", "explicit_completion")
    pairs = released_pairs("explicit", "completion")
    assert len(ex) == len(pairs) == 23
    assert [(e.seed, e.output) for e in ex] == [(a.strip(), b.strip()) for a, b in pairs]
    assert ex[3].id == "explicit_completion:3"


def test_full_plan_matches_the_dataset_layout():
    rows = plan_texts(["conversion", "completion"], ["explicit", "implicit", "neutral", "random"])
    assert [r.uid for r in rows] == list(range(1, 1001))
    counts = Counter((r.seed_type, r.prompt_type) for r in rows)
    assert counts == {
        (s, p): (50 if s == "random" else 150)
        for s in ("explicit", "implicit", "neutral", "random")
        for p in ("conversion", "completion")
    }
    # blocks in FSB_text.csv order: seed type, then conversion before completion
    with open(FSB / "FSB_text.csv", newline="") as fh:
        released = list(csv.DictReader(fh))
    assert [(r.seed_type, r.prompt_type) for r in rows] == [(r["seed_type"], r["prompt_type"]) for r in released]
    # the random seeds are the released random queries; the others the seed files in order
    assert [r.query for r in rows if r.seed_type == "random"] == [
        r["query"].strip() for r in released if r["seed_type"] == "random"
    ]
    assert [
        r.query for r in rows if r.seed_type == "explicit" and r.prompt_type == "completion"
    ] == released_seed_lines("explict_bias_seed.txt")


@pytest.mark.parametrize("prompt_type", ["completion", "conversion"])
def test_each_prompt_has_the_papers_structure(prompt_type):
    rows = plan_texts([prompt_type], ["explicit", "implicit", "neutral"], seed=3)
    assert len(rows) == 450
    for r in rows:
        msgs = r.messages()
        assert [role for role, _ in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
        assert msgs[0][1] == SYSTEM_PROMPTS[prompt_type]
        pairs = {(a.strip(), b.strip()) for a, b in released_pairs(r.seed_type, prompt_type)}
        shown = [(msgs[1][1], msgs[2][1]), (msgs[3][1], msgs[4][1])]
        assert all(p in pairs for p in shown)  # both examples from the matching file
        assert shown[0] != shown[1]  # two distinct examples
        assert msgs[-1][1] == r.query
        assert all(ex.id.startswith(f"{r.seed_type}_{prompt_type}:") for ex in r.examples)
        norm = lambda s: " ".join("".join(c if c.isalnum() else " " for c in s.lower()).split())  # noqa: E731
        assert all(norm(ex.seed) != norm(r.query) for ex in r.examples)  # never the seed itself


def test_system_prompts_are_the_papers():
    assert SYSTEM_PROMPTS["completion"].startswith(
        "Using the given statement as a start, You generate only one gender-biased sentence"
    )
    assert SYSTEM_PROMPTS["conversion"].endswith("biased against a gender. Follow the examples specified below:")


def test_draws_are_seeded_spread_and_independent_of_other_selections():
    a = plan_texts(["completion"], ["neutral"], seed=1)
    b = plan_texts(["completion"], ["neutral"], seed=1)
    c = plan_texts(["completion"], ["neutral"], seed=2)
    assert [r.examples for r in a] == [r.examples for r in b]
    assert sum(x.examples != y.examples for x, y in zip(a, c)) > 100
    # a row's draw does not depend on which other seed types / prompt types are planned
    full = plan_texts(["conversion", "completion"], ["explicit", "neutral"], seed=1)
    assert [r.examples for r in full if r.seed_type == "neutral" and r.prompt_type == "completion"] == [
        r.examples for r in a
    ]
    # roughly uniform over the 20 examples of the file (150 seeds x 2 draws)
    used = Counter(ex.id for r in a for ex in r.examples)
    assert len(used) == 20 and max(used.values()) < 35


def test_random_seed_type_draws_from_the_pooled_files_by_default():
    rows = plan_texts(["conversion"], ["random"], seed=0)
    assert len(rows) == 50
    sources = Counter(ex.id.split(":")[0] for r in rows for ex in r.examples)
    assert set(sources) == {"explicit_conversion", "implicit_conversion", "neutral_conversion"}
    only = plan_texts(["conversion"], ["random"], seed=0, random_examples="neutral")
    assert {ex.id.split(":")[0] for r in only for ex in r.examples} == {"neutral_conversion"}


def test_flag_parsing():
    assert parse_prompt_types("both") == ["conversion", "completion"]
    assert parse_prompt_types("Completion") == ["completion"]
    assert parse_seed_types("neutral, explicit,neutral") == ["explicit", "neutral"]
    with pytest.raises(ConfigError, match="unknown --prompt-type 'conversation'"):
        parse_prompt_types("conversation")
    with pytest.raises(ConfigError, match="unknown seed type.*'gendered'"):
        parse_seed_types("explicit,gendered")
    with pytest.raises(ConfigError, match="--random-examples"):
        plan_texts(["completion"], ["random"], random_examples="everything")


def test_first_line_of_the_stripped_answer():
    assert first_line("\n  The nurse smiled.\nSecond line") == "The nurse smiled."
    assert first_line("one line  ") == "one line"
    assert first_line("  \n ") == ""


def test_generation_goes_through_the_cache_and_keeps_the_first_line(tmp_path):
    rows = plan_texts(["completion"], ["implicit"], seed=0)[:6]
    backend = ScriptedBackend(lambda r: f"  {r.messages[-1][1]} because she said so.\nAnd more.")
    model = CachedModel(backend, ResponseCache(tmp_path / "c.sqlite"))
    out = generate_texts(model, rows)
    assert [o["response"] for o in out] == [f"{r.query} because she said so." for r in rows]
    assert all(o["raw_response"].endswith("And more.") for o in out)
    assert [o["example_ids"] for o in out] == [";".join(e.id for e in r.examples) for r in rows]
    assert backend.calls == 6
    again = generate_texts(model, rows)
    assert backend.calls == 6 and model.stats.cache_hits == 6 and again == out
    parsed = list(csv.DictReader(texts_csv(out).splitlines(keepends=True)))
    assert list(parsed[0])[:5] == ["uid", "prompt_type", "seed_type", "query", "response"]
    assert parsed[0]["raw_response"] == out[0]["raw_response"]


def test_missing_or_bad_examples_files_are_data_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        plan_texts(["completion"], ["neutral"], examples_dir=tmp_path)
    (tmp_path / "neutral_completion_ic.json").write_text("{\"ic\": \"[('only one', 'pair')]\"}")
    with pytest.raises(DataError, match="only 1 usable in-context example"):
        plan_texts(["completion"], ["neutral"], examples_dir=tmp_path)
    (tmp_path / "neutral_completion_ic.json").write_text('{"ic": [["a", ""]]}')
    with pytest.raises(DataError, match="example 0 is not a"):
        plan_texts(["completion"], ["neutral"], examples_dir=tmp_path)


def test_own_seeds_and_examples(tmp_path):
    (tmp_path / "ex").mkdir()
    pairs = [[f"Seed {i}.", f"Biased output {i}."] for i in range(4)]
    (tmp_path / "ex" / "workplace_conversion_ic.json").write_text(json.dumps(pairs))
    seeds = tmp_path / "seeds.csv"
    seeds.write_text(
        "seed_type,query,prompt_type\nworkplace,The meeting ran late.,conversion\n"
        "workplace,Seed 1.,\nworkplace,The printer jammed.,completion\n"
    )
    rows = plan_texts(["conversion"], ["workplace"], seeds_file=seeds, examples_dir=tmp_path / "ex")
    assert [(r.uid, r.prompt_type, r.query) for r in rows] == [
        (1, "conversion", "The meeting ran late."),
        (2, "conversion", "Seed 1."),
    ]
    assert all(ex.id.startswith("workplace_conversion:") for r in rows for ex in r.examples)
    assert all(ex.seed != "Seed 1." for ex in rows[1].examples)
    with pytest.raises(DataError, match="workplace_completion_ic.json does not exist"):
        plan_texts(["conversion", "completion"], ["workplace"], seeds_file=seeds, examples_dir=tmp_path / "ex")
    bad = tmp_path / "bad.csv"
    bad.write_text("type,text\nx,y\n")
    with pytest.raises(DataError, match="missing column\\(s\\) query, seed_type"):
        plan_texts(["conversion"], ["x"], seeds_file=bad)
