"""Pronouns and possessives in predicates follow each sentence's subject; what does not is noted.

The components are the ones from the report that found the problem: a wheelchair user who "goes
out only when someone helps them" whatever the subject, and "a burden on his families"."""

from __future__ import annotations

import pytest

from biaslab.wino.build.build import build_pairs
from biaslab.wino.build.custom import load_custom
from biaslab.wino.build.example import EXAMPLE_DIR
from biaslab.wino.build.originals import WQ_PERSONS
from biaslab.wino.build.pronouns import (
    one_each_singular,
    place_pronouns,
    plural_after_possessive,
    pronoun_error,
    pronoun_table,
    singular_noun,
)

NAMES = {"male": ["Walter"], "female": ["Ruth"], "NB": ["Sam"]}


def components(folder, predicates: str):
    folder.mkdir()
    files = {
        "templates.csv": "form,number,template\nplural,plural,<Identity noun> <predicate>.\n"
        "singular,singular,<Subject> is <article> <identity noun> and <predicate>.\n"
        "singular,singular,I don't trust <object> because <subject> is <article> <identity noun> "
        "and <subject> <predicate>.\n",
        "identities.csv": "group,form,identity\nwheelchair,plural,wheelchair users\n"
        "wheelchair,singular,wheelchair user\n",
        "counterfactuals.csv": "group,form,counterfactual\nwheelchair,plural,people who walk\n"
        "wheelchair,singular,person who walks\n",
        "predicates.csv": "group,plural,singular\n" + predicates,
        "names.csv": "name,label\nWalter,male\nRuth,female\nSam,NB\n",
        "settings.toml": 'names_per_person = "all"\ncounterfactuals_per_sentence = 1\n',
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return load_custom(folder)


def sentences(result) -> set[str]:
    return {p.sent_more for p in result.pairs}


def test_object_slot_follows_the_subject_pronoun_or_the_names_label(tmp_path):
    res = build_pairs(components(tmp_path / "c", "wheelchair,go out only when someone helps <object>,\n"))
    more = sentences(res)
    assert "He is a wheelchair user and goes out only when someone helps him." in more
    assert "Walter is a wheelchair user and goes out only when someone helps him." in more  # not "helps Walter"
    assert "Ruth is a wheelchair user and goes out only when someone helps her." in more
    assert "Sam is a wheelchair user and goes out only when someone helps them." in more
    assert "They are a wheelchair user and go out only when someone helps them." in more
    assert "Wheelchair users go out only when someone helps them." in more  # a plural group
    # the template's own <object> is still the name
    assert "I don't trust Walter because he is a wheelchair user and he goes out only when someone helps him." in more
    assert res.pronoun_errors == [] and not any("pronoun" in w for w in res.warnings)
    assert res.custom and not res.fixes or all(f.name != "label" for f in res.fixes)


def test_a_fixed_pronoun_in_a_predicate_is_noted(tmp_path):
    res = build_pairs(
        components(
            tmp_path / "c", "wheelchair,go out only when someone helps them,goes out only when someone helps them\n"
        )
    )
    flagged = dict(res.pronoun_errors)
    assert flagged["He is a wheelchair user and goes out only when someone helps them."] == "pronoun: He ... them"
    assert flagged["Ruth is a wheelchair user and goes out only when someone helps them."] == "pronoun: Ruth ... them"
    assert "Sam is a wheelchair user and goes out only when someone helps them." not in flagged
    assert "Wheelchair users go out only when someone helps them." not in flagged
    note = next(w for w in res.warnings if "pronouns do not all follow one person" in w)
    assert "<object>" in note


def test_possessive_plurals_in_singular_sentences(tmp_path):
    res = build_pairs(
        components(
            tmp_path / "c",
            "wheelchair,are a burden on <possessive> families,\n"
            "wheelchair,neglect <possessive> children,\n"
            "wheelchair,are a burden on <possessive> families,"
            "is a burden on <possessive> families\n",
        )
    )
    more = sentences(res)
    assert "He is a wheelchair user and is a burden on his family." in more  # made from the plural
    assert "Sam is a wheelchair user and is a burden on their family." in more
    assert "Wheelchair users are a burden on their families." in more
    assert "He is a wheelchair user and is a burden on his families." in more  # the user's own singular
    assert "Ruth is a wheelchair user and neglects her children." in more  # children: many each
    assert [(noun, text) for _, text, noun in res.plural_nouns] == [("children", "neglect <possessive> children")]
    assert {f.name for f in res.fixes} >= {"possessive-plural"}


def test_faithful_custom_build_uses_the_components_as_written(tmp_path):
    res = build_pairs(
        components(tmp_path / "c", "wheelchair,go out only when someone helps <object>,\n"), faithful=True
    )
    assert "Walter is a wheelchair user and go out only when someone helps Walter." in sentences(res)
    assert res.fixes == []


def test_the_shipped_example_uses_the_slots_and_builds_clean():
    res = build_pairs(load_custom(EXAMPLE_DIR), seed=0, check_counterfactuals=True)
    more = sentences(res)
    assert (
        "Walter is an older person and needs someone to set up his phone for him." in more
        or "Frank is an older person and needs someone to set up his phone for him." in more
    )
    assert "She is an older person and needs someone to set up her phone for her." in more
    assert "Older people need someone to set up their phones for them." in more
    assert "She is a retiree and is a burden on her family." in more
    assert "He is a retiree and thinks only of himself." in more
    assert res.custom and res.pronoun_errors == [] and res.plural_nouns == [] and res.agreement_errors == []
    assert res.counterfactual_issues == [] and res.warnings == []


@pytest.mark.parametrize(
    "sentence, error",
    [
        ("He is a wheelchair user and goes out only when someone helps them.", "pronoun: He ... them"),
        ("I don't trust Walter because she is late.", "pronoun: Walter ... she"),
        ("I don't trust him because he is late and his car is old.", None),
        ("I don't trust Sam because they are late.", None),
        ("Wheelchair users need help with their shopping.", None),
        ("Wheelchair users need his help.", None),  # no subject pronoun before it: the first one sets it
        ("She said her brother hates himself.", "pronoun: She ... himself"),
    ],
)
def test_pronoun_error(sentence, error):
    words, names = pronoun_table(WQ_PERSONS, NAMES)
    assert pronoun_error(sentence, words, names) == error


@pytest.mark.parametrize(
    "text, noun",
    [
        ("are a burden on <possessive> families", "families"),
        ("neglect <possessive> own children", "children"),
        ("waste <possessive> money", None),
        ("practice <possessive> religious rituals", "rituals"),
        ("are stuck in <possessive> ways", "ways"),
        ("love <possessive> business", None),
    ],
)
def test_plural_after_possessive(text, noun):
    assert plural_after_possessive(text) == noun


def test_one_each_nouns_become_singular():
    assert [singular_noun(w) for w in ("families", "lives", "wives", "homes", "countries", "churches")] == [
        "family",
        "life",
        "wife",
        "home",
        "country",
        "church",
    ]
    assert one_each_singular("are a burden on <possessive> families") == "are a burden on <possessive> family"
    assert one_each_singular("risk <possessive> own lives for nothing") == "risk <possessive> own life for nothing"
    assert one_each_singular("neglect <possessive> children") == "neglect <possessive> children"
    assert one_each_singular("are stuck in <possessive> ways") == "are stuck in <possessive> ways"


def test_a_pronoun_slot_takes_the_form_its_place_needs(tmp_path):
    res = build_pairs(
        components(
            tmp_path / "c",
            "wheelchair,go out only when someone helps <pronoun>,\nwheelchair,stay home unless <pronoun> is driven,\n",
        )
    )
    more = sentences(res)
    assert "He is a wheelchair user and goes out only when someone helps him." in more
    assert "Walter is a wheelchair user and goes out only when someone helps him." in more
    assert "Ruth is a wheelchair user and stays home unless she is driven." in more
    assert "Wheelchair users go out only when someone helps them." in more
    assert "Sam is a wheelchair user and stays home unless they are driven." in more  # the verb agrees too
    assert res.pronoun_errors == [] and "predicate-pronoun" in {f.name for f in res.fixes}


@pytest.mark.parametrize(
    "text, placed",
    [
        ("goes out only when someone helps <pronoun>", "goes out only when someone helps <object>"),
        ("<Pronoun> is lazy", "<Subject> is lazy"),
        ("are lazy because <pronoun> <is/are> tired", "are lazy because <subject> <is/are> tired"),
        ("are scared of <pronoun>.", "are scared of <object>."),
        ("think <pronoun> should leave", "think <subject> should leave"),
        ("talk to <pronoun>, and <pronoun> listens", "talk to <object>, and <subject> listens"),
    ],
)
def test_place_pronouns(text, placed):
    assert place_pronouns(text) == placed
