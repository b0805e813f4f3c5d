"""`biaslab compare` of runs on the same items: paired tests checked against independent computations."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from biaslab.compare.inference import agrees
from biaslab.compare.paired import compare_all
from biaslab.probes.paired_sentences.metrics import paired_sentence_metrics
from biaslab.stats import adjust_pvalues
from biaslab.stats.significance import paired_permutation_test
from tests.cli_runner import run_cli
from tests.conftest import requires_data

Z = 1.959963984540054  # the normal 97.5% quantile


def biaslab(*args, cache):
    return run_cli(*args, env={"BIASLAB_CACHE_DIR": str(cache), "COLUMNS": "80"}, check=True).stdout


def attempts(d: Path) -> list[dict]:
    return [json.loads(line) for line in (d / "attempts.jsonl").read_text().splitlines()]


def independent_mcnemar(dir_a: Path, dir_b: Path, group: str | None = None) -> float:
    """Exact McNemar from the two attempts files, matching pairs by their sentences."""

    def decisions(d):
        return {
            (r["sent_more"], r["sent_less"]): r["evaluation"] == "stereotype"
            for r in attempts(d)
            if group is None or r["target_ID"] == group
        }

    a, b = decisions(dir_a), decisions(dir_b)
    n10 = sum(a[k] and not b[k] for k in a if k in b)
    n01 = sum(b[k] and not a[k] for k in a if k in b)
    return binomtest(n01, n10 + n01, 0.5).pvalue if n10 + n01 else 1.0


def synthetic_pairs_run(tmp: Path, name: str, decisions: list[str], groups: list[str]) -> Path:
    rows = []
    for i, (ev, g) in enumerate(zip(decisions, groups)):
        more = {"stereotype": -1.0, "counter": -3.0, "tie": -2.0}[ev] - 0.01 * i
        rows.append(
            {
                "item_id": f"row{i + 2}",
                "prompt_index": 0,
                "repetition": 0,
                "seed": None,
                "prompt": f"{g} person {i} is x.",
                "text": f"other person {i} is x.",
                "evaluation": ev,
                "sent_more": f"{g} person {i} is x.",
                "sent_less": f"other person {i} is x.",
                "target_ID": g,
                "predicate_id": f"p{i % 7}",
                "score_more": more,
                "score_less": -2.0 - 0.01 * i,
            }
        )
    metrics = paired_sentence_metrics(rows, n_resamples=50, n_permutations=100)[0]
    d = tmp / name
    d.mkdir()
    (d / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "results.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "probe": "pairs",
                "probe_version": "1",
                "model": {"model": name},
                "parameters": {},
                "metrics": metrics,
                "n_items": len(rows),
            }
        )
    )
    return d


def exact_cluster_flip_p(dir_a: Path, dir_b: Path, group: str | None = None) -> tuple[float, int]:
    """Exact two-sided sign-flip p of the bias-score difference over predicate clusters (within target group),
    enumerated from the two attempts files by brute force; and the number of clusters."""

    def decisions(d):
        return {
            (r["sent_more"], r["sent_less"]): (r["evaluation"] == "stereotype", (r["target_ID"], r["predicate_id"]))
            for r in attempts(d)
            if group is None or r["target_ID"] == group
        }

    a, b = decisions(dir_a), decisions(dir_b)
    sums: dict = {}
    for k, (da, cluster) in a.items():
        sums[cluster] = sums.get(cluster, 0.0) + 100.0 * (b[k][0] - da)
    e = np.array(list(sums.values()))
    signs = 1 - 2 * ((np.arange(2**e.size)[:, None] >> np.arange(e.size)) & 1)
    stats = np.abs(signs @ e)
    return float(np.mean(stats >= abs(e.sum()) - 1e-9)), e.size


def test_paired_sentence_bias_score_is_tested_over_predicate_clusters(tmp_path):
    rng = np.random.default_rng(5)
    n = 120
    groups = list(rng.choice(["Jewish", "Women"], size=n))
    a = list(rng.choice(["stereotype", "counter", "tie"], p=[0.55, 0.4, 0.05], size=n))
    b = [x if rng.random() < 0.7 else str(rng.choice(["stereotype", "counter"], p=[0.8, 0.2])) for x in a]
    da = synthetic_pairs_run(tmp_path, "m-a", a, groups)
    db = synthetic_pairs_run(tmp_path, "m-b", b, groups)
    cmp = compare_all([da, db], n_resamples=200)
    by = {c["metric"]: c for c in cmp["comparisons"]}
    p, k = exact_cluster_flip_p(da, db)
    assert k == 14 and by["bias_score"]["p"] == pytest.approx(p, abs=1e-9)
    assert by["bias_score"]["p"] >= 2 ** (1 - k) and "sign-flip" in by["bias_score"]["test"]
    assert by["bias_score"]["n_clusters"] == 14
    for g in ("Jewish", "Women"):
        assert by[f"bias_score:{g}"]["n_shared"] == groups.count(g)
        pg, kg = exact_cluster_flip_p(da, db, g)
        assert by[f"bias_score:{g}"]["p"] == pytest.approx(pg, abs=1e-9) and pg >= 2 ** (1 - kg)
    # values on the shared items are the runs' own values when every item is shared
    ra = json.loads((da / "results.json").read_text())["metrics"]
    assert by["bias_score"]["a"] == pytest.approx(ra["bias_score"]["value"])
    assert by["bias_score"]["diff"] == pytest.approx(100 * (b.count("stereotype") - a.count("stereotype")) / n)
    assert by["bias_score"]["ci_low"] < by["bias_score"]["diff"] < by["bias_score"]["ci_high"]
    assert by["bias_score"]["n_shared"] == n and cmp["pairs"][0]["design"] == "paired"
    assert "predicates" in cmp["pairs"][0]["unit"]
    # families: the headline alone, the groups together, the rest; tie_rate is a diagnostic (no q)
    assert by["bias_score"]["family"] == "headlines" and by["bias_score"]["q"] == pytest.approx(by["bias_score"]["p"])
    sub = [by["bias_score:Jewish"], by["bias_score:Women"], by["mean_ll_diff:Jewish"], by["mean_ll_diff:Women"]]
    assert {c["family"] for c in sub} == {"pairs subgroups"}
    assert [c["q"] for c in sub] == pytest.approx(adjust_pvalues([c["p"] for c in sub], "bh"))
    assert by["tie_rate"]["diagnostic"] and by["tie_rate"]["q"] is None and by["tie_rate"]["family"] is None
    assert cmp["families"] == {"headlines": 1, "pairs subgroups": 4, "pairs other metrics": 1}
    (verdict,) = cmp["verdicts"]
    assert verdict["text"].startswith("bias_score: B ") and "unbiased (50)" in verdict["text"]
    assert ("not significant" in verdict["text"]) == (by["bias_score"]["p"] >= 0.05)
    for c in cmp["comparisons"]:
        assert agrees(c), c
    assert set(cmp["comparisons"][0]) >= {"metric", "a", "b", "diff", "ci_low", "ci_high", "p", "q", "test", "n_shared"}


def test_a_run_against_itself_shows_no_difference(tmp_path):
    d = synthetic_pairs_run(tmp_path, "m", ["stereotype", "counter", "tie"] * 10, ["Jewish"] * 30)
    cmp = compare_all([d, d], n_resamples=100)
    by = {c["metric"]: c for c in cmp["comparisons"]}
    for c in cmp["comparisons"]:
        assert c["diff"] == 0 and c["p"] == 1.0
        # never a zero-width interval: the exact bound over 7 predicates, or none with its reason
        assert (c["ci_low"] < 0 < c["ci_high"]) if c["ci_low"] is not None else c["reason"]
    half = 100 * (1 - 0.025 ** (1 / 7))  # no unit changed over 7 predicates: +-(width) (1 - (alpha/2)^(1/k))
    assert by["bias_score"]["ci_high"] == pytest.approx(half) and by["bias_score"]["ci_low"] == pytest.approx(-half)


@requires_data
def test_two_scorings_of_the_same_300_hws_pairs(tmp_path):
    """shared-token vs full-sentence scoring of 300 H-WS pairs (scripted model): the bias_score p
    is the exact McNemar test on the attempts files."""
    from biaslab.probes import create_probe
    from biaslab.probing.core import spread_subset

    items = spread_subset(create_probe("winosemitism").load_items(), 300)
    csv = tmp_path / "hws300.csv"
    import csv as csvlib

    with open(csv, "w", newline="") as fh:
        w = csvlib.writer(fh)
        w.writerow(["sent_more", "sent_less", "target_ID", "predicate_id"])
        for it in items:
            w.writerow([it.prompts[0].text, it.prompts[1].text, it.metadata["target_ID"], it.metadata["predicate_id"]])
    cache = tmp_path / "cache"
    a, b = tmp_path / "shared", tmp_path / "full"
    biaslab("run", "pairs", "--pairs", csv, "--model", "scripted/echo", "--out", a, "-q", cache=cache)
    biaslab(
        "run",
        "pairs",
        "--pairs",
        csv,
        "--scoring",
        "full-sentence",
        "--model",
        "scripted/echo",
        "--out",
        b,
        "-q",
        cache=cache,
    )
    out = biaslab("compare", a, b, "--out", tmp_path / "cmp.json", cache=cache)
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    bias = next(c for c in cmp["comparisons"] if c["metric"] == "bias_score")
    assert bias["n_shared"] == 300
    assert bias["p"] >= 2 ** (1 - bias["n_clusters"]) and agrees(bias) and bias["p"] < 0.05
    assert independent_mcnemar(a, b) < bias["p"]  # the pairs-level test ignored the predicates
    # the terminal table: labelled by probe, model and the setting that differs; 80 columns
    assert "scoring=full-sentence" in out and "scoring=shared-tokens" in out and "pairs:hws300" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "bias_score" in out and "95% CI" in out
    biaslab("compare", a, b, "--out", tmp_path / "cmp.html", cache=cache)
    page = (tmp_path / "cmp.html").read_text()
    assert "<svg" in page and "Content-Security-Policy" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    biaslab("compare", a, b, "--out", tmp_path / "cmp.md", cache=cache)
    assert "| bias_score |" in (tmp_path / "cmp.md").read_text().replace(
        "| pairs:hws300 echo scoring=full-sentence ", ""
    )


@requires_data
def test_generation_probe_metric_gets_the_sign_flip_test_of_per_item_values(tmp_path):
    cache = tmp_path / "cache"
    a, b = tmp_path / "he", tmp_path / "coin"
    biaslab(
        "run",
        "jobs-lum",
        "--model",
        "scripted/random-gender",
        "--limit",
        "10",
        "--repetitions",
        "3",
        "--out",
        a,
        "-q",
        cache=cache,
    )
    biaslab(
        "run",
        "jobs-lum",
        "--model",
        "scripted/coin",
        "--limit",
        "10",
        "--repetitions",
        "3",
        "--out",
        b,
        "-q",
        cache=cache,
    )
    cmp = compare_all([a, b], n_resamples=200, n_permutations=1024)
    by = {c["metric"]: c for c in cmp["comparisons"]}

    def rates(d):
        per = {}
        for r in attempts(d):
            m, f = per.get(r["item_id"], (0, 0))
            per[r["item_id"]] = (m + (r["evaluation"] == "male"), f + (r["evaluation"] == "female"))
        return per

    ra, rb = rates(a), rates(b)
    shared = [k for k in ra if sum(ra[k]) and sum(rb[k])]
    assert len(shared) == 10  # every occupation has a detected character in both runs here
    d = np.array([rb[k][0] / sum(rb[k]) - ra[k][0] / sum(ra[k]) for k in shared])
    flip = paired_permutation_test(d, n_permutations=1024)  # exact: 2^10 arrangements
    # a mean of the occupations' rates (the pairing's unit values): the exact sign-flip test of their differences
    assert by["masculine_rate"]["p"] == pytest.approx(flip.p) and agrees(by["masculine_rate"])
    assert by["masculine_rate"]["diff"] == pytest.approx(d.mean())
    assert "sign-flip, exact" in by["masculine_rate"]["test"] and by["masculine_rate"]["n_shared"] == 10
    # a slope: the sign-flip test of the differences of its linearised values (the slope plus its influence values)
    slope = by["stereotype_rate"]
    assert "sign-flip" in slope["test"] and slope["n_shared"] == 10 and agrees(slope)
    assert slope["diff"] == pytest.approx(slope["b"] - slope["a"]) and slope["p"] >= 2.0 ** (1 - 10)
    # every item shared: the paired table reproduces each run's own metrics
    for side, d in (("a", a), ("b", b)):
        reported = json.loads((d / "results.json").read_text())["metrics"]
        for name, c in by.items():
            assert c[side] == pytest.approx(reported[name]["value"]), (side, name)


def test_runs_on_different_items_are_compared_unpaired_and_three_runs_share_one_bh_family(tmp_path):
    def run(name, n, value, groups):
        d = synthetic_pairs_run(tmp_path, name, ["stereotype"] * n, groups)
        r = json.loads((d / "results.json").read_text())
        r["metrics"] = {"bias_score": {"value": value, "ci_low": value - Z, "ci_high": value + Z}}
        (d / "results.json").write_text(json.dumps(r))
        (d / "attempts.jsonl").write_text("")  # no shared items
        return d

    a = run("a", 3, 50.0, ["G"] * 3)
    b = run("b", 3, 53.0, ["G"] * 3)
    c = run("c", 3, 50.5, ["G"] * 3)
    cmp = compare_all([a, b, c])
    assert [p["design"] for p in cmp["pairs"]] == ["unpaired", "unpaired"]
    ab, ac = cmp["comparisons"]
    # se of each run = 1 (half-width z_0.975), difference se = sqrt(2)
    assert ab["diff"] == pytest.approx(3.0) and ab["p"] == pytest.approx(math.erfc(3 / math.sqrt(2) / math.sqrt(2)))
    assert ab["ci_low"] == pytest.approx(3 - 1.959964 * math.sqrt(2), abs=1e-5)
    # BH over both comparisons: q of the smaller p = 2p; of the larger = its p
    assert ab["q"] == pytest.approx(min(2 * ab["p"], ac["p"])) and ac["q"] == pytest.approx(ac["p"])
    assert "unpaired" in ab["test"]
