"""`biaslab ppi`'s analysis: the join, imputation of missing judge scores, groups and warnings."""

import numpy as np
import pytest

from biaslab.errors import DataError
from biaslab.ppi.analysis import analyse
from biaslab.ppi.inputs import ScoreTable
from biaslab.stats.ppi import group_differences, ppi_mean


def tables(n=60, n_gold=30, seed=0, groups=None):
    rng = np.random.default_rng(seed)
    y = rng.uniform(0, 1, n)
    f = np.clip(0.1 + 0.7 * y + rng.normal(0, 0.1, n), 0, 1)
    ids = tuple(f"t{i}" for i in range(n))
    gold = np.sort(rng.choice(n, n_gold, replace=False))
    pred = ScoreTable("pred.csv", "csv", "score", ids, f, groups)
    gold_t = ScoreTable("gold.csv", "csv", "score", tuple(ids[i] for i in gold), y[gold])
    return pred, gold_t, y, f, gold


def test_overall_estimate_is_the_ppi_mean_of_the_joined_scores():
    pred, gold, y, f, g = tables()
    res = analyse(pred, gold)
    mask = np.zeros(y.size, dtype=bool)
    mask[g] = True
    e = ppi_mean(y[mask], f[mask], f[~mask])
    assert res["estimate"] == pytest.approx(e.ppi.estimate) and res["ci_low"] == pytest.approx(e.ppi.ci_low)
    assert res["ci_high"] == pytest.approx(e.ppi.ci_high) and res["lambda"] == pytest.approx(e.lam)
    assert res["classical"]["ci_low"] == pytest.approx(e.classical.ci_low)
    assert (res["n_pred"], res["n_gold"], res["n_unlabelled"], res["n_pred_imputed"]) == (60, 30, 30, 0)
    assert res["effective_n"] == pytest.approx(e.effective_n) and res["effective_n"] > 30
    assert res["effective_n_gain"] == pytest.approx(e.effective_n - 30) and res["width_ratio"] < 1
    assert res["gold_judge_r"] > 0.8 and res["warnings"] == [] and res["groups"] == [] and res["by"] is None
    assert res["method"].startswith("PPI++") and res["target"] == "items"
    fixed = analyse(pred, gold, lam=1.0)
    assert fixed["lambda"] == 1.0 and "fixed lambda = 1" in fixed["method"]
    assert fixed["estimate"] == pytest.approx(np.mean(f[~mask]) + np.mean(y[mask] - f[mask]))


def test_items_without_a_judge_score_get_the_judge_mean():
    pred, gold, y, f, g = tables()
    f_missing = f.copy()
    f_missing[[0, 1, 2]] = np.nan
    res = analyse(ScoreTable("pred.csv", "csv", "score", pred.ids, f_missing), gold)
    imputed = f.copy()
    imputed[[0, 1, 2]] = np.mean(f[3:])
    mask = np.zeros(y.size, dtype=bool)
    mask[g] = True
    assert res["estimate"] == pytest.approx(ppi_mean(y[mask], imputed[mask], imputed[~mask]).ppi.estimate)
    assert res["n_pred_imputed"] == 3 and "3 judged item(s) had no usable judge score" in res["warnings"][0]
    nothing = ScoreTable("pred.csv", "csv", "score", pred.ids, np.full(y.size, np.nan))
    with pytest.raises(DataError, match="no item has a usable judge score"):
        analyse(nothing, gold)


def test_join_errors():
    pred, gold, *_ = tables()
    stranger = ScoreTable("gold.csv", "csv", "score", gold.ids[:-2] + ("zz1", "zz2"), gold.scores)
    with pytest.raises(DataError, match=r"2 of the 30 GOLD id\(s\) are not in PRED \(zz1, zz2\)"):
        analyse(pred, stranger)
    few = ScoreTable("gold.csv", "csv", "score", gold.ids[:9], gold.scores[:9])
    with pytest.raises(DataError, match="too few gold items in GOLD .*: 9 with a human score, at least 10"):
        analyse(pred, few)
    assert analyse(pred, few, min_gold=5)["n_gold"] == 9


