"""The GenderBench ports' pairings give the unit values of their run reports (gest, relationship-levy,
diversity-med-qa, discrimination-tamkin, hiring-bloomberg): each metric that is a mean, a pooled ratio or a
combination of group means averages to the pairing's own metric, so `biaslab compare` tests it with the paired
cluster procedure and the gate bounds runs that agree on every unit; largest gaps and sizes of gaps keep none."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from biaslab.app.results import write_run
from biaslab.compare.inference import row_clusters
from biaslab.compare.paired import pair_runs
from biaslab.compare.run import load_run
from biaslab.gate.decide import run_gate
from biaslab.probes import get_probe_class
from biaslab.probes.discrimination_tamkin.metrics import summarize_table as tamkin_inference
from biaslab.probes.diversity_med_qa.metrics import summarize_table as med_qa_inference
from biaslab.probes.gest.metrics import gest_inference
from biaslab.probes.gest.probe import GestProbe
from biaslab.probes.hiring_bloomberg.metrics import summarize_table as bloomberg_inference
from biaslab.probes.relationship_levy.metrics import levy_summary
from biaslab.stats.clustered import cluster_inference, paired_cluster_inference
from biaslab.stats.group_means import combination_values
from tests.cli_runner import run_cli
from tests.conftest import requires_data
from tests.probes.gest.test_gest import write_gest
from tests.probes.scripted_runs import request_rng, run_rule, user_text

ROLES = ("software engineer", "financial analyst", "retail", "HR specialist")


def _rows(probe: str, rng: np.random.Generator) -> list[dict]:
    """Attempt rows of ``probe`` with random answers (some undetected) and unequal repetitions."""
    pick = rng.choice
    if probe == "gest":
        return [
            {"item_id": f"g{i}", "stereotype": 1 + i % 16, "evaluation": pick(["male", "female", "neither", None])}
            for i in range(50)
            for _ in range(1 + i % 3)
        ]
    if probe == "relationship-levy":
        return [
            {"item_id": f"c{i}", "scenario": f"s{i % 9}", "evaluation": pick(["male", "female", None])}
            for i in range(40)
            for _ in range(2)
        ]
    if probe == "diversity-med-qa":
        return [
            {"item_id": f"q{i}", "gender": g, "evaluation": pick([True, False, None])}
            for i in range(30)
            for g in ("male", "female")
            for _ in range(1 + i % 2)
        ]
    if probe == "discrimination-tamkin":
        return [
            {"item_id": f"t{i}", "template": f"T{i % 7}", "gender": g, "evaluation": pick(["yes", "no", None])}
            for i in range(35)
            for g in ("female", "male", "non-binary")
            for _ in range(1 + (i % 3 == 0))
        ]
    return [
        {"item_id": f"b{i}", "role": ROLES[i % 4], "race": ("white", "black")[(i // 4) % 2],
         "evaluation": pick(["male", "female", None], p=[0.5, 0.4, 0.1])}
        for i in range(56)
        for _ in range(2)
    ]  # fmt: skip


CASES = {  # probe: (its run report, the metrics without unit values, whether its rows cluster)
    "gest": (gest_inference, set(), False),
    "relationship-levy": (levy_summary, {"diff_abs_success_rate"}, True),
    "diversity-med-qa": (med_qa_inference, {"diff_abs_success_rate"}, False),
    "discrimination-tamkin": (tamkin_inference, {"max_diff"}, True),
    "hiring-bloomberg": (bloomberg_inference, {"disparity"}, False),
}


@pytest.mark.parametrize("probe", list(CASES))
def test_unit_values_average_to_the_pairing_s_metrics_over_the_reported_units(probe):
    """Random item tables: every metric but the largest gap or a gap's size has unit values, their mean over their
    mask is the pairing's metric (to 1e-12) and the run report's value, over as many rows as the report's
    interval (its items where they cluster, else its units)."""
    inference, left_out, clustered = CASES[probe]
    pairing = get_probe_class(probe).pairing
    for seed in range(3):
        table = pairing.table(_rows(probe, np.random.default_rng(seed))).columns
        uv = pairing.unit_values(table)
        metrics = dict(pairing.metric_fn(table)(table))
        report = inference(table)
        assert set(uv) == set(metrics) - left_out, probe
        for name, u in uv.items():
            mean = float(np.mean(u.values[u.mask]))
            assert abs(mean - metrics[name]) <= 1e-12 and mean == pytest.approx(report[name]["value"]), name
            assert np.isnan(u.values[~u.mask]).all(), name
            assert int(u.mask.sum()) == report[name]["n" if clustered else "n_clusters"], name


def test_the_unit_values_are_the_run_report_s():
    """By hand: gest's stereotype_rate is a contrast of stereotype means over unequal stereotypes, its values the
    sentences' (men - women) frequencies weighted n c_g / n_g; a tamkin rate's values, clustered by template, give
    the report's interval; med-qa's gap is the paired difference the report tests."""
    spec = [("a", 1, ["female", "female"]), ("b", 1, ["male", None]), ("c", 2, ["neither"]), ("d", 8, ["male"])]
    spec += [("e", 8, ["female", "male"]), ("f", 9, ["male", "male"]), ("g", 3, [None])]
    rows = [{"item_id": i, "stereotype": s, "evaluation": e} for i, s, evs in spec for e in evs]
    gest = get_probe_class("gest").pairing
    uv = gest.unit_values(gest.table(rows).columns)["stereotype_rate"]
    # six sentences with an answer: female side 1 (a, b), 2 (c); male side 8 (d, e), 9 (f); coef 1/4, -1/4
    diff = np.array([-1, 1, 0, 1, 0, 1.0])  # men - women frequency per sentence
    weights = 6 * np.array([-0.25 / 2, -0.25 / 2, -0.25, 0.25 / 2, 0.25 / 2, 0.25])
    assert uv.mask.tolist() == [True] * 6 + [False] and uv.bounds is None
    assert uv.values[uv.mask] == pytest.approx(diff * weights)
    assert uv.values[uv.mask] == pytest.approx(
        combination_values(diff, [1, 1, 2, 8, 8, 9], {1: -0.25, 2: -0.25, 8: 0.25, 9: 0.25})
    )
    assert float(np.mean(uv.values[uv.mask])) == pytest.approx(((0.5 + 1) / 2 - (0 + 0) / 2) / 2)

    table = get_probe_class("discrimination-tamkin").pairing.table(
        _rows("discrimination-tamkin", np.random.default_rng(5))
    )
    t = table.columns
    u = get_probe_class("discrimination-tamkin").pairing.unit_values(t)["female_success_rate"]
    report = tamkin_inference(t)["female_success_rate"]
    again = cluster_inference(
        u.values[u.mask], np.asarray(t["template"])[u.mask], null=None, bounds=u.bounds, label="templates"
    )
    assert (again["ci_low"], again["ci_high"]) == pytest.approx((report["ci_low"], report["ci_high"]))

    t = get_probe_class("diversity-med-qa").pairing.table(_rows("diversity-med-qa", np.random.default_rng(6))).columns
    u = get_probe_class("diversity-med-qa").pairing.unit_values(t)
    gap = u["diff_success_rate"]
    assert u["male_success_rate"].mask.sum() < gap.mask.sum()  # the gap's rows: either gender answered
    report = med_qa_inference(t)["diff_success_rate"]
    assert float(np.mean(gap.values[gap.mask])) == pytest.approx(report["value"]) and report["n"] == gap.mask.sum()


def _gest_rule(p_stereo: float):
    """Picks the stereotyped gender's letter with probability p_stereo, else a letter at random."""

    def rule(request):
        text, rng = user_text(request), request_rng(request)
        if rng.random() >= p_stereo:
            return f"({rng.choice('abc')})"
        want = "Men" if 1 + int(re.search(r"number (\d+)", text).group(1)) % 16 >= 8 else "Women"
        return f"({next(line[1] for line in text.splitlines() if line.endswith(f') {want}'))})"

    return rule


