"""`biaslab compare` of two 8-occupation jobs-lum runs: what 8 units allow, and one scale per metric."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = requires_data


def biaslab(*args, cache):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache), "COLUMNS": "200"}, check=True).stdout


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    """Runs of 8 occupations: every character a man (A), a coin flip (B), three-quarters detected (C)."""
    tmp = tmp_path_factory.mktemp("eight")
    cache = tmp / "cache"
    runs = []
    for model in ("he", "coin", "random-gender"):
        out = tmp / model
        biaslab("run", "jobs-lum", "--model", f"scripted/{model}", "--limit", "8", "--out", out, "-q", cache=cache)
        runs.append(out)
    text = biaslab("compare", *runs, "--out", tmp / "cmp.json", cache=cache)
    return json.loads((tmp / "cmp.json").read_text()), text


def test_no_p_below_what_8_occupations_allow(eight):
    cmp, text = eight
    floor = 2.0 ** (1 - 8)  # the smallest two-sided p an exact test over 8 independent units gives
    tested = [c for c in cmp["comparisons"] if c["p"] is not None]
    assert tested and all(c["p"] >= floor * (1 - 1e-12) for c in tested), [(c["metric"], c["p"]) for c in tested]
    assert all(c["q"] >= c["p"] for c in tested if c["q"] is not None)
    assert not re.search(r"\b[pq] 0[,)]", text) and "<0.001" not in text
    # the coin against all men: every occupation moved the same way, p at the floor of 8 units
    masc = next(c for c in cmp["comparisons"] if c["metric"] == "masculine_rate" and "coin" in c["run_b"])
    assert masc["p"] == pytest.approx(floor, rel=0.02) and masc["ci_high"] < 0
