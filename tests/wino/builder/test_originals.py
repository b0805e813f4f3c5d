"""Building the published benchmarks: exact sizes, per-group counts, the recipe rules, both modes."""

from __future__ import annotations

from collections import Counter, defaultdict

import openpyxl
import pytest

from biaslab.data import data_path
from biaslab.wino.build.build import build_pairs
from biaslab.wino.build.originals import BENCHMARKS
from biaslab.wino.build.pairs_io import pairs_csv_text
from tests.conftest import requires_data
from tests.wino.builder.published import built, components

pytestmark = requires_data


@pytest.fixture(scope="module")
def hws():
    return components("winosemitism")


@pytest.fixture(scope="module")
def hws_faithful(hws):
    return built("winosemitism", seed=0, faithful=True)


@pytest.fixture(scope="module")
def gwq():
    return components("gpt-winoqueer")


def _columns(local: str) -> dict[str, list[str]]:
    """Non-empty cells per column, read directly with openpyxl (independent of biaslab's reader)."""
    wb = openpyxl.load_workbook(data_path(f"winosemitism/{local}"), read_only=True)
    rows = list(wb.active.iter_rows(values_only=True))
    return {h: [r[j] for r in rows[1:] if j < len(r) and r[j] is not None] for j, h in enumerate(rows[0]) if h}


@pytest.mark.slow  # builds whole published benchmarks: seconds each
def test_hws_has_58816_pairs_for_every_seed(hws, hws_faithful):
    assert len(hws_faithful.pairs) == 58_816 == hws_faithful.n_before_dedup
    for seed in (1, 7):
        assert len(built("winosemitism", seed=seed, faithful=True).pairs) == 58_816


def test_hws_group_counts_match_an_independent_count_of_the_components(hws_faithful):
    cols = _columns("human_ws/predicates.xlsx")
    expected = {}
    for col, cells in cols.items():
        group, _, number = col.rpartition(" - ")
        noun_only = group in ("Women", "Mothers")
        if number == "Plural":  # 10 adj + 10 noun templates (noun only: 10), 2 counterfactuals each
            per = (10 if noun_only else 20) * 2
        else:  # sing adj (7, Jewish only) + sing noun (7); 12 subjects (6 for she-only groups); 2 pairs
            templates = 14 if group == "Jewish" else 7
            per = templates * (6 if noun_only else 12) * 2
        n = len(cells) * per
        if group == "Jewish" and number == "Singular":  # no she for these predicates
            n -= sum(14 * 6 * 2 for c in cells if "black suit" in c or "weak and feminine" in c)
        expected[group] = expected.get(group, 0) + n
    assert hws_faithful.group_counts() == expected
    assert sum(expected.values()) == 58_816


@pytest.mark.slow  # builds whole published benchmarks: seconds each
def test_gpt_winoqueer_has_45468_pairs_and_272950_before_dedup(gwq):
    res = built("gpt-winoqueer", seed=3, faithful=True)
    assert len(res.pairs) == 45_468 and res.n_before_dedup == 272_950


@pytest.mark.slow  # builds whole published benchmarks: seconds each
def test_gpt_winosemitism_has_70992_before_dedup_and_about_68400_after():
    sizes = set()
    for seed in (0, 1):
        res = built("gpt-winosemitism", seed=seed, faithful=True)
        assert res.n_before_dedup == 70_992
        assert 68_000 <= len(res.pairs) <= 68_800
        sizes.add(len(res.pairs))
    assert len(sizes) == 2  # duplicated GPT predicates: the size depends on the draw


@pytest.mark.slow  # builds whole published benchmarks: seconds each
def test_same_seed_same_file_other_seed_other_draws(hws, hws_faithful):
    again = build_pairs(hws, seed=0, faithful=True)  # built anew here, not the kept build
    assert pairs_csv_text(again.pairs) == pairs_csv_text(hws_faithful.pairs)
    other = built("winosemitism", seed=1, faithful=True)
    assert pairs_csv_text(other.pairs) != pairs_csv_text(hws_faithful.pairs)


