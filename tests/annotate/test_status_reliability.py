"""The admin status's "reliability so far": a reason, never a figure without its spread, while the
annotations are too few."""

import numpy as np
import pandas as pd

from biaslab.annotate import status


def frame(n_tuples, per_tuple, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tuples):
        items = [f"{t}-{j}" for j in range(4)]
        for _ in range(per_tuple):
            b, w = rng.choice(4, 2, replace=False)
            rows.append([*items, items[b], items[w]])
    return pd.DataFrame(rows, columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"])


def test_too_few_tuples_annotated_twice_give_a_note(monkeypatch):
    monkeypatch.setattr(status, "annotations_frame", lambda db: frame(4, 2))
    rel = status._reliability(None)
    assert rel["tuples_with_2_or_more"] == 4 and "pearson_mean" not in rel
    assert rel["note"] == "too few judgements: 4 tuples with two or more annotations (split-half reliability needs 10)"


def test_enough_tuples_give_mean_and_spread(monkeypatch):
    monkeypatch.setattr(status, "annotations_frame", lambda db: frame(40, 3))
    rel = status._reliability(None)
    assert "note" not in rel and rel["trials"] == status.SHR_TRIALS and rel["pearson_sd"] > 0
