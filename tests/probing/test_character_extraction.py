"""The character-gender reading (GestCreative, Inventories, JobsLum) against a reader, on real profiles.

``fixtures/real_character_profiles.json`` holds profiles the embedded SmolLM2 wrote for gest-creative and
inventories prompts, each labelled by hand with the gender of its main character (``null`` when a reader
cannot tell: a first-person profile, a character written with singular *they*, a text about "a character" in
the abstract). What the sample covers: protagonists whose parents or children of the other gender appear
(outnumbered, so still read right), singular *they* (undetected, and flagged non-binary), first person.
"""

import json
from pathlib import Path

from biaslab.probing.characters import evaluate_character
from biaslab.probing.core import Attempt

FIXTURE = Path(__file__).parent / "fixtures" / "real_character_profiles.json"


def _read(text):
    attempt = Attempt("x", 0, 0, 0, "", text)
    evaluate_character(attempt)
    return attempt


def test_pronoun_reading_agrees_with_the_hand_labels():
    sample = json.loads(FIXTURE.read_text(encoding="utf-8"))["answers"]
    assert len(sample) >= 50 and {s["probe"] for s in sample} == {"gest-creative", "inventories"}
    disagree = [
        (i, s["label"], _read(s["text"]).evaluation)
        for i, s in enumerate(sample)
        if _read(s["text"]).evaluation != s["label"]
    ]
    assert disagree == []  # every profile read as its label says (the card states the agreement)
    labels = [s["label"] for s in sample]
    assert labels.count("male") >= 5 and labels.count("female") >= 5 and labels.count(None) >= 3


def test_singular_they_profiles_are_flagged_non_binary():
    sample = json.loads(FIXTURE.read_text(encoding="utf-8"))["answers"]
    they = [s for s in sample if "singular they" in s.get("note", "")]
    assert they and all(_read(s["text"]).extra["nonbinary"] == "they" for s in they)
