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
    # the coin against all men: each occupation's rate 1 in A, 0 or 1 in B; those that moved all moved down, and
    # the exact sign-flip test of the occupations' differences is at the floor of those that moved (not of all 8)
    masc = next(c for c in cmp["comparisons"] if c["metric"] == "masculine_rate" and "coin" in c["run_b"])
    moved = round(-masc["diff"] * 8)
    assert 0 < moved < 8 and masc["p"] == pytest.approx(2.0 ** (1 - moved)) and "sign-flip" in masc["test"]
    assert masc["ci_low"] < masc["diff"] < 0 <= masc["ci_high"] + 1e-12


def test_table_and_verdicts_read_each_metric_on_one_scale(eight):
    from biaslab.compare.render import families_text, row_cells

    cmp, text = eight
    rows = {c["metric"]: c for c in cmp["comparisons"] if "coin" in c["run_b"]}
    verdict = next(v["text"] for v in cmp["verdicts"] if v["metric"] == "masculine_rate" and "coin" in v["run_b"])
    # masculine_rate is read in points (its headline's scale 100): -0.5 as a share is -50.0 in both places
    assert rows["masculine_rate"]["scale"] == 100 and rows["stereotype_rate"]["scale"] == 1
    assert verdict.startswith("masculine_rate: B -50.0 vs A (100.0 -> 50.0)")
    cells = row_cells(rows["masculine_rate"])
    assert cells[1:4] == ["100.0", "50.0", "-50.0"]
    lo, hi = rows["masculine_rate"]["ci_low"] * 100, rows["masculine_rate"]["ci_high"] * 100
    assert f"[{lo:.1f}, {hi:.1f}]" in verdict  # the same interval in points in both (the table writes 0 as 0.000)
    assert [float(x) for x in cells[4].strip("[]").split(",")] == pytest.approx([lo, hi], abs=0.05)
    line = next(ln for ln in text.splitlines() if ln.startswith("masculine_rate ") and "-50.0" in ln)
    assert "100.0" in line and "-0.500" not in line
    assert "masculine_rate, disparity: values x 100" in text
    # jobs-lum shows no diagnostic rows, so the footnote does not speak of any
    assert not any(c["diagnostic"] for c in cmp["comparisons"]) and "diagnostic" not in text
    marked = {**cmp, "comparisons": [{**cmp["comparisons"][-1], "diagnostic": True, "q": None}]}
    assert "Rows marked diagnostic" in families_text(marked) and row_cells(marked["comparisons"][0])[-1] == "diagnostic"


def test_would_need_lines_say_when_the_occupations_run_out(eight):
    cmp, text = eight
    v = next(v for v in cmp["verdicts"] if v["metric"] == "masculine_rate" and "coin" in v["run_b"])
    need, short = v["n_needed"], v["shortfall"]
    assert need > 339 and short["n_items"] == 339 and short["n_needed"] == need
    assert f"to detect a difference of 3: jobs-lum has 339 occupations; {need:,} would be needed" in v["text"]
    # what all 339 occupations detect: the comparison's own standard error scaled to 339, in points
    row = next(c for c in cmp["comparisons"] if c["metric"] == "masculine_rate" and "coin" in c["run_b"])
    se = (row["ci_high"] - row["ci_low"]) / (2 * 1.959963984540054)
    assert short["detectable"] == pytest.approx((1.959963984540054 + 0.8416212335729143) * se * (8 / 339) ** 0.5)
    assert f"all 339 detect a difference of {100 * short['detectable']:.1f} or more" in v["text"]
    assert short["repetitions"] is None or f"--repetitions {short['repetitions']} would do" in v["text"]
    assert "would be needed" in text
