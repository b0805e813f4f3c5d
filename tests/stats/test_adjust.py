"""Adjusted p values (Holm, Benjamini-Hochberg, Bonferroni) against hand-computed cases, and their ordering."""

import math

import numpy as np
import pytest
from scipy import stats

from biaslab.stats import adjust_pvalues
from biaslab.stats.adjust import METHODS


def test_holm_by_hand():
    # m = 3, sorted 0.01, 0.03, 0.04 times 3, 2, 1: 0.03, 0.06, 0.04; running maximum: 0.03, 0.06, 0.06
    assert adjust_pvalues([0.01, 0.04, 0.03], "holm") == pytest.approx([0.03, 0.06, 0.06])
    # capped at 1: 2 x 0.5 = 1.0, max(1.0, 1 x 0.6) = 1.0
    assert adjust_pvalues([0.5, 0.6], "holm") == pytest.approx([1.0, 1.0])


def test_bh_by_hand_with_the_step_up_minimum():
    # m = 5, sorted 0.005, 0.011, 0.039, 0.04, 0.3 at ranks 1..5; m p / rank:
    #   5 x 0.005 / 1 = 0.025, 5 x 0.011 / 2 = 0.0275, 5 x 0.039 / 3 = 0.065, 5 x 0.04 / 4 = 0.05, 5 x 0.3 / 5 = 0.3
    # minimum from the top: 0.3; 0.05; min(0.065, 0.05) = 0.05 (monotonicity); min(0.0275, 0.05) = 0.0275; 0.025
    q = adjust_pvalues([0.005, 0.04, 0.011, 0.3, 0.039], "bh")
    assert q == pytest.approx([0.025, 0.05, 0.0275, 0.3, 0.05])
    # m = 4, sorted 0.01, 0.03, 0.04, 0.5: 0.04, 0.06, 0.0533, 0.5 -> 0.04, 0.0533, 0.0533, 0.5
    assert adjust_pvalues([0.01, 0.04, 0.03, 0.5], "bh") == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])


def test_bh_agrees_with_scipy():
    p = [0.01, 0.04, 0.03, 0.5, 0.2, 0.0001, 0.9]
    np.testing.assert_allclose(adjust_pvalues(p, "bh"), stats.false_discovery_control(p))


def test_bonferroni_and_none_by_hand():
    # m = 3: 3 x (0.01, 0.3, 0.04) = 0.03, 0.9, 0.12; 3 x 0.5 = 1.5 -> 1
    assert adjust_pvalues([0.01, 0.3, 0.04], "bonferroni") == pytest.approx([0.03, 0.9, 0.12])
    assert adjust_pvalues([0.5, 0.01, 0.2], "bonferroni") == pytest.approx([1.0, 0.03, 0.6])
    assert adjust_pvalues([0.01, None, 0.3], "none") == [0.01, None, 0.3]


def test_ties_get_the_same_adjusted_value():
    # Holm, m = 3: 3 x 0.02 = 0.06, max(0.06, 2 x 0.02) = 0.06, max(0.06, 1 x 0.5) = 0.5
    assert adjust_pvalues([0.02, 0.02, 0.5], "holm") == pytest.approx([0.06, 0.06, 0.5])
    # BH, m = 3: 3 x 0.02 / 1 = 0.06, 3 x 0.02 / 2 = 0.03, 3 x 0.5 / 3 = 0.5 -> minimum from the top: 0.03, 0.03, 0.5
    assert adjust_pvalues([0.02, 0.02, 0.5], "bh") == pytest.approx([0.03, 0.03, 0.5])
    assert adjust_pvalues([0.5, 0.02, 0.02], "bh") == pytest.approx([0.5, 0.03, 0.03])


def test_missing_entries_are_dropped_by_default():
    # None and NaN stay None and do not count: m = 2 -> BH 2 x 0.02 / 1 = 0.04, 2 x 0.04 / 2 = 0.04;
    # Holm 2 x 0.02 = 0.04, max(0.04, 1 x 0.04) = 0.04
    for method in ("bh", "holm"):
        q = adjust_pvalues([0.02, None, float("nan"), 0.04], method)
        assert q[1] is None and q[2] is None
        assert q[0] == pytest.approx(0.04) and q[3] == pytest.approx(0.04)
    assert adjust_pvalues([None, math.inf], "holm") == [None, None]


def test_missing_entries_as_one_keep_their_share():
    # missing="as_one": None counts as p = 1, so m = 3.
    # Holm: sorted 0.02, 0.04, 1 times 3, 2, 1: 0.06, 0.08, 1.0
    assert adjust_pvalues([0.02, None, 0.04], "holm", missing="as_one") == pytest.approx([0.06, 1.0, 0.08])
    # BH: 3 x 0.02 / 1 = 0.06, 3 x 0.04 / 2 = 0.06, 3 x 1 / 3 = 1.0
    assert adjust_pvalues([0.02, float("nan"), 0.04], "bh", missing="as_one") == pytest.approx([0.06, 1.0, 0.06])


@pytest.mark.parametrize("method", METHODS)
def test_one_value_and_empty_families(method):
    assert adjust_pvalues([0.2], method) == [0.2]  # m = 1: nothing to adjust
    assert adjust_pvalues([], method) == []
    assert adjust_pvalues(np.array([]), method) == []
    assert adjust_pvalues([None, None], method) == [None, None]


def test_results_are_plain_floats():
    q = adjust_pvalues(np.array([0.01, 0.2]), "bh")
    assert all(type(v) is float for v in q)


def test_an_unknown_method_names_the_known_ones():
    with pytest.raises(ValueError, match="holm, bh, bonferroni, none") as err:
        adjust_pvalues([0.1], "fdr")
    assert "\n" not in str(err.value) and "'fdr'" in str(err.value)
    with pytest.raises(ValueError, match="drop, as_one"):
        adjust_pvalues([0.1], "holm", missing="zero")  # type: ignore[call-overload]


def test_holm_is_never_below_bh_and_both_lie_between_p_and_one():
    rng = np.random.default_rng(0)
    eps = 1e-12  # m p / m may differ from p in the last bit
    for _ in range(300):
        m = int(rng.integers(1, 30))
        p = rng.uniform(0, 1, m) * rng.choice([1.0, 0.05])  # some families all small, where the adjustment bites
        p = np.round(p, int(rng.integers(1, 6)))  # rounding makes ties
        pv: list[float | None] = [None if rng.uniform() < 0.1 else float(x) for x in p]
        holm, bh, bonf = (adjust_pvalues(pv, method) for method in ("holm", "bh", "bonferroni"))
        for raw, h, b, f in zip(pv, holm, bh, bonf):
            if raw is None:
                assert h is None and b is None and f is None
                continue
            assert h is not None and b is not None and f is not None
            assert raw <= b + eps and b <= h + eps and h <= f + eps and f <= 1.0
