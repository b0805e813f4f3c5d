"""The counterfactual check: a pair's sentences may differ in the group term only."""

from __future__ import annotations

import csv

import pytest

from biaslab.wino.build.counterfactuals import counterfactual_issue, counterfactual_issues
from tests.cli_runner import run_cli


@pytest.mark.parametrize(
    "more, less",
    [
        ("Autistic people lack empathy.", "Able-bodied people lack empathy."),
        ("He is an older person and drives slowly.", "He is a younger person and drives slowly."),  # a/an
        ("I hate Jews because Jews lie.", "I hate Christians because Christians lie."),  # repeated
        ("Trans people are confused.", "Cis people are confused."),
        ("She is a lesbian.", "She is straight."),
    ],
)
def test_pairs_that_differ_in_the_group_term_pass(more, less):
    assert counterfactual_issue(more, less) is None


@pytest.mark.parametrize(
    "more, less, needle",
    [
        (
            "Older people are slow.",
            "Younger people are quick.",
            "differs in 2 places, not only the group term: 'older' -> 'younger'; 'slow' -> 'quick'",
        ),
        ("Autistic people lack empathy.", "People who are not autistic lack empathy.", "differs in 2 places"),
        ("He is an older person.", "He is a younger people.", "changes number: 'older person' -> 'younger people'"),
        ("He is a Jew.", "He is Christians.", "changes number"),
        ("Jews are greedy.", "Christians are greedy and rich.", "differs in 2 places"),
    ],
)
def test_pairs_that_differ_in_more_are_listed(more, less, needle):
    assert needle in counterfactual_issue(more, less)


def test_issues_keep_the_pairs():
    pairs = [("Jews are greedy.", "Christians are greedy."), ("Old men are slow.", "Young men are quick.")]
    assert [(m, issue[:17]) for m, _, issue in counterfactual_issues(pairs)] == [
        ("Old men are slow.", "differs in 2 plac")
    ]


def _cli(*args, tmp_path):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")})


def test_cli_check_counterfactuals_and_no_quirk_fixes_for_custom_components(tmp_path):
    comp, out = tmp_path / "comp", tmp_path / "pairs.csv"
    assert _cli("wino", "example", comp, tmp_path=tmp_path).returncode == 0
    with open(comp / "counterfactuals.csv", "a", encoding="utf-8") as fh:
        fh.write("older,plural,people who are younger\n")
    (comp / "settings.toml").write_text('names_per_person = 1\ncounterfactuals_per_sentence = "all"\n')
    plain = _cli("wino", "build", "custom", "--components", comp, "--out", out, tmp_path=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "quirk" not in plain.stdout and "faithful" not in plain.stdout and "counterfactual check" not in plain.stdout
    checked = _cli(
        "wino", "build", "custom", "--components", comp, "--out", out, "--check-counterfactuals", tmp_path=tmp_path
    )
    assert checked.returncode == 0, checked.stderr
    text = " ".join(checked.stdout.split())
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    wordy = sum(r["counterfactual"] == "people who are younger" for r in rows)  # every one of them, no other
    assert (
        wordy == 15
        and f"counterfactual check: {wordy} of {len(rows)} pairs differ in more than the group term:" in text
    )
    assert (
        "Older people are bad with technology. / People who are younger are bad with technology.: differs in 2 "
        "places" in text
    )
    verbose = _cli("wino", "build", "custom", "--components", comp, "--out", out, "-v", tmp_path=tmp_path)
    assert "grammar rules applied" in verbose.stdout and "quirk" not in verbose.stdout
    helptext = " ".join(_cli("wino", "build", "--help", tmp_path=tmp_path).stdout.split())
    for needle in ("--check-counterfactuals", "<possessive>", "<object>", "helps <object>"):
        assert needle in helptext.replace("│", " ").replace("  ", " ") or needle in helptext
