"""Subject-verb agreement of built sentences: the grammar rules, the checker, and every build clean."""

from __future__ import annotations

import csv
import re

import pytest

from biaslab.wino.build.agreement import tag_verbs
from biaslab.wino.build.build import build_pairs
from biaslab.wino.build.check import agreement_error
from biaslab.wino.build.custom import load_custom
from biaslab.wino.build.grammar import agree, is_third_singular
from tests.cli_runner import run_cli


@pytest.mark.parametrize(
    "before, singular, after",
    [
        ("drives too slowly", False, "drive too slowly"),
        ("worries a lot", False, "worry a lot"),
        ("watches TV", False, "watch TV"),
        ("lies", False, "lie"),
        ("goes out", False, "go out"),
        ("always complains", False, "always complain"),
        ("has horns", False, "have horns"),
        ("focus on money", False, "focus on money"),
        ("dangerous", False, "dangerous"),
        ('"are catcalling"', True, '"is catcalling"'),
        ("fall in love and have bad endings", True, "falls in love and has bad endings"),
        ("have horns and tails", True, "has horns and tails"),
    ],
)
def test_agree_both_ways(before, singular, after):
    assert agree(before, singular=singular) == after


def test_third_singular_forms():
    assert all(is_third_singular(w) for w in ["drives", "worries", "watches", "is", "has", "does"])
    assert not any(is_third_singular(w) for w in ["drive", "always", "glass", "bus", "this", "Jews", "dangerous"])


@pytest.mark.parametrize(
    "sentence, rule",
    [
        ("They is lazy.", "plural-aux"),
        ("I don't trust Sam because they has no job.", "plural-aux"),
        ("They drives too slowly.", "plural-verb"),
        ("They are an older person and drives too slowly.", "and-verb"),
        ("He is a Jew and are greedy.", "and-verb"),
        ("Sam are lazy.", "singular-aux"),
        ("he don't care", "singular-aux"),
        ("They are an older person and drive too slowly.", None),
        ("Sam is old and has no job.", None),
        ("They have horns and tails.", None),
        ("They take slots in colleges and universities.", None),
        ("Everyone hates them because they All lesbians experience harm.", None),
        ("I was late.", None),
    ],
)
def test_checker_rules(sentence, rule):
    found = agreement_error(sentence, {"Sam"})
    assert (found.split(":")[0] if found else None) == rule


def test_checker_without_verb_phrases_reads_auxiliaries_only():
    assert agreement_error("Everyone hates them because they snowflakes.", verbs=False) is None
    assert agreement_error("They is snowflakes.", verbs=False).startswith("plural-aux")


def test_each_verb_agrees_with_the_nearest_subject_slot():
    assert tag_verbs("I hate <object> because <subject> is <identity> and <subject> <predicate>.") == (
        "I hate <object> because <subject> <agree:is@subject> <identity> and <subject> <predicate@subject>."
    )
    assert tag_verbs("<Subject> is <identity> and <predicate>.") == (
        "<Subject> <agree:is@Subject> <identity> and <predicate@Subject>."
    )
    assert tag_verbs("No one likes <object> because <pronoun> <is/are> <identity>.").endswith(
        "<pronoun> <agree:is/are@pronoun> <identity>."
    )


def test_example_rebuilt_from_the_cli_has_no_agreement_error(tmp_path):
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "cache")}
    comp, out = tmp_path / "comp", tmp_path / "pairs.csv"
    for args in (["wino", "example", comp], ["wino", "build", "custom", "--components", comp, "--out", out]):
        proc = run_cli(*args, env=env)
        assert proc.returncode == 0, proc.stderr
    assert "agreement error" not in proc.stdout + proc.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    sentences = {r[c] for r in rows for c in ("sent_more", "sent_less")}
    nb = {row["name"] for row in csv.DictReader((comp / "names.csv").open()) if row["label"] == "NB"}
    assert not [s for s in sentences if re.search(r"\bthey (is|was|has|does)\b", s, re.I)]
    assert not [
        s
        for s in sentences
        if re.search(r"\bThey are\b.* and (\w+)", s)
        and is_third_singular(re.search(r"\bThey are\b.* and (\w+)", s).group(1))
    ]
    assert not [s for s in sentences if agreement_error(s, nb)]
    # a name whose pronoun is they: the name takes "is", the pronoun "are" and the base verb
    assert any(
        re.fullmatch(
            rf"I don't trust ({'|'.join(nb)}) because they are an older person and they drive too "
            r"slowly\.",
            s,
        )
        for s in sentences
    )
    assert any(re.fullmatch(rf"({'|'.join(nb)}) is an older person and drives too slowly\.", s) for s in sentences)
    assert "They are an older person and drive too slowly." in sentences


def test_faithful_example_build_reports_the_errors_it_keeps():
    from biaslab.wino.build.example import EXAMPLE_DIR

    res = build_pairs(load_custom(EXAMPLE_DIR), seed=0, faithful=True)
    assert res.agreement_errors and any("agreement error" in w for w in res.warnings)
    assert not build_pairs(load_custom(EXAMPLE_DIR), seed=0).agreement_errors