def test_every_item_rated_by_people():
    pred, _, y, f, _ = tables(n=20, n_gold=20)
    gold = ScoreTable("gold.csv", "csv", "score", pred.ids, y)
    res = analyse(pred, gold)
    assert res["estimate"] == pytest.approx(np.mean(y)) and res["ci_low"] == res["ci_high"] == res["estimate"]
    assert res["lambda"] == 0.0 and "known exactly" in res["warnings"][0]
    pop = analyse(pred, gold, target="population")
    # humans only, 20 gold items: t_0.975(19) = 2.093024
    assert pop["ci_high"] - pop["ci_low"] == pytest.approx(2 * 2.093024054408 * np.std(y, ddof=1) / np.sqrt(20))


def test_a_gold_set_chosen_by_score_is_flagged():
    pred, _, y, f, _ = tables(n=200, n_gold=30)
    top = np.argsort(-f)[:30]  # the judge's 30 highest-scored items: not a random sample
    gold = ScoreTable("gold.csv", "csv", "score", tuple(pred.ids[i] for i in top), y[top])
    res = analyse(pred, gold)
    assert res["gold_selection_p"] < 0.001 and any("drawn at random" in w for w in res["warnings"])


def test_groups_and_their_differences():
    n = 90
    labels = tuple(["b", "a", "c"][i % 3] for i in range(n))
    pred, gold, y, f, g = tables(n=n, n_gold=45, groups=labels)
    res = analyse(pred, gold, by="model")
    assert [r["group"] for r in res["groups"]] == ["a", "b", "c"]
    is_gold = np.zeros(n, dtype=bool)
    is_gold[g] = True
    per = {}
    for row in res["groups"]:
        m = np.array(labels) == row["group"]
        per[row["group"]] = e = ppi_mean(y[m & is_gold], f[m & is_gold], f[m & ~is_gold])
        assert row["estimate"] == pytest.approx(e.ppi.estimate) and row["n_pred"] == 30
    expected = group_differences(per)
    assert [(d["a"], d["b"]) for d in res["differences"]] == [("a", "b"), ("a", "c"), ("b", "c")]
    for d, e in zip(res["differences"], expected):
        assert d["estimate"] == pytest.approx(e.ppi.estimate) and d["p_holm"] == pytest.approx(e.p_holm)
        assert d["ci_low"] == pytest.approx(e.ppi.ci_low) and d["classical"]["p_holm"] == pytest.approx(
            e.classical_p_holm
        )
    assert "Holm" in res["correction"] and "Bonferroni" in res["correction"]
    assert "3 pairwise differences" in res["correction"]
    with pytest.raises(DataError, match=r"too few gold items in group model='a' \(30 judged\)"):
        analyse(pred, gold, by="model", min_gold=20)


def test_groups_from_a_separate_mapping():
    pred, gold, *_ = tables()
    plain = ScoreTable(pred.source, pred.format, pred.column, pred.ids, pred.scores)
    mapping = {item: ("even" if k % 2 == 0 else "odd") for k, item in enumerate(pred.ids)}
    res = analyse(plain, gold, by="parity", groups=mapping, min_gold=5)
    assert [r["group"] for r in res["groups"]] == ["even", "odd"] and len(res["differences"]) == 1
    assert "no multiple-comparison correction" in res["correction"]
    del mapping["t5"]
    with pytest.raises(DataError, match=r"1 PRED id\(s\) have no 'parity' in the groups file \(t5\)"):
        analyse(plain, gold, by="parity", groups=mapping, min_gold=5)
    with pytest.raises(DataError, match="give the groups with --groups FILE"):
        analyse(plain, gold, by="parity")
