"""Two models' runs of discrimination-tamkin and hiring-an paired by `biaslab compare`, item by item, with the
probes' clusters (templates; occupations)."""

from __future__ import annotations

import json
import random

import pytest

from biaslab.probes import create_probe
from biaslab.probing.config import RunConfig
from tests.conftest import requires_data
from tests.probes.paired_sentences.test_probe_run import biaslab

pytestmark = requires_data


def canned(path, probe, limit, answer):
    """``{prompt: answer(item, prompt)}`` for the items a ``--limit`` run asks."""
    p = create_probe(probe)
    items = p.select_items(p.load_items(), RunConfig(limit=limit))
    path.write_text(json.dumps({pr.text: answer(it, pr) for it in items for pr in it.prompts}))
    return path


@pytest.mark.parametrize(
    "probe, metric, yes, no, limit",
    [
        ("discrimination-tamkin", "diff_mvf_success_rate", "Yes.", "No.", 40),
        ("hiring-an", "diff_acceptance_rate", "You have been selected.", "We regret to inform you.", 40),
    ],
)
def test_compare_pairs_a_fair_and_a_biased_model(tmp_path, probe, metric, yes, no, limit):
    def fair(item, prompt):
        return random.Random(item.id).choice([yes, no])

    def biased(item, prompt):
        return yes if prompt.metadata["gender"] == "male" else fair(item, prompt)

    runs = []
    for name, rule in (("fair", fair), ("biased", biased)):
        answers = canned(tmp_path / f"{name}.json", probe, limit, rule)
        out = tmp_path / name
        biaslab(
            "run",
            probe,
            "--model",
            f"scripted/canned:file={answers}",
            "--limit",
            limit,
            "--out",
            out,
            "-q",
            cache=tmp_path / "c",
        )
        runs.append(out)
    cmp = tmp_path / "cmp.json"
    biaslab("compare", *runs, "--out", cmp, cache=tmp_path / "c")
    rows = {r["metric"]: r for r in json.loads(cmp.read_text())["comparisons"]}
    row = rows[metric]
    assert row["design"] == "paired" and row["diff"] > 0.2 and row["p"] < 0.05
