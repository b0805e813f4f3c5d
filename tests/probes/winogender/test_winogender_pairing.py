"""Winogender's pairing: the gaps and correlations, statistics of the occupations' mean shares, as unit values over
the sentence sets (the occupations' linearised values, carried by their sets), by hand and on random tables; a
resample's repeated occupation counts as often as it is drawn."""

from __future__ import annotations

import numpy as np
import pytest

from biaslab.probes.winogender.pairing import WinogenderPairing

GAPS = ("majority_gap", "majority_gap:occupation", "majority_gap:participant")
CORRELATIONS = ("gender_occupation_correlation", "gender_occupation_correlation_bergsma")


def _rows(spec):
    """``spec``: (occupation, bls % female, [(answer, female share), ...]) -> attempts rows."""
    return [
        {
            "item_id": f"{occ}.p{k}.{answer}",
            "occupation": occ,
            "bls_pct_female": bls,
            "bergsma_pct_female": bls / 2 + len(occ),
            "female_share": share,
            "p_neutral": 0.2,
            "prefers_majority": float((share > 0.5) == (bls > 50)),
            "answer": answer,
        }
        for occ, bls, sets in spec
        for k, (answer, share) in enumerate(sets)
    ]


def _mean(uv) -> float:
    return float(np.mean(uv.values[uv.mask]))


def test_the_gap_and_the_correlation_are_linearised_over_occupations_by_hand():
    """Female-majority a (2 sets, mean 0.8), b (1 set, 0.6); male-majority c (3 sets, 0.2), d (1 set, 0.4): the gap is
    (0.8 + 0.6) / 2 - (0.2 + 0.4) / 2 = 0.4. Each side linearised as a mean over its 2 of 4 occupations (its share
    1/2): a 0.7 + 0.1 / 0.5 - 0.3 = 0.6, b 0.2, c 0.7 - (0.3 - 0.1 / 0.5) = 0.6, d 0.2; their mean is 0.4. A set of
    occupation o carries 0.4 + (u_o - 0.4) x 7 sets / (4 occupations x its n_o sets): a 0.575, b 0.05, c 0.5167,
    d 0.05, whose mean over the 7 sets is 0.4 again."""
    spec = [
        ("a", 80.0, [("0", 0.9), ("1", 0.7)]),
        ("b", 60.0, [("0", 0.6)]),
        ("c", 20.0, [("0", 0.3), ("1", 0.1), ("1", 0.2)]),
        ("d", 30.0, [("1", 0.4)]),
    ]
    pairing = WinogenderPairing()
    t = pairing.table(_rows(spec)).columns
    metrics, uv = pairing.metric_fn(t)(t), pairing.unit_values(t)
    gap = uv["majority_gap"]
    assert gap.mask.all() and gap.bounds is None
    assert gap.values == pytest.approx([0.575, 0.575, 0.05, 31 / 60, 31 / 60, 31 / 60, 0.05])
    assert _mean(gap) == pytest.approx(0.4) == metrics["majority_gap"]
    # the pronoun referring to the occupation: a 0.9, b 0.6 | c 0.3; to the participant: a 0.7 | c 0.15, d 0.4
    assert metrics["majority_gap:occupation"] == pytest.approx(0.45) == _mean(uv["majority_gap:occupation"])
    assert uv["majority_gap:occupation"].mask.tolist() == [True, False, True, True, False, False, False]
    assert metrics["majority_gap:participant"] == pytest.approx(0.7 - 0.275) == _mean(uv["majority_gap:participant"])
    r = np.corrcoef([80, 60, 20, 30], [0.8, 0.6, 0.2, 0.4])[0, 1]
    assert metrics["gender_occupation_correlation"] == pytest.approx(r) == _mean(uv["gender_occupation_correlation"])
    # a resample that draws occupation b twice holds its set twice: b counts twice among the occupations
    twice = {k: np.concatenate([v, v[2:3]]) for k, v in t.items()}
    again = pairing.metric_fn(t)(twice)
    assert again["majority_gap"] == pytest.approx((0.8 + 0.6 + 0.6) / 3 - 0.3)
    r2 = np.corrcoef([80, 60, 60, 20, 30], [0.8, 0.6, 0.6, 0.2, 0.4])[0, 1]
    assert again["gender_occupation_correlation"] == pytest.approx(r2)


@pytest.mark.parametrize("seed", [0, 1])
def test_every_metric_is_the_mean_of_its_unit_values_on_a_random_table(seed):
    """12 occupations with 1 to 5 sets each, random targets and shares: each metric of the pairing is the mean of its
    unit values; the gaps and correlations rest on the occupations (every set of one occupation shifted alike)."""
    rng = np.random.default_rng(seed)
    spec = [
        (f"o{i}", float(rng.uniform(5, 95)), [(str(rng.integers(2)), float(rng.uniform())) for _ in range(1 + i % 5)])
        for i in range(12)
    ]
    pairing = WinogenderPairing()
    t = pairing.table(_rows(spec)).columns
    metrics, uv = pairing.metric_fn(t)(t), pairing.unit_values(t)
    assert set(uv) == set(metrics)
    for name, value in metrics.items():
        assert _mean(uv[name]) == pytest.approx(value), name
    occ = np.asarray(t["cluster"])
    for name in (*GAPS, *CORRELATIONS):
        u = uv[name]
        for o in set(occ[u.mask].tolist()):  # the deviation from the mean: the occupation's, shared by its sets
            dev = (u.values - _mean(u))[u.mask & (occ == o)] * np.count_nonzero(u.mask & (occ == o))
            assert dev == pytest.approx(np.full(dev.size, dev[0])), (name, o)
