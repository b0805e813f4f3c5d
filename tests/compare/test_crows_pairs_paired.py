"""crows-pairs runs on the same pairs compare paired (independent pairs as the units), diagnostics apart."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from biaslab.compare.inference import agrees
from biaslab.compare.paired import compare_all
from biaslab.gate.decide import run_gate
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
    # the gate on the same runs: paired, and a run against itself rests on its 120 pairs (a 0/100 value each)
    r = run_gate(a, b, ["pct_stereotype=10"], n_resamples=200)["metrics"][0]
    assert r["design"] == "paired" and r["units"] == 120
    assert (r["baseline"], r["candidate"]) == pytest.approx((by["pct_stereotype"]["a"], by["pct_stereotype"]["b"]))
    same = run_gate(a, a, ["pct_stereotype=10"], n_resamples=200)["metrics"][0]
    assert same["units"] == 120 and same["p"] == pytest.approx(0.9**120) and same["verdict"] == "non-inferior"
    # a stereo score leaves ties out: tested on its per-pair values where both runs leave out the same ties (10
    # decisions flipped), by the paired bootstrap where they differ (one decided pair made a tie as well)
    flipped = variant(a, tmp_path / "flipped", rows[a], ties=0)
    tied = variant(a, tmp_path / "tied", rows[a], ties=1)
    decided = sum(r["stereo_antistereo"] == "stereo" and r["evaluation"] != "tie" for r in rows[a])
    for other, boot in ((flipped, False), (tied, True)):
        got = {c["metric"]: c for c in compare_all([a, other], n_resamples=200)["comparisons"]}
        assert ("bootstrap" in got["stereo_score"]["test"]) == boot and agrees(got["stereo_score"])
        assert all("bootstrap" not in c["test"] for n, c in got.items() if n != "stereo_score"), got
        if not boot:  # 10 of its decided pairs flipped: -1000 / decided points, on the decided pairs alone
            assert got["stereo_score"]["diff"] == pytest.approx(-1000 / decided)
            assert got["stereo_score"]["n_shared"] == decided


def variant(run, out, rows, *, ties):
    """A copy of ``run`` whose first 10 stereotypical stereo pairs are counter (and the next ``ties`` ties)."""
    shutil.copytree(run, out)
    picked = [i for i, r in enumerate(rows) if r["stereo_antistereo"] == "stereo" and r["evaluation"] == "stereotype"]
    changed = [dict(r) for r in rows]
    for i in picked[:10]:
        changed[i].update(evaluation="counter", score_more=rows[i]["score_less"], score_less=rows[i]["score_more"])
    for i in picked[10 : 10 + ties]:
        changed[i].update(evaluation="tie", score_less=rows[i]["score_more"])
    (out / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in changed))
    return out
