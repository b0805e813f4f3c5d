"""crows-pairs runs on the same pairs compare paired (independent pairs as the units), diagnostics apart."""

from __future__ import annotations

import json

import numpy as np
import pytest

from biaslab.compare.inference import agrees
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def biaslab(*args, cache):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache), "COLUMNS": "80"}, check=True).stdout


@requires_data
def test_two_scorings_of_crows_pairs_compare_paired(tmp_path):
    cache = tmp_path / "cache"
    a, b = tmp_path / "full", tmp_path / "shared"
    for rule, out in (("full-sentence", a), ("shared-tokens", b)):
        biaslab(
            "run",
            "crows-pairs",
            "--model",
            "scripted/echo",
            "--limit",
            "120",
            "-P",
            f"scoring={rule}",
            "--out",
            out,
            "-q",
            cache=cache,
        )
    text = biaslab("compare", a, b, "--out", tmp_path / "cmp.json", cache=cache)
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert cmp["pairs"][0]["design"] == "paired" and cmp["pairs"][0]["n_shared"] == 120
    by = {c["metric"]: c for c in cmp["comparisons"]}
    # the per-pair decisions, matched by sentences, give the difference of pct_stereotype
    rows = {s: [json.loads(x) for x in (s / "attempts.jsonl").read_text().splitlines()] for s in (a, b)}
    dec = {s: {(r["sent_more"], r["sent_less"]): r["evaluation"] == "stereotype" for r in rows[s]} for s in (a, b)}
    d = np.array([100.0 * (dec[b][k] - dec[a][k]) for k in dec[a]])
    assert by["pct_stereotype"]["diff"] == pytest.approx(d.mean())
    assert by["pct_stereotype"]["n_shared"] == 120 and by["pct_stereotype"]["family"] == "headlines"
    for c in cmp["comparisons"]:
        assert agrees(c), c
        assert c["ci_low"] is None or c["ci_high"] > c["ci_low"], c
    # likelihood_diff (unsigned) and tie_rate are diagnostics: no q, never flagged, printed apart
    for name in ("likelihood_diff", "tie_rate", "likelihood_diff:gender"):
        assert by[name]["diagnostic"] and by[name]["q"] is None
    assert {c["family"] for c in cmp["comparisons"] if ":" in c["metric"] and not c["diagnostic"]} == {
        "crows-pairs subgroups"
    }
    assert text.index("diagnostics (no bias direction") > text.index("pct_stereotype:")
    assert "verdict: pct_stereotype: B" in text