def test_ws_rules_names_counterfactuals_persons(hws_faithful):
    pairs = hws_faithful.pairs
    by_more = defaultdict(list)
    for p in pairs:
        by_more[(p.target_ID, p.sent_more)].append(p)
    # every stereotypical sentence: two pairs with two different counterfactuals
    assert {len(v) for v in by_more.values()} == {2}
    assert all(v[0].counterfactual != v[1].counterfactual for v in by_more.values())
    # five distinct names per (predicate, template, gender) besides the pronoun
    names = defaultdict(set)
    for p in pairs:
        if p.subject not in ("", "he", "she"):
            names[(p.predicate_id, p.template, p.form, p.subject in MALE)].add(p.subject)
    assert {len(v) for v in names.values()} == {5}
    # Women / Mothers: only she and female names; noun forms only
    women = [p for p in pairs if p.target_ID in ("Women", "Mothers")]
    assert {p.form for p in women} == {"Plural Noun Form", "Sing Noun Form"}
    assert not any(p.subject == "he" or p.subject in MALE for p in women)
    # Jewish: no she for the two excluded predicates
    excluded = [
        p
        for p in pairs
        if p.target_ID == "Jewish"
        and p.form.startswith("Sing")
        and ("black suit" in p.predicate or "weak and feminine" in p.predicate)
    ]
    assert excluded and not any(p.subject == "she" or p.subject in FEMALE for p in excluded)
    # subgroups: "an" before a vowel letter, sing noun only
    ortho = [p for p in pairs if p.target_ID == "Orthodox" and p.form.startswith("Sing")]
    assert {p.form for p in ortho} == {"Sing Noun Form"}
    assert all(" an Orthodox Jew " in p.sent_more for p in ortho)
    reform = next(p for p in pairs if p.target_ID == "Reform" and p.form == "Sing Noun Form")
    assert " a Reform Jew " in reform.sent_more


MALE = {
    "Michael",
    "David",
    "Joseph",
    "Daniel",
    "Joshua",
    "Jonathan",
    "Aaron",
    "Samuel",
    "Jesse",
    "Joel",
    "Jacob",
    "Jake",
    "Adam",
    "Benjamin",
    "Zachary",
    "Gabriel",
    "Seth",
    "Ethan",
    "Noah",
    "Elijah",
    "Isaiah",
    "Isaac",
    "Jeremiah",
    "Caleb",
    "Levi",
    "Eli",
}
FEMALE = {
    "Rebecca",
    "Sarah",
    "Sara",
    "Rachel",
    "Debra",
    "Leah",
    "Hannah",
    "Gabriella",
    "Gabrielle",
    "Danielle",
    "Nora",
    "Ellie",
}


def test_ws_slots_in_singular_predicates_are_filled_with_the_subject(hws_faithful):
    pairs = [p for p in hws_faithful.pairs if p.predicate_id == "Israeli#2" and p.form == "Sing Noun Form"]
    assert pairs and not any("<" in p.sent_more for p in pairs)
    assert any(" her country bombed" in p.sent_more for p in pairs)
    assert any(" his country bombed" in p.sent_more for p in pairs)
    # with a name, <Subject>/<object> are the name and <subject> the pronoun
    named = next(p for p in hws_faithful.pairs if p.subject == "David" and p.template.startswith("I don’t like"))
    assert named.sent_more.startswith("I don’t like David because he is ")


@pytest.mark.slow  # builds whole published benchmarks: seconds each
def test_faithful_keeps_quirks_and_corrected_mode_fixes_them(gwq):
    faithful = built("gpt-winoqueer", seed=0, faithful=True)
    fixed = built("gpt-winoqueer", seed=0)
    f_labels = Counter(p.target_ID for p in faithful.pairs)
    assert f_labels["LGBTQ "] > 0 and "LGBTQ " not in {p.target_ID for p in fixed.pairs}
    assert all(p.subject not in ("he",) for p in faithful.pairs if p.target_ID == "LGBTQ ")
    assert any(p.sent_more.startswith("They is ") for p in faithful.pairs)
    assert not any(p.sent_more.startswith("They is ") for p in fixed.pairs)
    assert any(p.sent_more.startswith("They are Gay and ") for p in fixed.pairs)
    assert any(".." in p.sent_more for p in faithful.pairs)
    assert not any(".." in p.sent_more or "  " in p.sent_more for p in fixed.pairs)
    assert all(p.sent_more.endswith(".") for p in fixed.pairs)
    he = [p for p in fixed.pairs if p.sent_more.startswith("He is Gay and ") and "girly" in p.predicate]
    assert he and all("acts girly" in p.sent_more for p in he)
    stats = {f.name: f for f in fixed.fixes}
    assert {"final-period", "verb-agreement", "they-is", "label"} <= set(stats)
    assert stats["label"].pairs == f_labels["LGBTQ "]
    # fewer after the fixes: predicates that differed only by a final period become duplicates
    assert 0 < stats["they-is"].pairs <= sum(p.sent_more.startswith("They is ") for p in faithful.pairs)
    assert stats["they-is"].pairs == sum(p.sent_more.startswith("They are ") for p in fixed.pairs)


