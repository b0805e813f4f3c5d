"""The character probes (inventories, gest-creative) and business-vocabulary give compare and the gate the run
report's own unit values: every metric that is a mean of per-row values averages to the pairing's metric on any
table, and a compare of two runs tests those metrics by paired cluster inference, the rest by the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from biaslab.compare.paired import compare_all
from biaslab.probes.business_vocabulary.data import INVENTORIES as WORD_INVENTORIES
from biaslab.probes.business_vocabulary.metrics import business_vocabulary_inference, name_contributions, name_table
from biaslab.probes.business_vocabulary.probe import BusinessVocabularyProbe
from biaslab.probes.gest_creative.metrics import gest_creative_inference
from biaslab.probes.gest_creative.probe import GestCreativeProbe
from biaslab.probes.inventories.metrics import inventories_inference
from biaslab.probes.inventories.probe import InventoriesProbe
from biaslab.probing.characters import item_rates
from biaslab.stats import two_group_inference
from tests.compare.test_crows_pairs_paired import biaslab
from tests.conftest import requires_data


def _characters(rng, n, **columns):
    """A character table of ``n`` items (1-3 attempts each: men, women, non-binary and unread characters)."""
    attempts = rng.integers(1, 4, n).astype(float)
    male = np.array([rng.integers(0, a + 1) for a in attempts], dtype=float)
    female = np.array([rng.integers(0, a - m + 1) for a, m in zip(attempts, male)], dtype=float)
    nonbinary = np.array([rng.integers(0, a - m - f + 1) for a, m, f in zip(attempts, male, female)], dtype=float)
    ids = np.array([f"i{i}" for i in range(n)], dtype=object)
    return {"male": male, "female": female, "attempts": attempts, "nonbinary": nonbinary, "item_id": ids, **columns}


def _inventory_table(rng, n, inventories=("bsri", "epaq", "gaucher"), genders=("male", "female")):
    cells = [(i, g) for i in inventories for g in genders]  # every list, in random order
    inv, gender = (np.array(c, dtype=object) for c in zip(*(cells[k % len(cells)] for k in rng.permutation(n))))
    table = _characters(rng, n, inventory=inv, gender=gender)
    table["stratum"] = np.array([f"{i}/{g}" for i, g in zip(inv, gender)], dtype=object)
    return table


def _averages(pairing, table, report, cluster=None):
    """The metrics with unit values, each checked to be the mean of its values over its mask, the run report's
    value, over as many units (rows, or ``cluster`` labels) as the report's interval; and those without (every
    undefined metric among them)."""
    values = pairing.unit_values(table)
    metrics = pairing.metric_fn(table)(table)
    reported = report(table)
    for name, uv in values.items():
        assert uv.values.shape == uv.mask.shape == (len(table["item_id"]),), name
        mean = float(np.mean(uv.values[uv.mask]))
        assert abs(mean - metrics[name]) < 1e-9 and mean == pytest.approx(reported[name]["value"]), name
        units = int(uv.mask.sum()) if cluster is None else len(set(table[cluster][uv.mask].tolist()))
        assert units == reported[name].get("n_clusters", reported[name]["n"]), name
    lack = {n for n in metrics if n not in values}
    assert {n for n, v in metrics.items() if np.isnan(v)} <= lack
    return set(values), lack


def test_inventories_unit_values_average_to_every_metric_but_disparity():
    rng = np.random.default_rng(3)
    probe = InventoriesProbe.pairing
    for n in (12, 40, 90):
        have, lack = _averages(probe, _inventory_table(rng, n), inventories_inference)
        assert lack == {"disparity"} and len(have) == 11
    # an inventory whose descriptions are all unread, one without female-coded descriptions: their rates and gaps
    # are undefined (no values), the means over inventories leave them out
    table = _inventory_table(rng, 30, genders=("male", "female"))
    table["male"][table["inventory"] == "gaucher"] = table["female"][table["inventory"] == "gaucher"] = 0
    keep = ~((table["inventory"] == "epaq") & (table["gender"] == "female"))
    table = {k: v[keep] for k, v in table.items()}
    have, lack = _averages(probe, table, inventories_inference)
    assert lack == {"disparity", "masculine_rate:gaucher", "stereotype_rate:gaucher", "stereotype_rate:epaq"}
    assert {"masculine_rate", "stereotype_rate", "masculine_rate:epaq"} <= have


def test_an_inventorys_gap_units_carry_the_welch_variance_of_its_report():
    """Stratified by coded gender (the pairing's strata), the gap's unit values have the variance of the run
    report's Welch test of the two lists' means."""
    rng = np.random.default_rng(5)
    table = _inventory_table(rng, 60, inventories=("bsri",))
    uv = InventoriesProbe.pairing.unit_values(table)["stereotype_rate:bsri"]
    rates = item_rates(table)
    strata, n = table["gender"][uv.mask], int(uv.mask.sum())
    variance = sum(np.var(uv.values[uv.mask][strata == g], ddof=1) * np.sum(strata == g) / n**2 for g in set(strata))
    ok = np.isfinite(rates)
    report = two_group_inference(
        rates[ok & (table["gender"] == "male")], rates[ok & (table["gender"] == "female")], null=0.0
    )
    assert variance == pytest.approx(report["se"] ** 2, rel=1e-12)


def test_gest_creative_unit_values_average_to_every_metric_but_disparity():
    rng = np.random.default_rng(4)
    for n in (10, 48, 120):
        # only disparity, and the rate of a stereotype without a read character (undefined), have no values
        table = _characters(rng, n, stereotype=rng.integers(1, 17, n))
        metrics = GestCreativeProbe.pairing.metric_fn(table)(table)
        have, lack = _averages(GestCreativeProbe.pairing, table, gest_creative_inference)
        assert lack == {"disparity"} | {m for m, v in metrics.items() if np.isnan(v)}
        assert {"masculine_rate", "stereotype_rate", "nonbinary_rate", "undetected_rate_attempts"} <= have


def _letters(rng, prompts_of):
    rows = []
    for k, prompts in enumerate(prompts_of):
        for doc in ("reference", "motivation", "review")[:prompts]:
            for _ in range(2):
                silent = rng.random() < 0.15
                counts = {inv: [0, 0] if silent else rng.integers(0, 4, 2).tolist() for inv in WORD_INVENTORIES}
                rows.append({"item_id": f"{doc}/n{k}", "name": f"n{k}", "gender": ("female", "male")[k % 2],
                             "race": "white", "template": doc, "evaluation": counts})  # fmt: skip
    return rows


def test_business_vocabulary_unit_values_are_prompts_averaging_to_every_metric_and_names_to_the_reports():
    rng = np.random.default_rng(6)
    pairing = BusinessVocabularyProbe.pairing
    for prompts_of in ([3] * 10, [1, 2, 3, 3, 2, 1, 3]):  # names with every document, and with some
        table = pairing.table(_letters(rng, prompts_of)).columns
        have, lack = _averages(pairing, table, business_vocabulary_inference, "name")
        assert lack == set() and len(have) == 3 * 7 + 2
    # every name with its three prompts: a name's prompts average to its contribution in the run report
    names = name_table(table := pairing.table(_letters(rng, [3] * 8)).columns)
    values = pairing.unit_values(table)
    for g in ("male", "female"):
        here = names["gender"] == g
        for inv in WORD_INVENTORIES:
            m, f = names[f"m:{inv}"][here], names[f"f:{inv}"][here]
            uv = values[f"mean_{g}:{inv}"]
            by_name = [np.mean(uv.values[table["name"] == x]) for x in names["name"][here]]
            assert np.allclose(by_name, name_contributions(m, m + f), rtol=0, atol=1e-12)
    # a run without women's names: their smoothed rate is 1/2, no mean of rows
    male_only = pairing.table([r for r in _letters(rng, [3] * 4) if r["gender"] == "male"]).columns
    assert {"mean_female", "mean_diff", "mean_female:bsri"}.isdisjoint(pairing.unit_values(male_only))


@requires_data
def test_compare_tests_inventories_metrics_on_their_unit_values(tmp_path):
    runs = []
    for model in ("coin", "he"):
        out = tmp_path / model
        biaslab("run", "inventories", "--model", f"scripted/{model}", "--limit", "24", "--out", out, "-q",
                cache=tmp_path / "c")  # fmt: skip
        runs.append(out)
    cmp = compare_all(runs, n_resamples=200)
    by = {c["metric"]: c for c in cmp["comparisons"]}
    assert cmp["pairs"][0]["design"] == "paired" and len(by) == 12
    assert "bootstrap" in by["disparity"]["test"]
    for name, c in by.items():
        assert (name == "disparity") == ("bootstrap" in c["test"]), (name, c["test"])
    gap = by["stereotype_rate:bsri"]
    assert gap["n_shared"] == 8 and gap["diff"] == pytest.approx(gap["b"] - gap["a"])
