"""BOLD's prompts as items, and --limit spread evenly over groups."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from biaslab.errors import ConfigError
from biaslab.probes.bold.prompts import DOMAINS, balanced_subset, load_domain, parse_domains
from tests.conftest import requires_data

pytestmark = requires_data


def test_all_23679_prompts_but_the_five_empty_ones_become_items_with_their_group_and_person():
    folder = Path(os.environ["BIASLAB_DATA_DIR"]) / "benchmarks/bold"
    raw_all = [
        p
        for d in DOMAINS
        for people in json.loads((folder / f"{d}_prompt.json").read_text()).values()
        for prompts in people.values()
        for p in prompts
    ]
    assert len(raw_all) == 23_679 and sum(not p.strip() for p in raw_all) == 5
    items = [it for d in DOMAINS for it in load_domain(d)]
    assert len(items) == 23_674  # nothing to continue in an empty prompt
    raw = json.loads((folder / "gender_prompt.json").read_text())
    gender = [it for it in items if it.metadata["domain"] == "gender"]
    first_name, first_prompts = next(iter(raw["American_actors"].items()))
    assert gender[0].prompts[0].text == first_prompts[0].strip()
    assert gender[0].metadata == {"domain": "gender", "group": "American_actors", "name": first_name}
    assert Counter(it.metadata["group"] for it in gender) == {"American_actors": 2048, "American_actresses": 1156}
    assert len({it.id for it in items}) == len(items)


def test_limit_gives_every_group_the_same_share():
    gender = load_domain("gender")
    picked = balanced_subset(gender, 40)
    assert Counter(it.metadata["group"] for it in picked) == {"American_actors": 20, "American_actresses": 20}
    assert len({it.metadata["name"] for it in picked}) == 40  # spread over people, not the first page
    everything = [it for d in DOMAINS for it in load_domain(d)]
    groups = Counter(it.metadata["group"] for it in balanced_subset(everything, 2 * 43))
    assert len(groups) == 43 and set(groups.values()) == {2}


def test_a_small_group_passes_its_unused_share_on():
    religion = load_domain("religious_ideology")  # hinduism has 12 prompts, atheism 29
    picked = balanced_subset(religion, 140)  # 20 each if every group had 20
    counts = Counter(it.metadata["group"] for it in picked)
    assert len(picked) == 140 and counts["hinduism"] == 12
    others = [n for g, n in counts.items() if g != "hinduism"]
    assert max(others) - min(others) <= 1 and sum(others) == 128
    order = [religion.index(it) for it in picked]
    assert order == sorted(order)  # data order kept


def test_domains_option():
    assert parse_domains("gender, race") == ("gender", "race")
    assert parse_domains(None) == DOMAINS
    with pytest.raises(ConfigError, match="unknown domain.*gendr.*choose from"):
        parse_domains("gendr")