@pytest.mark.slow  # builds whole published benchmarks: seconds each
def test_corrected_gpt_ws_conjugates_singular_copies_and_drops_the_empty_predicate():
    faithful = built("gpt-winosemitism", seed=0, faithful=True)
    fixed = built("gpt-winosemitism", seed=0)
    assert any(" and are cheap." in p.sent_more for p in faithful.pairs)
    assert any(" and is cheap." in p.sent_more for p in fixed.pairs)
    assert not any(" and are cheap" in p.sent_more for p in fixed.pairs)
    assert any("people  ." in p.sent_more or "Jews  ." in p.sent_more for p in faithful.pairs)
    stats = {f.name: f for f in fixed.fixes}
    assert stats["empty-predicate"].pairs == 40  # 10 adj + 10 noun plural templates x 2 counterfactuals
    assert not any(p.predicate.strip() == "" and p.predicate_id.startswith("converted#") for p in fixed.pairs)


@pytest.mark.slow  # builds whole published benchmarks: seconds each
def test_hws_corrected_mode_strips_the_non_breaking_space_and_puts_pronouns_for_names(hws, hws_faithful):
    fixed = built("winosemitism", seed=0)
    assert len(fixed.pairs) == 58_816
    stats = {f.name: f for f in fixed.fixes}
    assert list(stats) == ["whitespace", "predicate-pronoun"]
    changed = [(a, b) for a, b in zip(hws_faithful.pairs, fixed.pairs) if a.sent_more != b.sent_more]
    spaces = [(a, b) for a, b in changed if "\xa0" in a.sent_more]
    assert len(spaces) == stats["whitespace"].pairs
    assert all("\xa0" not in b.sent_more for a, b in spaces)
    # "<object>" in a predicate: the original put the name ("David ... thrown at David"), now the pronoun
    names = [(a, b) for a, b in changed if "\xa0" not in a.sent_more]
    assert len(names) == stats["predicate-pronoun"].pairs > 0
    for a, b in names:
        assert a.subject not in ("he", "she") and a.sent_more.endswith(f"thrown at {a.subject}.")
        assert b.sent_more.endswith(("thrown at him.", "thrown at her.")), b.sent_more
    assert stats["predicate-pronoun"].components == [
        "human_ws/predicates.xlsx, row 45, column 'Jewish - Singular': 'should have change thrown at <object>' -> "
        "'should have change thrown at him'"
    ]


def test_winoqueer_human_uses_the_gpt_wq_recipe_with_nb_as_nonbinary():
    res = built("winoqueer-human", seed=0, faithful=True)
    groups = {p.target_ID for p in res.pairs}
    assert "Nonbinary" in groups and "NB" not in groups
    nb = [p for p in res.pairs if p.target_ID == "Nonbinary"]
    assert {p.counterfactual for p in nb} == {"Cisgender", "Cis"}
    assert all(p.subject not in ("he", "she") for p in nb)


@pytest.mark.slow  # builds whole published benchmarks: seconds each
@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_published_benchmarks_build_without_agreement_errors(benchmark):
    """Every published benchmark, corrected, breaks no agreement rule (tests/wino/builder/test_agreement.py: the
    rules; here beside the other tests of the same builds, which share them)."""
    res = built(benchmark, seed=0)
    assert res.agreement_errors == [], res.agreement_errors[:5]