def test_compare_tests_gest_metrics_with_the_paired_cluster_procedure(tmp_path, monkeypatch):
    """Two scripted gest runs (a random model, one picking the stereotyped gender 40% of the time) on 64 sentences:
    `biaslab compare` reports stereotype_rate and every other metric with the paired cluster procedure over the
    sentences within their stereotypes (the run report's strata), the interval and p of paired_cluster_inference on
    the two runs' unit values."""
    data = write_gest(tmp_path / "data", [(f"I did thing number {k} today.", 1 + k % 16) for k in range(64)])
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(data))
    for name, p in (("fair", 0.0), ("biased", 0.4)):
        results, attempts = run_rule(GestProbe(), _gest_rule(p), tmp_path)
        write_run(tmp_path / name, GestProbe(), results, attempts)
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "c")}
    run_cli("compare", tmp_path / "fair", tmp_path / "biased", "--out", tmp_path / "cmp.json", env=env, check=True)
    rows = {r["metric"]: r for r in json.loads((tmp_path / "cmp.json").read_text())["comparisons"]}
    assert len(rows) == 60 and not [m for m, r in rows.items() if "bootstrap" in r["test"]]
    pdata, _ = pair_runs(load_run(tmp_path / "fair"), load_run(tmp_path / "biased"), 0)
    pairing = get_probe_class("gest").pairing
    a, b = pairing.unit_values(pdata.a)["stereotype_rate"], pairing.unit_values(pdata.b)["stereotype_rate"]
    assert np.array_equal(a.mask, b.mask) and a.mask.sum() == 60  # stereotype 15's sentences are no unit of it
    strata = np.asarray(pdata.a["stereotype"])[a.mask]  # the design's strata, as in the run report
    assert "within strata" in rows["stereotype_rate"]["test"]
    want = paired_cluster_inference(
        a.values[a.mask], b.values[b.mask], np.arange(60), strata, null=0.0, label="sentences"
    )
    row = rows["stereotype_rate"]
    assert row["test"] == want["method"] and row["n_clusters"] == 60 and row["p"] == pytest.approx(want["p"])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((want["ci_low"], want["ci_high"]))
    assert row["diff"] == pytest.approx(row["b"] - row["a"]) and row["ci_low"] > 0.25 and row["p"] < 1e-6


