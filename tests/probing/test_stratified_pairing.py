import numpy as np

from biaslab.compare.paired_data import paired_data
from biaslab.probes.business_vocabulary.metrics import business_vocabulary_metrics
from biaslab.probes.business_vocabulary.probe import BusinessVocabularyProbe, item_table
from biaslab.probing.stratified_pairing import StratifiedPairing


def _rows(shift):
    rows = []
    for name, gender in (("Al", "male"), ("Bo", "male"), ("Cy", "female"), ("Di", "female"), ("Ed", "male")):
        for doc in ("reference", "review"):
            male = 3 + (shift if gender == "male" else 0)
            ev = {inv: [male, 2] for inv in ("bsri", "epaq", "gaucher", "gest", "nicolas", "wan")}
            rows.append({"item_id": f"{doc}/{name}", "name": name, "gender": gender, "template": doc, "evaluation": ev})
    return rows


def test_clusters_are_names_within_gender_and_compare_pairs_them():
    pairing = BusinessVocabularyProbe.pairing
    table = pairing.table(_rows(0))
    units, strata = pairing.clusters(table.columns)
    assert [u.tolist() for u in units] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert strata == ["male", "male", "female", "female", "male"]
    data = paired_data(pairing, _rows(0), _rows(4)[::-1])  # run B's rows in another order: aligned by item id
    assert data.unit == "names (within gender)" and data.n_shared == 10
    assert np.array_equal(data.a["name"], data.b["name"])
    diff = data.fn(data.b)["mean_diff"] - data.fn(data.a)["mean_diff"]
    assert diff > 0


def test_without_strata_or_clusters_every_row_is_its_own_unit():
    pairing = StratifiedPairing("x", "rows", item_table, business_vocabulary_metrics)
    assert pairing.clusters({"item_id": np.array(["a", "b"])}) is None
    by_stratum = StratifiedPairing("x", "rows", item_table, business_vocabulary_metrics, stratum="gender")
    units, strata = by_stratum.clusters({"item_id": np.array(["a", "b"]), "gender": np.array(["m", "f"])})
    assert [u.tolist() for u in units] == [[0], [1]] and strata == ["m", "f"]