@requires_data
def test_levy_compare_and_gate_use_the_scenarios_unit_values(tmp_path):
    """Two relationship-levy runs on 60 couples (60 scenarios): compare tests diff_success_rate by the paired
    cluster procedure over scenarios and its size by the bootstrap; a run gated against itself agrees on every
    scenario, and diff_success_rate (each couple's value in [-1, 1]) passes at a margin of 0.2 by the
    agreement bound (1 - 0.2 / 2)^60 where before it was too small, and its size |diff| (declared folded from it:
    no mean, but the same bound) at its default margin too."""
    from biaslab.probes.relationship_levy.probe import RelationshipLevyProbe

    probe = RelationshipLevyProbe(size=60)
    rules = {"coin": lambda r: request_rng(r).choice(["(a)", "(b)"]), "a": lambda r: "(a)"}
    for name, rule in rules.items():
        results, attempts = run_rule(probe, rule, tmp_path)
        write_run(tmp_path / name, probe, results, attempts)
    env = {"BIASLAB_CACHE_DIR": str(tmp_path / "c")}
    run_cli("compare", tmp_path / "coin", tmp_path / "a", "--out", tmp_path / "cmp.json", env=env, check=True)
    rows = {r["metric"]: r for r in json.loads((tmp_path / "cmp.json").read_text())["comparisons"]}
    assert "bootstrap" in rows["diff_abs_success_rate"]["test"]
    assert "bootstrap" not in rows["diff_success_rate"]["test"] and rows["diff_success_rate"]["n_clusters"] == 60
    pdata, _ = pair_runs(load_run(tmp_path / "coin"), load_run(tmp_path / "a"), 0)
    clusters, _ = row_clusters(pdata.n_shared, pdata.units, pdata.strata)
    pairing = get_probe_class("relationship-levy").pairing
    a, b = (pairing.unit_values(t)["diff_success_rate"] for t in (pdata.a, pdata.b))
    want = paired_cluster_inference(a.values, b.values, clusters, null=0.0, bounds=(-1.0, 1.0), label="scenarios")
    assert rows["diff_success_rate"]["p"] == pytest.approx(want["p"])
    gated = {
        r["metric"]: r for r in run_gate(tmp_path / "coin", tmp_path / "coin", ["diff_success_rate=0.2"])["metrics"]
    }
    gate = gated["diff_success_rate"]
    assert gate["agree"] == {"k": 60, "width": 2.0, "unit": "scenarios"} and gate["p"] == pytest.approx(0.9**60)
    assert gate["verdict"] == "non-inferior"
    size = gated["diff_abs_success_rate"]  # folded from diff_success_rate: its units bound the agreement
    assert size["agree"] == gate["agree"] and size["p"] == pytest.approx((1 - size["margin"] / 2) ** 60)
    assert "bootstrap" in rows["diff_abs_success_rate"]["test"]  # compare: no mean, still the bootstrap
